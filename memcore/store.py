"""The reference memory store: it owns add / retrieve / tick, a policy only reacts.

Retrieval is the generative-agents trio: ``score = (w_rec·recency + w_imp·importance
+ w_rel·relevance) / (w_rec + w_imp + w_rel) × strength`` with
``recency = recency_base ** (now - turn)``; top-k, ties broken by the newer entry.
One matrix-vector product over the embedding columns and a partial sort: no
Python loop over entries.

Persistence is a separate axis (``store.backend``): the numpy columns stay the compute
engine for every backend, a backend only mirrors them (``memcore.backends``). The
store commits a transaction at the end of every ``add`` (the insert and the removals it
triggered) and every ``tick`` (the whole consolidation, all or nothing), and at the end
of a ``retrieve`` only if it removed something: retrieval-time reinforcement (last
access, access count, a policy's score) reaches the backend at the next boundary, or
at ``flush()`` / ``close()``. ``MemoryStore.open`` reopens a SQLite store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

import numpy as np

from memcore.backends import BACKENDS, Backend, Snapshot, make_backend, unknown_backend
from memcore.columns import Columns
from memcore.embed import Embedder
from memcore.extract.base import Extractor
from memcore.forget_log import ForgetLog, make_batch
from memcore.importance import heuristic_importance
from memcore.policies.base import Policy, Removal, Removals
from memcore.text import tokenize, whitespace_tokens


@dataclass(frozen=True)
class StoreParams:
    """Retrieval weights and the store's pluggable axes.

    ``backend``: ``memory`` (default; nothing persisted) or ``sqlite`` (durable,
    transactional). ``path``: the SQLite file, which must not exist yet; empty (the
    default) is a private temporary file deleted when the store is closed or collected
    (so a job leaves no file behind unless given a path), ``":memory:"`` SQLite's
    in-memory database. Only a durable backend takes a path. ``log_keep``: how many
    of the newest forget records the in-memory log holds (-1: every one), so a
    long run's memory stays bounded; the counts per reason are always complete, and a
    durable backend stores every record.
    """

    w_recency: float = 0.15
    w_importance: float = 0.15
    w_relevance: float = 0.7
    recency_base: float = 0.999
    extractor: str = "auto"  # the learned tagger where trained for the workload, else teacher
    embedder: str = "hashing"
    backend: str = "memory"
    path: str = ""
    log_keep: int = 10_000  # forget records held in memory (newest); -1: all
    budget: int = 0         # most live entries whatever the policy (0: no budget)
    budget_tokens: int = 0  # most live tokens whatever the policy (0: no budget)
    extract_miss: float = 0.0         # extractor=noisy: share of slot assertions unlinked
    extract_false_merge: float = 0.0  # extractor=noisy: share linked to a wrong attribute

    def __post_init__(self) -> None:
        ws = (self.w_recency, self.w_importance, self.w_relevance)
        if min(ws) < 0 or sum(ws) <= 0:
            raise ValueError("retrieval weights must be non-negative with a positive sum")
        if not 0 < self.recency_base <= 1:
            raise ValueError(f"recency_base must be in (0, 1], got {self.recency_base}")
        if self.backend not in BACKENDS:
            raise ValueError(unknown_backend(self.backend))
        if self.log_keep < -1:
            raise ValueError(f"log_keep must be -1 (keep all) or >= 0, got {self.log_keep}")
        if self.budget < 0 or self.budget_tokens < 0:
            raise ValueError("budget and budget_tokens must be >= 0 (0: no budget)")
        rates = (self.extract_miss, self.extract_false_merge)
        if min(rates) < 0 or sum(rates) > 1:
            raise ValueError("extract_miss and extract_false_merge must be >= 0 and sum to "
                             f"at most 1, got {rates[0]} and {rates[1]}")
        if sum(rates) > 0 and self.extractor != "noisy":
            raise ValueError("extract_miss and extract_false_merge need extractor=noisy, "
                             f"not {self.extractor!r}")
        if self.path and self.backend == "memory":
            raise ValueError(f"path {self.path!r} needs a durable backend (backend=sqlite)")


def parse_tags(meta: Mapping[str, str] | None) -> list[str]:
    """The tags of an observation: its meta ``tags``, comma-separated."""
    raw = (meta or {}).get("tags", "")
    return [t.strip() for t in raw.split(",") if t.strip()]


@dataclass(frozen=True)
class Hit:
    eid: int
    obs_id: int
    text: str
    score: float


class MemoryStore:
    """Columnar memory with a pluggable forgetting policy and a forget log."""

    COMPACT_MIN_DEAD = 1024
    TOPK_SAMPLE = 2048  # retrieve: the newest rows that give the top-k floor

    def __init__(
        self,
        policy: Policy,
        embedder: Embedder,
        extractor: Extractor | None,
        params: StoreParams | None = None,
        backend: Backend | None = None,
    ) -> None:
        """``backend`` overrides the one ``params`` names (``open`` passes a reopened one).
        Raises ValueError when the backend cannot be created (e.g. its path exists)."""
        self.policy = policy
        self.embedder = embedder
        self.extractor = extractor
        self.params = params or StoreParams()
        p = self.params
        total = p.w_recency + p.w_importance + p.w_relevance
        self._w = (p.w_recency / total, p.w_importance / total, p.w_relevance / total)
        self._log_base = float(np.log(p.recency_base))
        self.cols = Columns(embedder.dim)
        self.forget_log = ForgetLog(self._log_keep())
        self._slot_ids: dict[str, int] = {}
        self._slot_names: list[str] = []
        self._slot_head: dict[int, int] = {}   # slot id -> row of its unsuperseded entry
        self._row_of_obs: dict[int, int] = {}
        self._next_eid = 0
        self.live_tokens = 0
        self.peak_size = 0
        self.backend = backend if backend is not None else make_backend(p.backend, p.path)
        self._scratch = np.empty((2, 0))
        self._rec = np.empty(0)
        self._rec_now: int | None = None
        self._rec_n = 0

    def _log_keep(self) -> int | None:
        keep = self.params.log_keep
        return None if keep < 0 else keep

    # -- size ---------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.cols.n_live

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._row_of_obs

    def slot_of(self, obs_id: int) -> str | None:
        """The slot the extractor assigned to a live observation (diagnostics)."""
        row = self._row_of_obs.get(obs_id)
        if row is None:
            return None
        sid = int(self.cols.slot[row])
        return None if sid < 0 else self._slot_names[sid]

    # -- write path ---------------------------------------------------------
    def add(self, text: str, t: int, obs_id: int | None = None,
            meta: Mapping[str, str] | None = None) -> int:
        """Store one observation; returns its entry id."""
        cols = self.cols
        slot = self.extractor.extract(text) if self.extractor is not None else None
        sid = -1
        if slot is not None:
            sid = self._slot_ids.get(slot, -1)
            if sid < 0:  # a slot seen for the first time: intern it
                sid = self._slot_ids[slot] = len(self._slot_names)
                self._slot_names.append(slot)
            head = self._slot_head.get(sid)
            if head is not None:
                cols.superseded[head] = True
        row = cols.append(self.embedder.embed(text))
        eid = self._next_eid
        self._next_eid += 1
        obs = eid if obs_id is None else obs_id
        cols.eid[row] = eid
        cols.obs_id[row] = obs
        cols.turn[row] = t
        cols.importance[row] = heuristic_importance(tokenize(text))
        cols.slot[row] = sid
        cols.ntok[row] = whitespace_tokens(text)
        cols.last_access[row] = t
        cols.tags[row] = cols.tag_mask(parse_tags(meta))
        cols.texts[row] = text
        if sid >= 0:
            self._slot_head[sid] = row
        self._row_of_obs[obs] = row
        self.live_tokens += int(cols.ntok[row])
        self._apply(self.policy.on_add(cols, row, t), t)
        if self.params.budget or self.params.budget_tokens:
            self._apply(self._over_budget(t), t)
        self.peak_size = max(self.peak_size, cols.n_live)
        self.backend.commit(cols, self._slot_names, self.peak_size)
        return eid

    def _over_budget(self, now: int) -> Removal | None:
        """The uniform budget: while the store holds more than ``budget`` entries or
        ``budget_tokens`` tokens, the entry of lowest strength goes (the policy's
        ranking strength, 1 for a policy without one; the older first on a tie)."""
        cols, p = self.cols, self.params
        excess_n = cols.n_live - p.budget if p.budget else 0
        excess_tok = self.live_tokens - p.budget_tokens if p.budget_tokens else 0
        if excess_n <= 0 and excess_tok <= 0:
            return None
        live = np.flatnonzero(cols.live[: cols.n])
        strength = self.policy.strength(cols, now)
        s = np.ones(len(live)) if strength is None else np.asarray(strength)[live]
        weakest = np.lexsort((cols.eid[live], s))  # lowest strength, then oldest
        k = max(excess_n, 0)
        if excess_tok > 0:  # enough of the weakest to bring the tokens under the budget
            freed = np.cumsum(cols.ntok[live[weakest]])
            k = max(k, int(np.searchsorted(freed, excess_tok)) + 1)
        return Removal(live[weakest[:k]], "budget", s[weakest[:k]])

    def forget(self, obs_ids: Sequence[int], now: int, reason: str) -> None:
        """Remove live observations on the caller's decision (a harness-side policy such
        as the oracle), through the same removal path and forget log as a policy's."""
        rows = np.array([self._row_of_obs[o] for o in obs_ids], dtype=np.int64)
        if self._apply(Removal(rows, reason, np.full(len(rows), np.nan)), now):
            self.backend.commit(self.cols, self._slot_names, self.peak_size)

    def tick(self, now: int) -> None:
        self._apply(self.policy.on_tick(self.cols, now), now)
        self.backend.commit(self.cols, self._slot_names, self.peak_size)

    # -- durability ---------------------------------------------------------
    def flush(self) -> None:
        """Commit what the backend has not written yet (retrieval reinforcement)."""
        self.backend.commit(self.cols, self._slot_names, self.peak_size)

    def close(self) -> None:
        """Flush and release the backend (a temporary SQLite file is deleted)."""
        self.flush()
        self.backend.close()

    def __enter__(self) -> MemoryStore:
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
    ) -> MemoryStore:
        """Reopen the durable store at ``path`` (``params.backend``, sqlite by default).

        Restored: every live entry with all its columns (the embedding is recomputed with
        ``embedder``), the slot links (supersession), the tags, a policy's score / tier /
        since columns, access counts and last accesses as of the last commit, the forget
        log in order, the next entry id and the peak size. Not restored: reinforcement
        since the last commit, the rows of removed entries awaiting compaction (the
        reopened columns are compact), tag bit order (tags match by name), and any state
        a policy keeps outside the columns (none of the registered policies do).
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
        cols = self.cols
        for e in snap.entries:
            row = cols.append(self.embedder.embed(e.text))
            sid = -1
            if e.slot is not None:
                sid = self._slot_ids.setdefault(e.slot, len(self._slot_ids))
                if sid == len(self._slot_names):
                    self._slot_names.append(e.slot)
                if not e.superseded:   # the live, unsuperseded entry of a slot is its head
                    self._slot_head[sid] = row
            cols.eid[row] = e.eid
            cols.obs_id[row] = e.obs_id
            cols.turn[row] = e.turn
            cols.importance[row] = e.importance
            cols.superseded[row] = e.superseded
            cols.slot[row] = sid
            cols.ntok[row] = whitespace_tokens(e.text)
            cols.last_access[row] = e.last_access
            cols.access_count[row] = e.access_count
            cols.tags[row] = cols.tag_mask(list(e.tags))
            cols.score[row] = e.score
            cols.tier[row] = e.tier
            cols.since[row] = e.since
            cols.texts[row] = e.text
            self._row_of_obs[e.obs_id] = row
            self.live_tokens += int(cols.ntok[row])
        self.forget_log = ForgetLog.from_records(snap.forgotten, self._log_keep())
        last = max((e.eid for e in snap.entries), default=-1)
        self._next_eid = max([last, *(r.eid for r in snap.forgotten)]) + 1
        self.peak_size = max(snap.peak_size, cols.n_live)

    # -- the one removal path -----------------------------------------------
    def _apply(self, removals: Removals, now: int) -> bool:
        """Apply a hook's removals, all or none: every row must be live and named once
        across them, checked before anything is removed. Returns whether any was."""
        if removals is None:
            return False
        batch = [r for r in (removals if isinstance(removals, list) else [removals])
                 if len(r.rows)]
        if not batch:
            return False
        cols = self.cols
        rows = batch[0].rows if len(batch) == 1 else np.concatenate([r.rows for r in batch])
        if not cols.live[rows].all():
            raise RuntimeError(f"policy {self.policy.name!r} asked to remove a dead entry")
        if len(rows) > 1 and len(np.unique(rows)) < len(rows):
            raise RuntimeError(f"policy {self.policy.name!r} asked to remove an entry twice")
        for removal in batch:
            self._remove(removal, now)
        if cols.n - cols.n_live >= max(self.COMPACT_MIN_DEAD, cols.n_live):
            self._compact()
        return True

    def _remove(self, removal: Removal, now: int) -> None:
        cols = self.cols
        rows = removal.rows
        batch = make_batch(
            eid=cols.eid[rows].copy(), obs_id=cols.obs_id[rows].copy(), reason=removal.reason,
            score=np.asarray(removal.scores, dtype=np.float64), turn=now,
            age=now - cols.turn[rows], last_access=cols.last_access[rows].copy(),
            texts=[cols.texts[r] for r in rows], merged_into=removal.merged_into,
        )
        self.forget_log.add(batch)
        self.backend.on_remove(batch)
        cols.live[rows] = False
        cols.n_live -= len(rows)
        self.live_tokens -= int(cols.ntok[rows].sum())
        for r in rows.tolist():
            del self._row_of_obs[int(cols.obs_id[r])]
            sid = int(cols.slot[r])
            if sid >= 0 and self._slot_head.get(sid) == r:
                del self._slot_head[sid]

    def _compact(self) -> None:
        self._rec_now = None  # rows moved: the kept recencies no longer line up
        old_rows = self.cols.compact()
        self.backend.on_compact(old_rows)
        new_of_old = {int(old): new for new, old in enumerate(old_rows)}
        self._row_of_obs = {o: new_of_old[r] for o, r in self._row_of_obs.items()}
        self._slot_head = {s: new_of_old[r] for s, r in self._slot_head.items()}

    # -- read path ----------------------------------------------------------
    def relevance(self, text: str) -> np.ndarray:
        """Cosine of ``text`` with rows ``[0, n)``: one product over the query's dimensions."""
        q = self.embedder.embed(text)
        nz = np.flatnonzero(q)
        return q[nz] @ self.cols.dense(nz)

    def scores(self, text: str, now: int, relevance: np.ndarray | None = None) -> np.ndarray:
        """Retrieval score of rows ``[0, n)`` (dead rows get -inf)."""
        if relevance is None:
            relevance = self.relevance(text)
        return self._scores(now, relevance).copy()

    def _recency(self, now: int) -> np.ndarray:
        """``recency_base ** (now - turn)`` of rows ``[0, n)``, kept for the rows already
        computed at this ``now`` (several queries of one day, adds between them)."""
        cols, n = self.cols, self.cols.n
        if self._rec_now != now or len(self._rec) < cols.capacity:
            self._rec = np.empty(cols.capacity)
            self._rec_now, self._rec_n = now, 0
        done = self._rec_n
        if done < n:
            np.exp((now - cols.turn[done:n]) * self._log_base, out=self._rec[done:n])
            self._rec_n = n
        return self._rec[:n]

    def _scores(self, now: int, relevance: np.ndarray) -> np.ndarray:
        """``scores`` into a scratch buffer the next call overwrites (the hot path: no
        allocation per query; the same operations in the same order as ever)."""
        cols = self.cols
        n = cols.n
        if len(self._scratch[0]) < n:
            self._scratch = np.empty((2, cols.capacity))
        score, tmp = self._scratch[0, :n], self._scratch[1, :n]
        w_rec, w_imp, w_rel = self._w
        np.multiply(self._recency(now), w_rec, out=score)
        score += np.multiply(cols.importance[:n], w_imp, out=tmp)
        score += np.multiply(relevance, w_rel, out=tmp)
        strength = self.policy.strength(cols, now)
        if strength is not None:
            score *= strength
        if cols.n_live < n:
            score[~cols.live[:n]] = -np.inf
        return score

    def retrieve(self, text: str, now: int, k: int = 5) -> list[Hit]:
        """The top-k live entries for ``text`` at time ``now``."""
        cols = self.cols
        k = min(k, cols.n_live)
        if k <= 0:
            return []
        relevance = self.relevance(text)
        score = self._scores(now, relevance)
        n = cols.n
        cand = np.arange(n)
        if n > 2 * self.TOPK_SAMPLE:
            # The k-th best of the newest rows bounds the k-th best of all from below:
            # partition only the rows that reach it (same result).
            sample = score[n - self.TOPK_SAMPLE:]
            floor = np.partition(sample, len(sample) - k)[len(sample) - k]
            cand = np.flatnonzero(score >= floor)
        if k < len(cand):
            sub = score[cand]
            kth = np.partition(sub, len(sub) - k)[len(sub) - k]
            cand = cand[sub >= kth]
        order = cand[np.lexsort((-cand, -score[cand]))][:k]
        hits = [Hit(int(cols.eid[r]), int(cols.obs_id[r]), cols.texts[r], float(score[r]))
                for r in order]
        cols.last_access[order] = now
        cols.access_count[order] += 1
        if self._apply(self.policy.on_access(cols, order, now, relevance=relevance[order]),
                       now):
            self.backend.commit(cols, self._slot_names, self.peak_size)
        return hits
