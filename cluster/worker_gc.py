"""A worker's garbage collector, for a process that runs job after job.

A finished job is freed by reference counting (``tests/test_streaming.py`` checks that it
leaves nothing to the cyclic collector), yet CPython's collector would still walk what a
worker holds between jobs (its kept streams, the relevance table, every imported module)
in each full collection, and the young objects every 700 allocations. So before each
batch ``before_batch`` freezes what the worker holds (``gc.freeze``: out of the
collector's walks, still freed by reference counting) and the young generation is
collected every ``YOUNG`` allocations; every ``THAW_EVERY`` batches everything is thawed
and collected once, so a cycle that slips through is freed all the same. Only when
memory is reclaimed changes, never a job's numbers.
"""

from __future__ import annotations

import gc

YOUNG = 20_000   # allocations between young collections (CPython's default: 700)
THAW_EVERY = 32  # batches between two collections of everything

_batches = [0]


def before_batch() -> None:
    """Call before each batch of jobs a worker runs."""
    if _batches[0] == 0:
        gc.set_threshold(YOUNG, *gc.get_threshold()[1:])
    _batches[0] += 1
    if _batches[0] % THAW_EVERY == 0:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
