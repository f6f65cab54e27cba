"""The forget log: one record per removal, appended by the store's one removal path.

In memory it is columnar: one ``ForgetBatch`` (arrays) per ``Removal`` the store
applied, so millions of removals stay cheap. A durable backend mirrors every batch
(``memcore.backends``) in the same transaction that deletes the entries.

Memory stays bounded over long runs: the counts per reason are exact and kept
forever, but only the newest ``keep`` records are held in memory (``None``: all of
them); a durable backend keeps every record on disk.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class ForgetRecord:
    eid: int
    obs_id: int
    reason: str
    score: float
    turn: int       # when it was removed
    age: int        # turns since it was observed
    last_access: int
    text: str
    merged_into: int = -1  # the entry id it was merged into, or -1


@dataclass(frozen=True, eq=False)
class ForgetBatch:
    """The records of one applied ``Removal``: one reason, one removal time, arrays for
    the rest (``merged_into`` is -1 where the entry was not merged)."""

    eid: np.ndarray
    obs_id: np.ndarray
    reason: str
    score: np.ndarray
    turn: int
    age: np.ndarray
    last_access: np.ndarray
    texts: list[str]
    merged_into: np.ndarray

    def __len__(self) -> int:
        return len(self.eid)

    def records(self) -> list[ForgetRecord]:
        """The held records, oldest first."""
        return [
            ForgetRecord(e, o, self.reason, s, self.turn, a, la, text, into)
            for e, o, s, a, la, text, into in zip(
                self.eid.tolist(), self.obs_id.tolist(), self.score.tolist(),
                self.age.tolist(), self.last_access.tolist(), self.texts,
                self.merged_into.tolist(), strict=True,
            )
        ]


@lru_cache(maxsize=64)
def _not_merged(n: int) -> np.ndarray:
    """``merged_into`` of ``n`` entries none of which was merged: -1 each (read-only,
    shared: most removals are of one or a few entries)."""
    into = np.full(n, -1, dtype=np.int64)
    into.flags.writeable = False
    return into


_INT64, _FLOAT64 = np.dtype(np.int64), np.dtype(np.float64)


def as_int64(a: np.ndarray) -> np.ndarray:
    """``np.asarray(a, dtype=np.int64)``: ``a`` itself when it is one (no call into
    numpy: the usual batch of a few rows)."""
    return a if type(a) is np.ndarray and a.dtype is _INT64 else np.asarray(a, np.int64)


def _as_float64(a: np.ndarray) -> np.ndarray:
    return a if type(a) is np.ndarray and a.dtype is _FLOAT64 else np.asarray(a, np.float64)


def make_batch(
    *,
    eid: np.ndarray,
    obs_id: np.ndarray,
    reason: str,
    score: np.ndarray,
    turn: int,
    age: np.ndarray,
    last_access: np.ndarray,
    texts: list[str],
    merged_into: np.ndarray | None = None,
) -> ForgetBatch:
    """A batch with normalised dtypes (``merged_into`` defaults to -1 everywhere)."""
    into = _not_merged(len(eid)) if merged_into is None else as_int64(merged_into)
    return ForgetBatch(
        as_int64(eid), as_int64(obs_id), reason, _as_float64(score), int(turn),
        as_int64(age), as_int64(last_access), texts, into,
    )


# a removed entry's record, as ``ForgetRecord``'s fields in order (no arrays made)
One = tuple[int, int, str, float, int, int, int, str, int]


def _triples(batch: ForgetBatch | list[One]) -> list[tuple[int, str, float]]:
    """A removal's ``(obs_id, reason, score)`` per entry."""
    if isinstance(batch, list):
        return [(r[1], r[2], r[3]) for r in batch]
    return [(o, batch.reason, s) for o, s in zip(batch.obs_id.tolist(),
                                                 batch.score.tolist(), strict=True)]


@dataclass(eq=False)
class ForgetLog:
    """Append-only, columnar (one batch of arrays per applied removal, or the records'
    fields of one: ``add_records``). ``keep``: how many of the newest records to hold
    (at least; whole batches are dropped), ``None`` for all. ``len`` and ``counts`` cover
    every removal ever logged. ``listener``, when set, is called with each removal's
    ``(obs_id, reason, score)`` triples as it is logged (a job's evidence)."""

    keep: int | None = None
    listener: Callable[[list[tuple[int, str, float]]], None] | None = None
    _batches: deque[ForgetBatch | list[One]] = field(default_factory=deque)
    _n: int = 0
    _held: int = 0
    _counts: dict[str, int] = field(default_factory=dict)

    def add(self, batch: ForgetBatch) -> None:
        self._added(batch, batch.reason)

    def add_records(self, records: list[One]) -> None:
        """One applied removal as its records' fields (one reason, one time), held and
        dropped as ``add``'s batch of them would be."""
        self._added(records, records[0][2])

    def _added(self, batch: ForgetBatch | list[One], reason: str) -> None:
        batches, k = self._batches, len(batch)
        batches.append(batch)
        self._n += k
        self._held += k
        self._counts[reason] = self._counts.get(reason, 0) + k
        if self.listener is not None:
            self.listener(_triples(batch))
        if self.keep is not None:
            while batches and self._held - len(batches[0]) >= self.keep:
                self._held -= len(batches.popleft())

    def append(self, **fields: object) -> None:
        """Append one batch from its fields (see ``make_batch``)."""
        self.add(make_batch(**fields))  # type: ignore[arg-type]

    @classmethod
    def from_records(cls, records: Iterable[ForgetRecord], keep: int | None = None) -> ForgetLog:
        """A log of ``records`` in order (consecutive records with the same reason and
        removal time form one batch), holding the newest ``keep``."""
        log = cls(keep)
        run: list[ForgetRecord] = []

        def flush() -> None:
            if run:
                log.add(make_batch(
                    eid=np.array([r.eid for r in run]), obs_id=np.array([r.obs_id for r in run]),
                    reason=run[0].reason, score=np.array([r.score for r in run]),
                    turn=run[0].turn, age=np.array([r.age for r in run]),
                    last_access=np.array([r.last_access for r in run]),
                    texts=[r.text for r in run],
                    merged_into=np.array([r.merged_into for r in run]),
                ))
                run.clear()

        for rec in records:
            if run and (rec.reason, rec.turn) != (run[0].reason, run[0].turn):
                flush()
            run.append(rec)
        flush()
        return log

    def __len__(self) -> int:
        return self._n

    def counts(self) -> dict[str, int]:
        """Removals per reason, over every removal ever logged."""
        return dict(self._counts)

    @property
    def held(self) -> int:
        """How many records are held in memory (``len`` counts every removal)."""
        return self._held

    def eids(self) -> np.ndarray:
        """The entry id of every held record, in log order."""
        if not self._batches:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.array([r[0] for r in b], dtype=np.int64)
                               if isinstance(b, list) else b.eid for b in self._batches])

    def records(self) -> list[ForgetRecord]:
        """The held records, oldest first."""
        return [rec for batch in self._batches
                for rec in ([ForgetRecord(*r) for r in batch] if isinstance(batch, list)
                            else batch.records())]
