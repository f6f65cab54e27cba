"""The reference memory store: it owns add / retrieve / tick, a policy only reacts.

``MemoryStore`` is four jobs in four modules: the entries' bookkeeping (add with
supersession, tick, the budget, the one removal path that writes the forget log:
``memcore.bookkeeping``), durability (``memcore.durable``: flush, close, reopen),
retrieval (the weighted relevance / recency / importance score × strength and the
columnar top-k: ``memcore.retrieval``), and here what joins them: ``retrieve`` (rank,
then reinforce and let the policy react). Its parameters are
``memcore.params.StoreParams``; the columns of an entry are declared once, in
``memcore.fields``.

Persistence is a separate axis (``store.backend``): the numpy columns stay the compute
engine for every backend, a backend only mirrors them (``memcore.backends``). The
store commits a transaction at the end of every ``add`` (the insert and the removals it
triggered) and every ``tick`` (the whole consolidation, all or nothing), and at the end
of a ``retrieve`` only if it removed something: retrieval-time reinforcement (last
access, access count, a policy's score) reaches the backend at the next boundary, or
at ``flush()`` / ``close()``. ``MemoryStore.open`` reopens a SQLite store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from memcore.durable import Durable
from memcore.params import StoreParams
from memcore.policies.base import Policy
from memcore.retrieval import Hit, Ranker
from memcore.text import parse_tags

__all__ = ["Hit", "MemoryStore", "StoreParams", "parse_tags"]

A = TypeVar("A")  # one question's answer, as an in-turn caller wants it


class MemoryStore(Durable):
    """Columnar memory with a pluggable forgetting policy and a forget log."""

    @functools.cached_property
    def _ranker(self) -> Ranker:
        """The retrieval side (made on first use; an attribute from then on)."""
        return Ranker(self.params, self.embedder)

    # -- read path ----------------------------------------------------------
    def relevance(self, text: str) -> np.ndarray:
        """Cosine of ``text`` with rows ``[0, n)``: one product over the query's dimensions."""
        return self._ranker.relevance(self.cols, text)

    def scores(self, text: str, now: int, relevance: np.ndarray | None = None) -> np.ndarray:
        """Retrieval score of rows ``[0, n)`` (dead rows get -inf)."""
        if relevance is None:
            relevance = self.relevance(text)
        return self._ranker.scores(self.cols, self.policy, now, relevance).copy()

    def retrieve(self, text: str, now: int, k: int = 5) -> list[Hit]:
        """The top-k live entries for ``text`` at time ``now``; reinforces them (last
        access, access count) and lets the policy react (``on_access``)."""
        k = min(k, self.cols.n_live)
        if k <= 0:
            return []
        return self._answer(self.relevance(text), now, k)

    def retrieve_obs(self, text: str, now: int, k: int = 5) -> np.ndarray:
        """``retrieve``'s hits as their observation ids only, best first (no hit made);
        the same reinforcement."""
        k = min(k, self.cols.n_live)
        if k <= 0:
            return self._no_obs()
        score = self._ranker.scores_by_text(self.cols, self.policy, now, text)
        if score is None:
            return self._answer_obs(self.relevance(text), now, k)
        order = self._ranker.top_k(score, k, self._live_mask())
        obs = self.cols.obs_id[order]
        self._reinforce(order, now, None, text)  # (a relevance made for a hook only)
        return obs

    def _answer(self, relevance: np.ndarray, now: int, k: int) -> list[Hit]:
        """One question's top-k, given its relevance to every row; reinforces them and
        lets the policy react (after the hits are read: a removal can move the rows)."""
        cols = self.cols
        order, score = self._rank_one(relevance, now, k)
        texts = cols.texts
        hits = [Hit(e, o, texts[r], s) for e, o, r, s in zip(
            cols.eid[order].tolist(), cols.obs_id[order].tolist(), order.tolist(),
            score[order].tolist(), strict=True)]
        self._reinforce(order, now, relevance)
        return hits

    def _answer_obs(self, relevance: np.ndarray, now: int, k: int) -> np.ndarray:
        """``_answer``'s hits as their observation ids only (no hit made)."""
        order = self._rank_one(relevance, now, k)[0]
        obs = self.cols.obs_id[order]
        self._reinforce(order, now, relevance)
        return obs

    def _rank_one(self, relevance: np.ndarray, now: int, k: int
                  ) -> tuple[np.ndarray, np.ndarray]:
        """One question's top-k rows and the scores of rows ``[0, n)`` (a scratch buffer
        the next ranking overwrites)."""
        score = self._ranker.scores(self.cols, self.policy, now, relevance)
        return self._ranker.top_k(score, k, self._live_mask()), score

    def _reinforce(self, order: np.ndarray, now: int, relevance: np.ndarray | None,
                   text: str = "") -> None:
        """A retrieval's reinforcement of its hits ``order`` and the policy's reaction
        (``relevance``: the question's, else that of ``text``)."""
        cols = self.cols
        cols.last_access[order] = now
        cols.access_count[order] += 1
        if type(self.policy).on_access is Policy.on_access:  # (no hook: nothing to gather)
            return
        if relevance is None:
            relevance = self.relevance(text)
        if self._apply(self.policy.on_access(cols, order, now, relevance=relevance[order]),
                       now):
            self.backend.commit(cols, self._slot_names, self.peak_size)

    def retrieve_in_turn(self, texts: list[str], now: int, k: int = 5) -> list[list[Hit]]:
        """``[self.retrieve(text, now, k) for text in texts]``, the texts' relevances
        computed together: an answer can change a later one's scores (reinforcement),
        never its relevances. A removal that compacts the rows has the rest's computed
        afresh."""
        return self._in_turn(texts, now, k, self._answer, list)

    def obs_in_turn(self, texts: list[str], now: int, k: int = 5) -> np.ndarray:
        """``retrieve_in_turn``'s hits as observation ids, a row per text, best first, -1
        past its last hit (no hit made)."""
        answers = self._in_turn(texts, now, k, self._answer_obs, self._no_obs)
        ids = np.full((len(texts), max(map(len, answers), default=0)), -1, dtype=np.int64)
        for i, obs in enumerate(answers):
            ids[i, : len(obs)] = obs
        return ids

    @staticmethod
    def _no_obs() -> np.ndarray:
        return np.zeros(0, dtype=np.int64)

    def _in_turn(self, texts: list[str], now: int, k: int,
                 answer: Callable[[np.ndarray, int, int], A], empty: Callable[[], A]
                 ) -> list[A]:
        """Each text's ``answer`` in turn (``empty()`` for an empty store), the relevances
        computed together and afresh after a compaction."""
        out: list[A] = []
        relevance, first = None, 0
        for i in range(len(texts)):
            cols = self.cols
            k_i = min(k, cols.n_live)
            if k_i <= 0:
                out.append(empty())
                continue
            if relevance is None:
                relevance, first = self._ranker.relevance_many(cols, texts[i:]), i
            n = cols.n
            out.append(answer(relevance[i - first], now, k_i))
            if cols.n != n:  # compacted: the rows moved
                relevance = None
        return out

    def retrieve_many(self, texts: list[str], now: int, k: int = 5) -> list[list[Hit]]:
        """``[self.retrieve(text, now, k) for text in texts]``: the same hits, scores and
        reinforcement, in one batch when the policy declares that an answer cannot change
        a later one (``Policy.access_reranks``), else in turn (``retrieve_in_turn``)."""
        ranked = self.rank_many(texts, now, k)
        if ranked is None:
            return self.retrieve_in_turn(texts, now, k)
        cols = self.cols
        return [[Hit(int(cols.eid[r]), int(cols.obs_id[r]), cols.texts[r], s)
                 for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]
                for rows, scores in zip(*ranked, strict=True)]

    def rank_many(self, texts: list[str], now: int, k: int = 5
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """The rows and scores ``(m, k)`` that ``retrieve`` would give each text, best
        first, reinforced as it would reinforce them (query by query, each followed by
        the policy's ``on_access``); ``None``, with nothing done, when the policy's
        answers can change later ones (``Policy.access_reranks``): ask in turn."""
        if self.policy.access_reranks:
            return None
        cols = self.cols
        k = min(k, cols.n_live)
        if k <= 0:
            return np.zeros((len(texts), 0), dtype=np.int64), np.zeros((len(texts), 0))
        ranker = self._ranker
        relevance = ranker.relevance_many(cols, texts)
        score = ranker.scores_many(cols, self.policy, now, relevance)
        rows = ranker.top_k_many(score, k, self._live_mask())
        if type(self.policy).on_access is Policy.on_access:
            # no hook reads the columns between two questions: the batch's reinforcement
            # at once (``np.add.at`` counts a row each time it is returned)
            cols.last_access[rows.ravel()] = now
            np.add.at(cols.access_count, rows.ravel(), 1)
        else:
            for i, order in enumerate(rows):
                cols.last_access[order] = now
                cols.access_count[order] += 1
                if self._apply(self.policy.on_access(cols, order, now,
                                                     relevance=relevance[i, order]), now):
                    raise RuntimeError(
                        f"policy {self.policy.name!r} removed entries on access but declares "
                        "access_reranks = False: declare True (its queries are then answered "
                        "one by one)")
        return rows, np.take_along_axis(score, rows, axis=1)

    def ticks_change_nothing(self) -> bool:
        """True when ``tick`` can change nothing: the policy has no ``on_tick`` of its
        own and the backend is not durable (a durable one commits at a tick)."""
        return type(self.policy).on_tick is Policy.on_tick and not self.backend.durable

    def _live_mask(self) -> np.ndarray | None:
        """The live rows' mask for the top-k, when some rows are dead (else None)."""
        cols = self.cols
        return None if cols.n_live == cols.n else cols.live[:cols.n]

    def _compact(self) -> None:
        self._ranker.rows_moved()
        super()._compact()
