"""Retrieval scoring and the columnar top-k of a ``MemoryStore`` (``Ranker``, ``Hit``).

Retrieval is the generative-agents trio: ``score = (w_rec·recency + w_imp·importance
+ w_rel·relevance) / (w_rec + w_imp + w_rel) × strength`` with
``recency = recency_base ** (now - turn)``; top-k, ties broken by the newer entry.
One matrix-vector product over the embedding columns and a partial sort: no
Python loop over entries. The ranker only reads the columns; what a retrieval changes
(reinforcement, a policy's ``on_access``) is the store's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcore.columns import Columns
from memcore.embed import Embedder
from memcore.params import StoreParams
from memcore.policies.base import Policy


@dataclass(frozen=True)
class Hit:
    eid: int
    obs_id: int
    text: str
    score: float


class Ranker:
    """Scores rows ``[0, n)`` of the columns for a query and picks the top k. Keeps
    scratch buffers and the recencies computed at the current time between calls."""

    TOPK_SAMPLE = 2048  # top_k: the newest rows that give the top-k floor

    def __init__(self, params: StoreParams, embedder: Embedder) -> None:
        self.embedder = embedder
        p = params
        total = p.w_recency + p.w_importance + p.w_relevance
        self._w = (p.w_recency / total, p.w_importance / total, p.w_relevance / total)
        self._log_base = float(np.log(p.recency_base))
        self._scratch = np.empty((2, 0))
        self._rec = np.empty(0)
        self._rec_now: int | None = None
        self._rec_n = 0

    def rows_moved(self) -> None:
        """The columns were compacted: the kept recencies no longer line up."""
        self._rec_now = None

    def relevance(self, cols: Columns, text: str) -> np.ndarray:
        """Cosine of ``text`` with rows ``[0, n)``: one product over the query's dimensions."""
        q = self.embedder.embed(text)
        nz = np.flatnonzero(q)
        return q[nz] @ cols.dense(nz)

    def _recency(self, cols: Columns, now: int) -> np.ndarray:
        """``recency_base ** (now - turn)`` of rows ``[0, n)``, kept for the rows already
        computed at this ``now`` (several queries of one day, adds between them)."""
        n = cols.n
        if self._rec_now != now or len(self._rec) < cols.capacity:
            self._rec = np.empty(cols.capacity)
            self._rec_now, self._rec_n = now, 0
        done = self._rec_n
        if done < n:
            np.exp((now - cols.turn[done:n]) * self._log_base, out=self._rec[done:n])
            self._rec_n = n
        return self._rec[:n]

    def scores(self, cols: Columns, policy: Policy, now: int,
               relevance: np.ndarray) -> np.ndarray:
        """Retrieval score of rows ``[0, n)`` (dead rows get -inf), into a scratch buffer
        the next call overwrites (the hot path: no allocation per query; the same
        operations in the same order as ever)."""
        n = cols.n
        if len(self._scratch[0]) < n:
            self._scratch = np.empty((2, cols.capacity))
        score, tmp = self._scratch[0, :n], self._scratch[1, :n]
        w_rec, w_imp, w_rel = self._w
        np.multiply(self._recency(cols, now), w_rec, out=score)
        score += np.multiply(cols.importance[:n], w_imp, out=tmp)
        score += np.multiply(relevance, w_rel, out=tmp)
        strength = policy.strength(cols, now)
        if strength is not None:
            score *= strength
        if cols.n_live < n:
            score[~cols.live[:n]] = -np.inf
        return score

    def top_k(self, score: np.ndarray, k: int) -> np.ndarray:
        """The rows of the ``k`` highest scores (``0 < k`` <= live rows), best first, a tie
        going to the newer row."""
        n = len(score)
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
        return cand[np.lexsort((-cand, -score[cand]))][:k]
