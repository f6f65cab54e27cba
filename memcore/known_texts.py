"""What an entry of a text is, whatever its time (``KnownTexts``): its vector, the
vector's non-zero dimensions, its importance and its token count.

Texts recur, within a store and across the stores of a worker's jobs, so a store keeps
each text's entry, and the process keeps the last store's: valid for another store
while its vector is the one that store's embedder hands out (the same read-only vector
object: ``memcore.embed``). Nothing is kept for an embedder that hands out a writeable
vector of its own each time.
"""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns, Sparse
from memcore.embed import Embedder
from memcore.importance import text_cost

Known = tuple[np.ndarray, Sparse | None, float, int]  # vector, its sparse form, imp., tokens

_PROCESS: dict[str, Known] = {}  # the last store's entry of each text


class KnownTexts:
    """A store's entries of the texts it has met (``kept``, dropped wholesale past
    ``limit``), and ``know`` for a text it has not."""

    LIMIT = 4096  # texts whose entry is kept, by a store and by the process

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.kept: dict[str, Known] = {}
        self.limit = self.LIMIT

    def know(self, text: str, cols: Columns) -> Known:
        """``text``'s entry (its sparse form as ``cols`` makes it), kept when its vector
        is read-only."""
        vec = self.embedder.embed(text)
        if vec.flags.writeable:  # (a vector of its own each time: nothing kept)
            return vec, None, *text_cost(text)
        known = _PROCESS.get(text)  # (another store's, of the same vector: the same)
        if known is None or known[0] is not vec:
            known = vec, cols.sparse_of(vec), *text_cost(text)
            if len(_PROCESS) >= self.limit:
                _PROCESS.clear()
            _PROCESS[text] = known
        if len(self.kept) >= self.limit:
            self.kept.clear()
        self.kept[text] = known
        return known
