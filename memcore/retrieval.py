"""Retrieval scoring and the columnar top-k of a ``MemoryStore`` (``Ranker``, ``Hit``).

Retrieval is the generative-agents trio: ``score = (w_rec·recency + w_imp·importance
+ w_rel·relevance) / (w_rec + w_imp + w_rel) × strength`` with
``recency = recency_base ** (now - turn)``; top-k, ties broken by the newer entry.
The score less its relevance term (``ScoreBase``) is the same for every question of
one time, so it is kept from one to the next: the recency of an age comes from a table
of weighted recencies by age (read by turn, the table backwards, while every turn is a
time of the table), and the weighted importances and the turns' range are kept per row
(``RowsKept``): the same numbers, element for element, as ``w_rec·exp(age·ln base) +
w_imp·importance``.
A relevance looked up by text (``memcore.relevance_table``) or summed over the query's
dimensions' posting lists (one BLAS product for a dense embedder), and a partial sort:
no Python loop over entries. ``*_many`` do the same for
the questions of one time as matrices, element for element the same operations, so
the same numbers. The ranker only reads the columns; what a retrieval changes
(reinforcement, a policy's ``on_access``) is the store's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcore.columns import Columns, RowsKept
from memcore.embed import Embedder
from memcore.params import StoreParams
from memcore.policies.base import Policy
from memcore.relevance import KeptRelevance
from memcore.relevance_table import relevance_table


@dataclass(frozen=True)
class Hit:
    eid: int
    obs_id: int
    text: str
    score: float


class ScoreBase:
    """``w_rec·recency + w_imp·importance`` of rows ``[0, n)`` at a time (``at``)."""

    REC_TABLE_MAX = 1 << 22  # recencies of ages below this come from a table

    def __init__(self, w_rec: float, w_imp: float, recency_base: float) -> None:
        self._w_rec, self._w_imp = w_rec, w_imp
        self._log_base = float(np.log(recency_base))
        self._rec = np.empty(0)  # the values at ``_rec_now``, rows [0, ``_rec_n``)
        self._rec_now: int | None = None
        self._rec_n = 0
        self._rec_table = np.empty(0)  # w_rec·recency_base ** age for ages 0, 1, ...
        self._rec_rev = np.empty(0)  # the same, backwards
        # ``_kept``'s: the weighted importances, the rows they and the turns' range cover,
        # and the least and greatest turn
        self._imp, self._rows, self._turns = np.empty(0), RowsKept(), (2**63 - 1, -(2**63))

    def rows_moved(self) -> None:
        """The columns were compacted: the values kept at this time no longer line up."""
        self._rec_now = None

    def at(self, cols: Columns, now: int) -> np.ndarray:
        """``w_rec·recency_base ** (now - turn) + w_imp·importance`` of rows ``[0, n)``,
        the score less its relevance term, kept for the rows already computed at this
        ``now`` (several queries of one day, adds between them)."""
        n = cols.n
        if len(self._rec) < cols.capacity:
            self._rec = np.empty(cols.capacity)
            self._rec_now = None
        if self._rec_now != now:
            self._rec_now, self._rec_n = now, 0
        done = self._rec_n
        if done < n:
            out = self._rec[done:n]
            # the recency of an age is the same number wherever it is computed: from a
            # table of ages 0, 1, 2, ..., weighted
            lo, hi = self._kept(cols)
            rev = self._rec_rev  # (the table backwards: entry now - turn is age turn)
            if lo >= 0 and hi <= now < len(rev):  # every turn a time of the table's
                np.take(rev[len(rev) - 1 - now:], cols.turn[done:n], out=out, mode="clip")
            else:  # (as unsigned, a negative age is out of range)
                age = now - cols.turn[done:n]
                top = now - lo if hi <= now else int(age.view(np.uint64).max())
                table = self._rec_table
                if len(table) <= top < self.REC_TABLE_MAX:
                    size = max(1024, 1 << top.bit_length())
                    table = self._rec_table = np.multiply(
                        np.exp(np.arange(size) * self._log_base), self._w_rec)
                    self._rec_rev = np.ascontiguousarray(table[::-1])
                if top < len(table):  # (in range: "clip" only spares a buffered copy)
                    np.take(table, age, out=out, mode="clip")
                else:
                    np.multiply(np.exp(age * self._log_base), self._w_rec, out=out)
            out += self._imp[done:n]
            self._rec_n = n
        return self._rec[:n]

    def _kept(self, cols: Columns) -> tuple[int, int]:
        """The least and the greatest turn of rows ``[0, n)``, their ``w_imp·importance``
        kept in ``_imp``: only an add writes a row's importance and turn, so only the
        rows added since the last call are read (all of them again after a compaction,
        or for other columns)."""
        n, done = cols.n, self._rows.first_new(cols)
        if len(self._imp) < n:
            self._imp, done = np.empty(cols.capacity), 0
        lo, hi = self._turns if done else (2**63 - 1, -(2**63))
        if done < n:
            np.multiply(cols.importance[done:n], self._w_imp, out=self._imp[done:n])
            new = cols.turn[done:n].tolist()
            lo, hi = self._turns = min(lo, *new), max(hi, *new)
            self._rows.filled(cols)
        return lo, hi


class Ranker:
    """Scores rows ``[0, n)`` of the columns for a query and picks the top k. Keeps
    a scratch buffer and the score less its relevance term (``ScoreBase``) between
    calls."""

    TOPK_SAMPLE = 2048  # top_k: the newest rows that give the top-k floor
    TOPK_SAMPLE_MANY = 256  # top_k_many's sample (a batch scans its rows once)
    TOPK_GROUP = 16  # top_k: rows per group whose maxima give a floor
    TOPK_FEW = 64  # top_k: rows above a floor sorted whole (no partition)
    TOPK_RECENT = 8  # top_k: the last answers whose k-th best scores give a first floor
    SPARSE_DIMS = 64  # relevance: a query this sparse is summed over posting lists
    QUERY_TEXTS_KEPT = 4096  # query texts whose dimensions are kept

    def __init__(self, params: StoreParams, embedder: Embedder) -> None:
        self.embedder = embedder
        p = params
        total = p.w_recency + p.w_importance + p.w_relevance
        self._w = (p.w_recency / total, p.w_importance / total, p.w_relevance / total)
        self._base = ScoreBase(self._w[0], self._w[1], p.recency_base)
        self._scratch = np.empty(0)
        self._recent_kth = [-np.inf]  # top_k: the k-th best score of its last answers
        self._kept = KeptRelevance()
        self._dims_of: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._weighted_of: dict[str, tuple[int, np.ndarray]] = {}  # (``_weighted``)
        self._texts = relevance_table(embedder)

    def rows_moved(self) -> None:
        """The columns were compacted: the kept recencies and relevances no longer line up."""
        self._base.rows_moved()
        self._kept.clear()

    def relevance(self, cols: Columns, text: str) -> np.ndarray:
        """Cosine of ``text`` with rows ``[0, n)``.

        A sparse query (at most ``SPARSE_DIMS`` non-zero dimensions: the hashing
        embedder's) is looked up by the rows' texts where the store keeps their ids
        (``memcore.relevance_table``), else summed over its dimensions' posting lists
        (``Columns.dot``); both the same numbers on every CPU. A dense one is one BLAS
        product."""
        nz, weights = self._query_dims(text)
        if len(nz) > self.SPARSE_DIMS:
            return weights @ cols.dense(nz)
        ids = self._text_ids(cols)
        if ids is not None:  # by text: one gather (``memcore.relevance_table``)
            return self._by_text(text).take(ids)
        return cols.dot(nz, weights)

    def _by_text(self, text: str) -> np.ndarray:
        assert self._texts is not None
        known = self._texts.known(text)  # (no vector needed)
        if known is not None:
            return known
        return self._texts.relevance(text, self.embedder.embed(text))

    def _text_ids(self, cols: Columns) -> np.ndarray | None:
        """The text id of rows ``[0, n)``, given anew if the table started over since
        they were; None if the rows carry none (then relevance is summed per row)."""
        table = self._texts
        if table is None or cols.text_generation is None:
            return None
        n = cols.n
        if table.full():
            table.restart()
        if cols.text_generation != table.generation:
            embed, texts = self.embedder.embed, cols.texts
            if len(set(texts[:n])) > table.MAX_STORE_TEXTS:  # too many: sum per row
                cols.text_generation = None
                return None
            while cols.text_generation != table.generation:  # (at most twice)
                cols.text_generation = table.generation
                cols.text_id[:n] = [table.intern(t, embed(t)) for t in texts[:n]]
        return cols.text_id[:n]

    def _query_dims(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The non-zero dimensions of ``text``'s vector and their values, kept per text
        (questions recur)."""
        kept = self._dims_of.get(text)
        if kept is None:
            if len(self._dims_of) >= self.QUERY_TEXTS_KEPT:
                self._dims_of.clear()
            q = self.embedder.embed(text)
            nz = np.flatnonzero(q)
            kept = self._dims_of[text] = (nz, q[nz])
        return kept

    def relevance_many(self, cols: Columns, texts: list[str]) -> np.ndarray:
        """``relevance`` of each text, as one ``(len(texts), n)`` matrix (the same numbers):
        sparse queries by text (``memcore.relevance_table``), else from the relevances
        kept per text (``memcore.relevance``)."""
        queries = [self.embedder.embed(t) for t in texts]
        if all(len(self._query_dims(t)[0]) <= self.SPARSE_DIMS for t in texts):
            ids = self._text_ids(cols)
            if ids is not None:  # by text: one gather
                assert self._texts is not None
                return np.stack(self._texts.relevance_many(texts, queries)).take(ids, axis=1)
            kept = self._kept.get_many(cols, texts, queries)
            if kept is not None:
                return kept
        return np.stack([self.relevance(cols, t) for t in texts])

    def scores(self, cols: Columns, policy: Policy, now: int,
               relevance: np.ndarray) -> np.ndarray:
        """Retrieval score of rows ``[0, n)`` (dead rows get -inf), into a scratch buffer
        the next call overwrites (the hot path: no allocation per query)."""
        score = self._scratch_of(cols)
        # (w_rec·recency + w_imp·importance) + w_rel·relevance, the first two kept
        np.multiply(relevance, self._w[2], out=score)
        return self._plus_base(cols, policy, now, score)

    def scores_by_text(self, cols: Columns, policy: Policy, now: int, text: str
                       ) -> np.ndarray | None:
        """``scores(cols, policy, now, relevance(cols, text))`` where that relevance is
        looked up by text, with no relevance made: the question's relevances by text id
        weighted once (``_weighted``: the same products), gathered into the scratch
        buffer; None where it is not looked up by text."""
        nz, _ = self._query_dims(text)
        ids = None if len(nz) > self.SPARSE_DIMS else self._text_ids(cols)
        if ids is None:
            return None
        score = self._scratch_of(cols)
        self._weighted(text).take(ids, out=score, mode="clip")  # (ids in range: no copy)
        return self._plus_base(cols, policy, now, score)

    def _weighted(self, text: str) -> np.ndarray:
        """w_rel · the question's relevance to every text id (``_by_text``), kept per
        text until the table gives a new id or starts over."""
        values = self._by_text(text)
        assert self._texts is not None
        kept = self._weighted_of.get(text)
        if kept is None or kept[0] != self._texts.generation or len(kept[1]) != len(values):
            if len(self._weighted_of) >= self.QUERY_TEXTS_KEPT:
                self._weighted_of.clear()
            kept = self._weighted_of[text] = (self._texts.generation,
                                              np.multiply(values, self._w[2]))
        return kept[1]

    def _scratch_of(self, cols: Columns) -> np.ndarray:
        """The scratch buffer's rows ``[0, n)``."""
        if len(self._scratch) < cols.n:
            self._scratch = np.empty(cols.capacity)
        return self._scratch[: cols.n]

    def _plus_base(self, cols: Columns, policy: Policy, now: int, score: np.ndarray
                   ) -> np.ndarray:
        """``score`` (the relevance term) plus the kept rest, times the strength, dead
        rows at -inf."""
        n = cols.n
        score += self._base.at(cols, now)
        strength = policy.strength(cols, now)
        if strength is not None:
            score *= strength
        if cols.n_live < n:  # (by the dead rows' numbers where the columns know them)
            dead = cols.dead_rows()
            score[~cols.live[:n] if dead is None else dead] = -np.inf
        return score

    def scores_many(self, cols: Columns, policy: Policy, now: int,
                    relevance: np.ndarray) -> np.ndarray:
        """``scores`` for each row of ``relevance`` (``(m, n)``): the same operations per
        element, so the same numbers (a new array)."""
        n = cols.n
        score = np.multiply(relevance, self._w[2])
        score += self._base.at(cols, now)  # (a + b) + c, as ``scores`` adds them
        strength = policy.strength(cols, now)
        if strength is not None:
            score *= strength
        if cols.n_live < n:
            score[:, ~cols.live[:n]] = -np.inf
        return score

    def top_k_many(self, score: np.ndarray, k: int, live: np.ndarray | None = None
                   ) -> np.ndarray:
        """``top_k`` of each row of ``score`` (``(m, n)``), as an ``(m, k)`` matrix of rows:
        the same rows in the same order, ties included. Only the columns that reach a
        floor below each row's k-th best are sorted: the k-th best of the newest columns
        (a large store's best are mostly new), else each row's own k-th best among the
        ``live`` columns (``top_k``)."""
        m, n = score.shape
        s = self.TOPK_SAMPLE_MANY
        reach = None
        if n > s and k <= s:
            reach = score >= np.partition(score[:, n - s:], s - k, axis=1)[:, s - k, None]
        if reach is None or np.count_nonzero(reach) > 16 * k * m:
            # a small store, or one whose newest rows are not among the best (it keeps
            # its old entries)
            pool = score if live is None else score[:, live]
            reach = score >= np.partition(pool, pool.shape[1] - k, axis=1)[
                :, pool.shape[1] - k, None]
        query, rows = np.nonzero(reach)
        # by query, then best first, then the newer row first
        order = np.lexsort((-rows, -score[query, rows], query))
        query, rows = query[order], rows[order]
        first = np.searchsorted(query, np.arange(m))
        return rows[(first[:, None] + np.arange(k)).ravel()].reshape(m, k)

    def _above_group_floor(self, score: np.ndarray, k: int) -> np.ndarray | None:
        """The rows scoring at least a floor no higher than the k-th best score: the
        k-th highest of the maxima of groups of ``TOPK_GROUP`` rows (rows ``j``, ``j +
        w``, ``j + 2w``, ...), since k groups hold a row at least that high. ``None``
        when the store is too small to gain, or the floor is none (-inf: fewer than k
        groups hold a live row)."""
        g = self.TOPK_GROUP
        width = len(score) // g
        if width < 4 * k:
            return None
        # (the ufunc and array methods themselves: numpy's wrappers cost as much here)
        maxima = np.maximum.reduce(score[: g * width].reshape(g, width), axis=0)
        maxima.partition(width - k)
        floor = maxima[width - k]
        if not floor > -np.inf:  # (NaN too: then rank every live row)
            return None
        return (score >= floor).nonzero()[0]

    def top_k(self, score: np.ndarray, k: int, live: np.ndarray | None = None) -> np.ndarray:
        """The rows of the ``k`` highest scores (``0 < k`` <= live rows), best first, a tie
        going to the newer row. ``live`` (a mask of the rows, given when some are dead:
        their score is -inf) keeps the dead rows out of the partition, since numpy's
        introselect slows down on many equal values. A first floor is the least
        k-th best score of the last answers: any floor that k rows reach holds the top k,
        whatever its value (one too low or too high only costs a pass)."""
        n = len(score)
        # the least k-th best of the last answers (their scores vary little from one
        # question to the next): if k rows reach it, they hold the top k
        reach = (score >= min(self._recent_kth)).nonzero()[0]
        cand = reach if k <= len(reach) <= self.TOPK_FEW else None
        if cand is None and n > 2 * self.TOPK_SAMPLE and k <= self.TOPK_SAMPLE:
            # The k-th best of the newest rows bounds the k-th best of all from below:
            # partition only the rows that reach it (same result).
            sample = score[n - self.TOPK_SAMPLE:]
            cand = np.flatnonzero(score >= np.partition(sample, len(sample) - k)[len(sample) - k])
            if len(cand) > 2 * self.TOPK_SAMPLE:  # (dead rows among the newest)
                cand = None
        if cand is None and (live is None or 2 * np.count_nonzero(live) > n):
            # (a store mostly dead ranks its live rows: fewer than the groups scan)
            cand = self._above_group_floor(score, k)
        if cand is None:
            cand = np.arange(n) if live is None else np.flatnonzero(live)
        if len(cand) > self.TOPK_FEW and k < len(cand):  # those reaching the k-th best
            sub = score[cand]
            cand = cand[sub >= np.partition(sub, len(sub) - k)[len(sub) - k]]
        # by score, then the newer row first
        sub = score[cand]
        best = np.lexsort((-cand, -sub))[:k]
        self._recent(sub.item(best[-1]))
        return cand[best]

    def _recent(self, kth: float) -> None:
        """Keep an answer's k-th best score, among the last ``TOPK_RECENT``."""
        recent = self._recent_kth
        if len(recent) >= self.TOPK_RECENT:
            del recent[0]
        recent.append(kth)
