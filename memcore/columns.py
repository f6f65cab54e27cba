"""Columnar entry storage: one numpy array per field plus a live mask.

Rows ``[0, n)`` are in use; a removed row stays until ``compact()`` squeezes the
dead rows out (preserving order, so a lower row is always an older entry).

Embeddings are sparse (a text sets a few of the 512 hashed dimensions), so they are
stored as one posting list per dimension (the rows that use it, in row order, and
their values): about 100 bytes an entry instead of a dense 4 KiB column. ``dense``
rebuilds the dense rows of the dimensions a query uses, exactly the matrix a dense
dimension-major layout would hold, so products over it give the same numbers. A row
joins the posting lists when one is first read after its append: a store that looks
relevance up by text (``memcore.relevance_table``) never pays for them.

A reader that keeps values computed per row (a policy's strengths, the score less its
relevance term) says how far they reach with ``RowsKept``: only an add writes a row's
fields and only a compaction moves rows, so the kept rows stay valid until then.
"""

from __future__ import annotations

import numpy as np

from memcore.fields import ARRAYS, ColumnArrays

# a vector's non-zero dimensions (an array and a list) and their values
Sparse = tuple[np.ndarray, list[int], list[float]]
# read-only vectors seen by ``Columns.append`` (an embedder hands out one per text, for
# every job of the process): id -> (the vector, its non-zero dimensions as an array and
# a list, their values)
_SPARSE: dict[int, tuple[np.ndarray, np.ndarray, list[int], list[float]]] = {}


def _empty(dtype: type[np.generic]) -> np.ndarray:
    out = np.zeros(0, dtype=dtype)
    out.flags.writeable = False
    return out


# every dimension's posting arrays before its first posting (shared: a posting list
# grows into a new array, ``np.resize``)
_NO_ROWS, _NO_VALS = _empty(np.int64), _empty(np.float64)


class Columns(ColumnArrays):
    """Growable, compactable arrays of memory entries: one array per ``ARRAYS`` field
    (``memcore.fields``), under its name, plus the texts and the embeddings."""

    def __init__(self, dim: int, capacity: int = 256) -> None:
        self.dim = dim
        self.n = 0
        self.n_live = 0
        # the rows ``kill`` marked dead since the last compaction, in that order
        self._dead = np.zeros(64, dtype=np.int64)
        self._n_dead = 0
        # posting lists, one per dimension: rows (increasing) and values, their used
        # lengths, and the appends not moved into the arrays yet (plain lists: an add
        # appends to a few of them; a read of a dimension moves its appends first)
        self._post_rows = [_NO_ROWS] * dim
        self._post_vals = [_NO_VALS] * dim
        self._post_len = [0] * dim
        self._pend_rows: list[list[int]] = [[] for _ in range(dim)]
        self._pend_vals: list[list[float]] = [[] for _ in range(dim)]
        self.dims: list[np.ndarray] = []  # the non-zero dimensions of each row
        # each row's non-zero dimensions and values as lists; rows from ``_posted`` on
        # are in no posting list yet (a store that looks relevance up by text never
        # reads them: they are posted when one is read)
        self._sparse: list[tuple[list[int], list[float]]] = []
        self._posted = 0
        # the entries (row, dimension, value) appended since the last ``take_entries``,
        # for a reader that keeps sums over the rows (``memcore.relevance``)
        self._log_rows: list[int] = []
        self._log_dims: list[int] = []
        self._log_vals: list[float] = []
        self._log_start = 0  # the first row the log covers
        self._log_lost = True  # no reader yet (or it outgrew LOG_MAX): nothing is logged
        for f in ARRAYS:
            setattr(self, f.name, np.zeros(capacity, dtype=f.dtype))
        self.texts: list[str] = []
        self.tag_names: list[str] = []   # bit i of ``tags`` is tag_names[i]
        # the generation of the relevance table whose ids ``text_id`` holds (None: the
        # rows carry no text ids; -1: they must be given new ones)
        self.text_generation: int | None = None
        self.layout = 0  # compactions so far (a row's number changes at each)
        # the row the add of the newest row marked superseded, -1 if none (``append``
        # resets it, ``Bookkeeping.add`` sets it): what a policy's ``on_add`` needs to
        # know of supersession, without looking for it
        self.superseded_by_newest = -1

    MAX_TAGS = 63
    LOG_MAX = 1 << 16  # entries the log holds before it gives up (a reader recomputes)
    SPARSE_KEPT = 8192  # decomposed read-only vectors kept (then the lot is dropped)
    SPARSE_KEPT_DIMS = 64  # ... of at most this many dimensions (a dense one: each time)

    def take_entries(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
        """The entries appended since the last call, in append order (row, then
        dimension): the first row they cover, and their rows, dimensions and values;
        ``None`` on the first call (it starts the log), if there were too many to keep,
        or if the rows were compacted since."""
        if self._log_lost:
            self._drop_log(lost=False)
            return None
        out = (self._log_start, np.array(self._log_rows, dtype=np.int64),
               np.array(self._log_dims, dtype=np.int64), np.array(self._log_vals))
        self._drop_log(lost=False)
        return out

    def _drop_log(self, lost: bool) -> None:
        self._log_rows.clear()
        self._log_dims.clear()
        self._log_vals.clear()
        self._log_start = self.n
        self._log_lost = lost

    def tag_mask(self, names: list[str] | tuple[str, ...], add: bool = True) -> int:
        """The bit mask of ``names``; unseen names get a new bit (or none if ``add`` is
        False, so a lookup never grows the vocabulary)."""
        mask = 0
        for name in names:
            if name not in self.tag_names:
                if not add:
                    continue
                if len(self.tag_names) == self.MAX_TAGS:
                    raise ValueError(f"more than {self.MAX_TAGS} distinct tags")
                self.tag_names.append(name)
            mask |= 1 << self.tag_names.index(name)
        return mask

    @property
    def capacity(self) -> int:
        return len(self.eid)

    def _grow(self) -> None:
        cap = self.capacity * 2
        for f in ARRAYS:
            old = getattr(self, f.name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, f.name, new)

    def append(self, vec: np.ndarray,
               sparse: Sparse | None = None) -> int:
        """Reserve the next row with embedding ``vec`` (``sparse``: its ``sparse_of``, if
        the caller has it); the caller fills the fields."""
        if self.n == self.capacity:
            self._grow()
        row = self.n
        nz, dims, vals = self.sparse_of(vec) if sparse is None else sparse
        self._sparse.append((dims, vals))
        if not self._log_lost:
            self._log_rows.extend([row] * len(dims))
            self._log_dims.extend(dims)
            self._log_vals.extend(vals)
            if len(self._log_rows) > self.LOG_MAX:
                self._drop_log(lost=True)
        self.dims.append(nz)
        self.live[row] = True
        self.texts.append("")
        self.superseded_by_newest = -1
        self.n += 1
        self.n_live += 1
        return row

    def kill(self, row: int) -> None:
        """Mark live row ``row`` dead (its entry removed), as ``dead_rows`` knows."""
        self.live[row] = False
        self.n_live -= 1
        k = self._n_dead
        if k == len(self._dead):
            self._dead = np.resize(self._dead, 2 * k)
        self._dead[k] = row
        self._n_dead = k + 1

    def dead_rows(self) -> np.ndarray | None:
        """The dead rows of ``[0, n)`` (``kill``'s since the last compaction, a view), or
        None when ``live`` was written otherwise (their count is not ``n - n_live``)."""
        k = self._n_dead
        return self._dead[:k] if k == self.n - self.n_live else None

    def sparse_of(self, vec: np.ndarray) -> Sparse:
        """``vec``'s non-zero dimensions (an array and a list) and their values. Texts
        recur and an embedder hands out one read-only vector per text, so those are
        decomposed once per process, for every store (kept with the vector itself, so
        its ``id`` cannot be reused while kept); a writeable or dense vector is decomposed
        each time."""
        hit = _SPARSE.get(id(vec))
        if hit is not None and hit[0] is vec:
            return hit[1], hit[2], hit[3]
        nz = np.flatnonzero(vec)
        dims, vals = nz.tolist(), vec[nz].tolist()
        if not vec.flags.writeable and len(dims) <= self.SPARSE_KEPT_DIMS:
            nz.flags.writeable = False  # shared by the rows of that text (``dims``)
            if len(_SPARSE) >= self.SPARSE_KEPT:
                _SPARSE.clear()
            _SPARSE[id(vec)] = (vec, nz, dims, vals)
        return nz, dims, vals

    def _post(self) -> None:
        """Add the rows not posted yet to their dimensions' pending appends."""
        pend_rows, pend_vals, sparse = self._pend_rows, self._pend_vals, self._sparse
        for row in range(self._posted, self.n):
            dims, vals = sparse[row]
            for d, v in zip(dims, vals, strict=True):
                pend_rows[d].append(row)
                pend_vals[d].append(v)
        self._posted = self.n

    def _postings(self, d: int) -> int:
        """Move dimension ``d``'s pending appends into its arrays; its used length."""
        if self._posted < self.n:
            self._post()
        return self._moved(d)

    def _moved(self, d: int) -> int:
        """Move dimension ``d``'s pending appends (of posted rows) into its arrays; its
        used length."""
        at, pending = self._post_len[d], self._pend_rows[d]
        if pending:
            end = at + len(pending)
            if end > len(self._post_rows[d]):
                size = max(16, 2 * len(self._post_rows[d]), end)
                self._post_rows[d] = np.resize(self._post_rows[d], size)
                self._post_vals[d] = np.resize(self._post_vals[d], size)
            if end == at + 1:  # (one row: no array made of the lists)
                self._post_rows[d][at] = pending[0]
                self._post_vals[d][at] = self._pend_vals[d][0]
            else:
                self._post_rows[d][at:end] = pending
                self._post_vals[d][at:end] = self._pend_vals[d]
            pending.clear()
            self._pend_vals[d].clear()
            self._post_len[d] = at = end
        return at

    def dense(self, dims: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """The embedding values of dimensions ``dims`` (one row each) for rows ``[0, n)``,
        or only ``rows``: a dense ``(len(dims), n or len(rows))`` matrix."""
        out = np.zeros((len(dims), self.n))
        for i, d in enumerate(dims.tolist()):
            at = self._postings(d)
            out[i, self._post_rows[d][:at]] = self._post_vals[d][:at]
        return out if rows is None else out[:, rows]

    def postings(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """Dimension ``d``'s posting list: its rows (increasing) and their values (views)."""
        at = self._postings(d)
        return self._post_rows[d][:at], self._post_vals[d][:at]

    def dot(self, dims: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``weights @ self.dense(dims)`` for rows ``[0, n)``, summed sparsely: each row
        adds its terms in the order of ``dims`` (``np.bincount`` adds in index order),
        starting from 0, with no fused multiply-add, so the same on every CPU."""
        lists = [self.postings(d) for d in dims.tolist()]
        if not lists:
            return np.zeros(self.n)
        rows = np.concatenate([r for r, _ in lists])
        vals = np.concatenate([v for _, v in lists])
        # ``np.bincount`` adds each weight to its bin in index order, from 0 (as
        # ``np.add.at`` does, at a fraction of the cost)
        return np.bincount(rows, vals * np.repeat(weights, [len(r) for r, _ in lists]),
                           minlength=self.n)

    def compact(self) -> np.ndarray:
        """Drop dead rows, keeping order. Returns the old row of each new row."""
        keep = np.flatnonzero(self.live[: self.n])
        m = len(keep)
        new_of_old = np.full(self.n, -1, dtype=np.int64)
        new_of_old[keep] = np.arange(m)
        # the posted rows' postings follow them; the rows not posted yet stay so (the
        # newest rows: they keep their order after the kept posted rows)
        posted = self._posted
        self._posted = int(np.searchsorted(keep, posted))
        for d in range(self.dim) if posted else ():
            at = self._moved(d)
            if at:
                moved = new_of_old[self._post_rows[d][:at]]
                kept = moved >= 0
                k = int(np.count_nonzero(kept))
                self._post_vals[d][:k] = self._post_vals[d][:at][kept]
                self._post_rows[d][:k] = moved[kept]
                self._post_len[d] = k
        self.dims = [self.dims[i] for i in keep]
        self._sparse = [self._sparse[i] for i in keep]
        for f in ARRAYS:
            arr = getattr(self, f.name)
            arr[:m] = arr[keep]
            arr[m : self.n] = 0
        self.texts = [self.texts[i] for i in keep]
        self.n = m
        self._n_dead = 0
        self.layout += 1
        self.superseded_by_newest = -1  # (its row moved)
        self._drop_log(lost=True)  # its rows moved
        return keep


class RowsKept:
    """How far a cache of per-row values of some ``Columns`` reaches: the columns, their
    layout and the rows filled. Only an add writes the fields such values come from, and
    only a compaction moves rows, so a cache computes the rows from ``first_new(cols)``
    on, then says so with ``filled(cols)``."""

    __slots__ = ("_of",)

    def __init__(self) -> None:
        self._of: tuple[Columns | None, int, int] = (None, -1, 0)

    @property
    def count(self) -> int:
        """The rows filled, of whichever columns."""
        return self._of[2]

    def first_new(self, cols: Columns) -> int:
        """The first row of ``cols`` without a kept value: 0 for other columns, after a
        compaction, or if the rows are fewer than were filled."""
        of, layout, done = self._of
        return done if of is cols and layout == cols.layout and done <= cols.n else 0

    def holds(self, cols: Columns, row: int) -> bool:
        """Whether ``row`` of ``cols``, as the rows are now, has a kept value."""
        of, layout, done = self._of
        return of is cols and layout == cols.layout and row < done

    def filled(self, cols: Columns) -> None:
        """Rows ``[0, n)`` of ``cols`` have their values kept."""
        self._of = (cols, cols.layout, cols.n)

    def filled_to(self, cols: Columns, count: int) -> None:
        """Rows ``[0, count)`` of ``cols`` have their values kept."""
        self._of = (cols, cols.layout, count)

    def forget(self) -> None:
        """No row has a kept value."""
        self._of = (None, -1, 0)
