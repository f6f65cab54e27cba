"""The order a sweep's jobs run in: stream by stream, the streams shuffled.

The jobs of one stream (a workload, its version, code, horizon and parameters, and a
seed: every policy of the sweep on it) run one after another, so a worker generates the
stream once and its next jobs read it (``runner.job.streams``). The streams come in a
fixed shuffle, so a slow workload's streams are spread over the run, and each stream
carries every policy, so a slow policy's jobs are too: the last tasks are not all one
kind. The order changes no result: every job's metrics depend on its spec alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from runner.job.streams import stream_key
from runner.sweep.grid import SeedCell, Subset


def run_order(jobs: Subset) -> np.ndarray:
    """A permutation of ``jobs``' indices: a stream's jobs together, in grid order (the
    policies' order), the streams in a fixed shuffle. A few int arrays, 8 bytes a job
    each."""
    grid, n = jobs.grid, len(jobs)
    offsets = np.asarray(grid.offsets)
    cells = np.searchsorted(offsets, jobs.positions, "right") - 1
    seeds = np.empty(n, dtype=np.int64)
    streams = np.empty(n, dtype=np.int64)
    ids: dict[tuple[object, ...], int] = {}
    seed_arrays: dict[int, np.ndarray] = {}  # (cells share their seed tuple)
    for c in np.unique(cells).tolist():
        lo, hi = np.searchsorted(cells, [c, c + 1]).tolist()
        cell, at = grid.cells[c], jobs.positions[lo:hi] - offsets[c]
        if isinstance(cell, SeedCell):
            all_seeds = seed_arrays.get(id(cell.seeds))
            if all_seeds is None:
                all_seeds = seed_arrays[id(cell.seeds)] = np.asarray(cell.seeds, np.int64)
            seeds[lo:hi] = all_seeds[at]
            key = stream_key(dataclasses.replace(cell.template, seed=0))
            streams[lo:hi] = ids.setdefault(key, len(ids))
            continue
        for i, p in enumerate(at.tolist(), lo):
            job = cell.job(p)
            seeds[i] = job.seed
            streams[i] = ids.setdefault(stream_key(dataclasses.replace(job, seed=0)),
                                        len(ids))
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, group = np.unique(np.stack([streams, seeds]), axis=1, return_inverse=True)
    group = group.ravel()
    rank = np.random.default_rng(0).permutation(int(group.max()) + 1)
    return np.lexsort((np.arange(n), rank[group]))
