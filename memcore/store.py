"""The reference memory store: it owns add / retrieve / tick, a policy only reacts.

Retrieval is the generative-agents trio: ``score = (w_rec·recency + w_imp·importance
+ w_rel·relevance) / (w_rec + w_imp + w_rel) × strength`` with
``recency = recency_base ** (now - turn)``; top-k, ties broken by the newer entry.
One matrix-vector product over the embedding columns and a partial sort: no
Python loop over entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from memcore.columns import Columns
from memcore.embed import Embedder
from memcore.extract.base import Extractor
from memcore.forget_log import ForgetLog
from memcore.importance import heuristic_importance
from memcore.policies.base import Policy, Removal, Removals
from memcore.text import tokenize, whitespace_tokens


@dataclass(frozen=True)
class StoreParams:
    """Retrieval weights and the store's pluggable axes."""

    w_recency: float = 0.15
    w_importance: float = 0.15
    w_relevance: float = 0.7
    recency_base: float = 0.999
    extractor: str = "auto"  # the learned tagger where trained for the workload, else teacher
    embedder: str = "hashing"

    def __post_init__(self) -> None:
        ws = (self.w_recency, self.w_importance, self.w_relevance)
        if min(ws) < 0 or sum(ws) <= 0:
            raise ValueError("retrieval weights must be non-negative with a positive sum")
        if not 0 < self.recency_base <= 1:
            raise ValueError(f"recency_base must be in (0, 1], got {self.recency_base}")


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

    def __init__(
        self,
        policy: Policy,
        embedder: Embedder,
        extractor: Extractor | None,
        params: StoreParams | None = None,
    ) -> None:
        self.policy = policy
        self.embedder = embedder
        self.extractor = extractor
        self.params = params or StoreParams()
        p = self.params
        total = p.w_recency + p.w_importance + p.w_relevance
        self._w = (p.w_recency / total, p.w_importance / total, p.w_relevance / total)
        self._log_base = float(np.log(p.recency_base))
        self.cols = Columns(embedder.dim)
        self.forget_log = ForgetLog()
        self._slot_ids: dict[str, int] = {}
        self._slot_names: list[str] = []
        self._slot_head: dict[int, int] = {}   # slot id -> row of its unsuperseded entry
        self._row_of_obs: dict[int, int] = {}
        self._next_eid = 0
        self.live_tokens = 0
        self.peak_size = 0

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
            sid = self._slot_ids.setdefault(slot, len(self._slot_ids))
            if sid == len(self._slot_names):
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
        self.peak_size = max(self.peak_size, cols.n_live)
        return eid

    def tick(self, now: int) -> None:
        self._apply(self.policy.on_tick(self.cols, now), now)

    # -- the one removal path -----------------------------------------------
    def _apply(self, removals: Removals, now: int) -> None:
        if removals is None:
            return
        for removal in removals if isinstance(removals, list) else [removals]:
            if len(removal.rows):
                self._remove(removal, now)
        cols = self.cols
        if cols.n - cols.n_live >= max(self.COMPACT_MIN_DEAD, cols.n_live):
            self._compact()

    def _remove(self, removal: Removal, now: int) -> None:
        cols = self.cols
        rows = removal.rows
        if not cols.live[rows].all():
            raise RuntimeError(f"policy {self.policy.name!r} asked to remove a dead entry")
        self.forget_log.append(
            eid=cols.eid[rows].copy(), obs_id=cols.obs_id[rows].copy(), reason=removal.reason,
            score=np.asarray(removal.scores, dtype=np.float64), turn=now,
            age=now - cols.turn[rows], last_access=cols.last_access[rows].copy(),
            texts=[cols.texts[r] for r in rows], merged_into=removal.merged_into,
        )
        cols.live[rows] = False
        cols.n_live -= len(rows)
        self.live_tokens -= int(cols.ntok[rows].sum())
        for r in rows.tolist():
            del self._row_of_obs[int(cols.obs_id[r])]
            sid = int(cols.slot[r])
            if sid >= 0 and self._slot_head.get(sid) == r:
                del self._slot_head[sid]

    def _compact(self) -> None:
        old_rows = self.cols.compact()
        new_of_old = {int(old): new for new, old in enumerate(old_rows)}
        self._row_of_obs = {o: new_of_old[r] for o, r in self._row_of_obs.items()}
        self._slot_head = {s: new_of_old[r] for s, r in self._slot_head.items()}

    # -- read path ----------------------------------------------------------
    def relevance(self, text: str) -> np.ndarray:
        """Cosine of ``text`` with rows ``[0, n)``: one product over the query's dimensions."""
        q = self.embedder.embed(text)
        nz = np.flatnonzero(q)
        return q[nz] @ self.cols.emb[nz, : self.cols.n]

    def scores(self, text: str, now: int, relevance: np.ndarray | None = None) -> np.ndarray:
        """Retrieval score of rows ``[0, n)`` (dead rows get -inf)."""
        cols = self.cols
        n = cols.n
        if relevance is None:
            relevance = self.relevance(text)
        recency = np.exp((now - cols.turn[:n]) * self._log_base)
        w_rec, w_imp, w_rel = self._w
        score = w_rec * recency + w_imp * cols.importance[:n] + w_rel * relevance
        strength = self.policy.strength(cols, now)
        if strength is not None:
            score = score * strength
        return np.where(cols.live[:n], score, -np.inf)

    def retrieve(self, text: str, now: int, k: int = 5) -> list[Hit]:
        """The top-k live entries for ``text`` at time ``now``."""
        cols = self.cols
        k = min(k, cols.n_live)
        if k <= 0:
            return []
        relevance = self.relevance(text)
        score = self.scores(text, now, relevance)
        n = cols.n
        if k < n:
            kth = np.partition(score, n - k)[n - k]
            cand = np.flatnonzero(score >= kth)
        else:
            cand = np.arange(n)
        order = cand[np.lexsort((-cand, -score[cand]))][:k]
        hits = [Hit(int(cols.eid[r]), int(cols.obs_id[r]), cols.texts[r], float(score[r]))
                for r in order]
        cols.last_access[order] = now
        cols.access_count[order] += 1
        self._apply(self.policy.on_access(cols, order, now, relevance=relevance[order]), now)
        return hits
