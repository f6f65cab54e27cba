"""Relevance by text: under the hashing embedder, the cosine of a question with an entry
is a function of their two texts, so a process computes it once per pair of texts.

A stream's entries repeat texts (a lifecycle stream adds about 2,400 entries of 620
texts), its questions recur (about 130 texts asked 1,450 times), and a sweep runs every
policy of a stream one after another in one process (``runner.sweep.order``). So
``RelevanceTable`` gives each entry text an id, the store keeps each row's id
(``Columns.text_id``), and the table keeps, per question text, its relevance to every
id so far: a question's relevance to a store's rows is one gather.

Every number is the one ``Columns.dot`` gives its row: a text's terms are summed by
``np.bincount`` in dimension order, from 0, each the same product of the two values;
the dimensions where the question is zero add +0.0, which changes no sum (the
embedder's values are non-negative, so no sum is -0.0). ``tests/test_relevance.py``
checks this against fresh sums. Only questions that ``Ranker`` sums sparsely (at most
``SPARSE_DIMS`` dimensions) use it; a denser one is one BLAS product.

Bounded: past ``MAX_TEXTS`` ids or ``MAX_FLOATS`` kept relevances the table starts over
(a new ``generation``: when a text is added, or before a store asks, never between two
questions of a batch), and a store whose rows carry ids of an older generation gives
them new ones before it asks (``Ranker``): a bounded store's few texts. A store with
more than ``MAX_STORE_TEXTS`` distinct texts sums its relevances per row instead.
"""

from __future__ import annotations

import numpy as np

from memcore.embed import Embedder, HashingEmbedder


class _Question:
    """A question text's vector and its relevance to ids ``[0, done)``."""

    __slots__ = ("done", "q", "values")

    def __init__(self, q: np.ndarray) -> None:
        self.q = q
        self.values = np.zeros(256)
        self.done = 0


class RelevanceTable:
    """The relevance of question texts to entry texts, for one embedding dimension."""

    MAX_TEXTS = 1 << 16
    MAX_FLOATS = 1 << 22  # 32 MiB of kept relevances
    MAX_QUESTIONS = 4096
    # a store with more distinct texts sums per row (so the table, started over, holds
    # 256 questions' relevances to them and a store's texts never fill it)
    MAX_STORE_TEXTS = 1 << 14
    CATCH_UP_FLOATS = 1 << 20  # terms summed at once (else question by question)

    def __init__(self) -> None:
        self.generation = 0
        self._start()

    def _start(self) -> None:
        self._ids: dict[str, int] = {}
        self._questions: dict[str, _Question] = {}
        self._floats = 0
        # every id's (dimension, value) pairs, id after id, in dimension order, and
        # where each id's pairs start
        self._pair_id = np.zeros(4096, dtype=np.int64)
        self._pair_dim = np.zeros(4096, dtype=np.int64)
        self._pair_val = np.zeros(4096)
        self._pairs = 0
        self._first_pair = np.zeros(1024, dtype=np.int64)

    def size(self) -> int:
        """The entry texts given an id in this generation."""
        return len(self._ids)

    def full(self) -> bool:
        return len(self._ids) >= self.MAX_TEXTS or self._floats >= self.MAX_FLOATS

    def restart(self) -> None:
        """Start over: a new generation, every id given before void."""
        self.generation += 1
        self._start()

    def intern(self, text: str, vec: np.ndarray) -> int:
        """The id of entry text ``text`` (embedded as ``vec``). May start the table over
        (a new generation: ids given before are void)."""
        tid = self._ids.get(text)
        if tid is not None:
            return tid
        if len(self._ids) >= self.MAX_TEXTS:
            self.restart()
        tid = len(self._ids)
        self._ids[text] = tid
        nz = np.flatnonzero(vec)
        end = self._pairs + len(nz)
        if end > len(self._pair_id):
            size = 2 * end
            self._pair_id = np.resize(self._pair_id, size)
            self._pair_dim = np.resize(self._pair_dim, size)
            self._pair_val = np.resize(self._pair_val, size)
        if tid >= len(self._first_pair):
            self._first_pair = np.resize(self._first_pair, 2 * len(self._first_pair))
        self._first_pair[tid] = self._pairs
        self._pair_id[self._pairs:end] = tid
        self._pair_dim[self._pairs:end] = nz
        self._pair_val[self._pairs:end] = vec[nz]
        self._pairs = end
        return tid

    def known(self, text: str) -> np.ndarray | None:
        """``relevance(text, q)`` when it needs no work (the question is asked again and
        no id is new since), else None: a question's vector is only needed to catch up."""
        question = self._questions.get(text)
        n = len(self._ids)
        return question.values[:n] if question is not None and question.done == n else None

    def relevance(self, text: str, q: np.ndarray) -> np.ndarray:
        """Question ``text`` (embedded as ``q``)'s relevance to every id so far, a view
        valid until the next call."""
        return self.relevance_many([text], [q])[0]

    def relevance_many(self, texts: list[str], qs: list[np.ndarray]) -> list[np.ndarray]:
        """``relevance`` of each text, the questions behind the newest ids caught up
        together (one ``np.bincount`` over (question, id)): views valid until the next
        call."""
        n = len(self._ids)
        asked: list[_Question] = []
        behind: dict[int, _Question] = {}
        for text, q in zip(texts, qs, strict=True):
            question = self._questions.get(text)
            if question is None:
                if len(self._questions) >= self.MAX_QUESTIONS:  # (ids stay valid)
                    self._questions.clear()
                    self._floats = 0
                question = self._questions[text] = _Question(q)
                self._floats += len(question.values)
            if question.done < n:
                behind[id(question)] = question
            asked.append(question)
        if behind:
            self._catch_up(list(behind.values()), n)
        return [question.values[:n] for question in asked]

    def _catch_up(self, group: list[_Question], n: int) -> None:
        """Each question's relevance to the ids from the first any of them lacks: the
        same terms, summed in the same order, as for one question alone (a value
        computed again is the same number)."""
        first = min(question.done for question in group)
        at = int(self._first_pair[first])
        if len(group) > 1 and len(group) * (self._pairs - at) > self.CATCH_UP_FLOATS:
            for question in group:  # (one by one, each from its own first)
                self._catch_up([question], n)
            return
        ids = self._pair_id[at:self._pairs] - first
        dims, vals = self._pair_dim[at:self._pairs], self._pair_val[at:self._pairs]
        width = n - first
        if len(group) == 1:
            sums = np.bincount(ids, group[0].q[dims] * vals, minlength=width)[None, :]
        else:
            terms = np.stack([question.q for question in group])[:, dims]
            terms *= vals
            where = (np.arange(len(group)) * width)[:, None] + ids
            sums = np.bincount(where.ravel(), terms.ravel(),
                               minlength=len(group) * width).reshape(len(group), width)
        for question, new in zip(group, sums, strict=True):
            if n > len(question.values):
                size = max(2 * len(question.values), n)
                self._floats += size - len(question.values)
                question.values = np.resize(question.values, size)
            question.values[first:n] = new
            question.done = n


_TABLES: dict[int, RelevanceTable] = {}


def relevance_table(embedder: Embedder) -> RelevanceTable | None:
    """The process's table for ``embedder``: the hashing embedder's, one per dimension
    (its vectors are a function of the text and the dimension); None for any other."""
    if type(embedder) is not HashingEmbedder:
        return None
    table = _TABLES.get(embedder.dim)
    if table is None:
        table = _TABLES[embedder.dim] = RelevanceTable()
    return table
