"""The durability of a ``MemoryStore`` (``Durable``): flush, close, and reopening a
durable store from its backend.

The numpy columns stay the compute engine for every backend; a backend only mirrors
them (``memcore.backends``), committing at the boundaries ``memcore.bookkeeping``
names. ``open`` reopens a SQLite store: every live entry with its persisted columns
(``memcore.fields``), the forget log, the next entry id and the peak size.
"""

from __future__ import annotations

import dataclasses
from types import TracebackType
from typing import Self

from memcore.backends import Snapshot, make_backend
from memcore.bookkeeping import Bookkeeping
from memcore.embed import Embedder
from memcore.extract.base import Extractor
from memcore.fields import PERSISTED
from memcore.forget_log import ForgetLog
from memcore.params import StoreParams
from memcore.policies.base import Policy
from memcore.text import whitespace_tokens


class Durable(Bookkeeping):
    """The entries' bookkeeping, flushed, closed and reopened; ``MemoryStore`` adds
    retrieval."""

    def flush(self) -> None:
        """Commit what the backend has not written yet (retrieval reinforcement)."""
        self.backend.commit(self.cols, self._slot_names, self.peak_size)

    def close(self) -> None:
        """Flush and release the backend (a temporary SQLite file is deleted)."""
        self.flush()
        self.backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @classmethod
    def open(
        cls,
        path: str,
        policy: Policy,
        embedder: Embedder,
        extractor: Extractor | None = None,
        params: StoreParams | None = None,
    ) -> Self:
        """Reopen the durable store at ``path`` (``params.backend``, sqlite by default).

        Restored: every live entry with all its persisted columns (``memcore.fields``) as
        of the last commit (the embedding is recomputed with ``embedder``), so the slot
        links (supersession), the tags, access counts and last accesses and a policy's
        own columns (score, tier, since); the forget log in order, the next entry id and
        the peak size. Not restored: reinforcement since the last commit, the rows of
        removed entries awaiting compaction (the reopened columns are compact), tag bit
        order (tags match by name), and any state a policy keeps outside the columns
        (none of the registered policies do).
        ValueError if ``path`` holds no store or an inconsistent one.
        """
        p = params or StoreParams()
        p = dataclasses.replace(p, backend="sqlite" if p.backend == "memory" else p.backend,
                                path=str(path))
        backend = make_backend(p.backend, p.path, reopen=True)
        problems = backend.problems()
        if problems:
            backend.close()
            raise ValueError(f"store {str(path)!r} is inconsistent: {'; '.join(problems)}")
        store = cls(policy, embedder, extractor, p, backend=backend)
        store._restore(backend.load())
        backend.resync(store.cols)
        return store

    def _restore(self, snap: Snapshot) -> None:
        """Fill the empty columns with a reopened backend's entries: the text, tags and
        slot through their codecs (embedding, tag bits, slot interning and heads), every
        other persisted field as it is, a column at a time."""
        cols, entries = self.cols, snap.entries
        start = cols.n
        for e in entries:
            row = cols.append(self.embedder.embed(e.text))
            sid = -1
            if e.slot is not None:
                sid = self._slot_ids.setdefault(e.slot, len(self._slot_ids))
                if sid == len(self._slot_names):
                    self._slot_names.append(e.slot)
                if not e.superseded:   # the live, unsuperseded entry of a slot is its head
                    self._slot_head[sid] = row
            cols.slot[row] = sid
            cols.tags[row] = cols.tag_mask(list(e.tags))
            cols.ntok[row] = whitespace_tokens(e.text)
            cols.texts[row] = e.text
            self._row_of_obs[e.obs_id] = row
            self.live_tokens += int(cols.ntok[row])
        rows = slice(start, cols.n)
        for f in PERSISTED:
            if f.codec == "value":
                getattr(cols, f.name)[rows] = [getattr(e, f.name) for e in entries]
        self.forget_log = ForgetLog.from_records(snap.forgotten, self._log_keep())
        last = max((e.eid for e in entries), default=-1)
        self._next_eid = max([last, *(r.eid for r in snap.forgotten)]) + 1
        self.peak_size = max(snap.peak_size, cols.n_live)
        if cols.text_generation is not None:  # (the rows' text ids are given when asked)
            cols.text_generation = -1
