"""The sparse embedding storage of memcore.columns."""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns


def test_dense_equals_the_dense_matrix_through_appends_and_compactions() -> None:
    """Prevents the posting lists from losing, misplacing or duplicating a value: after
    appends, removals and compactions, ``dense`` must be exactly the dimension-major
    matrix of the surviving rows' vectors (relevance and lethe's merges read it)."""
    rng = np.random.default_rng(11)
    dim = 64
    cols = Columns(dim, capacity=8)
    kept: list[np.ndarray] = []  # the vector of each row, in row order
    for step in range(1200):
        vec = np.zeros(dim)
        nz = rng.choice(dim, rng.integers(0, 6), replace=False)
        vec[nz] = rng.random(len(nz))
        cols.append(vec)
        kept.append(vec)
        if step % 7 == 3:  # remove a random live row
            row = int(rng.choice(np.flatnonzero(cols.live[: cols.n])))
            cols.live[row] = False
            cols.n_live -= 1
        if step % 250 == 249:
            old = cols.compact()
            kept = [kept[i] for i in old]
        if step % 50 == 0:
            reference = np.array(kept).T
            dims = np.sort(rng.choice(dim, 10, replace=False))
            assert np.array_equal(cols.dense(dims), reference[dims])
            rows = np.sort(rng.choice(cols.n, min(5, cols.n), replace=False))
            assert np.array_equal(cols.dense(dims, rows), reference[dims][:, rows])
            assert all(np.array_equal(cols.dims[r], np.flatnonzero(kept[r]))
                       for r in range(cols.n))
