"""Job state that stays small however long the stream: the harness's ground truth
per observation and the query-latency summary.

- ``TruthTable``: the true ``(slot, value)`` of every observation, as two int32
  arrays indexed by observation id (8 bytes an observation) over interned strings.
- ``LatencyStats``: a query's milliseconds summarised in O(1) memory: the exact mean,
  and the 95th percentile from a histogram with bins 1% wide (log-spaced from 1 µs
  to 1,000 s), reported at the bin's geometric middle: within 0.5% of the exact
  percentile of the same samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import numpy as np


class TruthTable(Mapping[int, tuple[str, str]]):
    """Observation id -> its true ``(slot, value)``; ids are issued 0, 1, 2, ..."""

    def __init__(self) -> None:
        self._slot = np.full(1024, -1, dtype=np.int32)
        self._value = np.full(1024, -1, dtype=np.int32)
        self._names: list[str] = []
        self._ids: dict[str, int] = {}
        self._n = 0

    def _intern(self, name: str) -> int:
        i = self._ids.get(name)
        if i is None:
            i = self._ids[name] = len(self._names)
            self._names.append(name)
        return i

    def set(self, obs: int, slot: str, value: str) -> None:
        """Record that observation ``obs`` asserts ``slot = value`` (ids without a call
        carry no truth)."""
        if obs >= len(self._slot):
            pad = np.full(max(obs + 1, 2 * len(self._slot)) - len(self._slot), -1,
                          dtype=np.int32)
            self._slot = np.concatenate([self._slot, pad])
            self._value = np.concatenate([self._value, pad])
        self._slot[obs] = self._intern(slot)
        self._value[obs] = self._intern(value)
        self._n = max(self._n, obs + 1)

    def judge(self, obs: np.ndarray, slots: list[str], values: list[str]
              ) -> tuple[np.ndarray, np.ndarray]:
        """For a matrix of observation ids, one row per query (-1: no hit), and each
        query's slot and value: which hits are correct (that slot, that value) and which
        stale (that slot, another value), as two boolean matrices: the judgement of
        ``runner.metrics.score_query``, hit for hit, in array operations."""
        valid = (obs >= 0) & (obs < len(self._slot))
        at = np.where(valid, obs, 0)
        slot = np.where(valid, self._slot[at], -1)
        value = self._value[at]
        q_slot = np.array([self._ids.get(x, -2) for x in slots], dtype=np.int64)[:, None]
        q_value = np.array([self._ids.get(x, -2) for x in values], dtype=np.int64)[:, None]
        on_slot = slot == q_slot
        return on_slot & (value == q_value), on_slot & (value != q_value)

    def get(self, obs: int, default: tuple[str, str] | None = None  # type: ignore[override]
            ) -> tuple[str, str] | None:
        """``self[obs]``, or ``default`` for an id without truth (no exception raised
        and caught: most hits of a query are distractors)."""
        if 0 <= obs < self._n:
            slot = self._slot.item(obs)  # (read as numbers: the hot path)
            if slot >= 0:
                return self._names[slot], self._names[self._value.item(obs)]
        return default

    def __getitem__(self, obs: int) -> tuple[str, str]:
        if not 0 <= obs < self._n or self._slot[obs] < 0:
            raise KeyError(obs)
        return self._names[self._slot[obs]], self._names[self._value[obs]]

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(self._slot[: self._n] >= 0).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._slot[: self._n] >= 0))


class LatencyStats:
    """Mean and 95th percentile of millisecond samples in O(1) memory."""

    LOW_MS = 1e-3
    RATIO = 1.01
    N_BINS = math.ceil(math.log(1e6 / LOW_MS) / math.log(RATIO)) + 1

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        # bin -> its samples, the bins met only (a job's latencies fill a few dozen): a
        # count a query with no numpy call, a quantile over the few bins met
        self.counts: dict[int, int] = {}
        self._log_ratio = math.log(self.RATIO)

    def add(self, ms: float) -> None:
        self.n += 1
        self.total += ms
        b = 0 if ms <= self.LOW_MS else int(math.log(ms / self.LOW_MS) / self._log_ratio) + 1
        if b >= self.N_BINS:
            b = self.N_BINS - 1
        counts = self.counts
        counts[b] = counts.get(b, 0) + 1

    def mean(self) -> float:
        return self.total / self.n if self.n else float("nan")

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (the sample of rank ``ceil(q·n)``), to within 0.5%."""
        if not self.n:
            return float("nan")
        rank = max(1, math.ceil(q * self.n))
        seen = 0
        for b in sorted(self.counts):  # the first bin whose cumulative count reaches it
            seen += self.counts[b]
            if seen >= rank:
                break
        if b == 0:
            return self.LOW_MS
        return self.LOW_MS * self.RATIO ** (b - 0.5)
