"""Arrow's memory pool in an ``fbench`` process: jemalloc, its freed pages returned to the
system at once, so that a read's peak RSS follows the tables it holds rather than the pages
the pool keeps (``benchmarks/bench_aggregate.py`` measures aggregate's peak).

Arrow fixes its default pool when pyarrow loads, so ``runner.cli`` calls ``configure``
before any command module imports pyarrow. ``ARROW_DEFAULT_MEMORY_POOL``, when set, is the
user's choice and is kept; outside Linux, pyarrow's default pool is kept."""

from __future__ import annotations

import os
import sys

POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def configure() -> None:
    """Make jemalloc Arrow's default pool (Linux, unless ``ARROW_DEFAULT_MEMORY_POOL``
    names one), its arenas releasing freed pages at once. Child processes (Ray's workers)
    inherit the choice through the environment."""
    if sys.platform == "linux":
        os.environ.setdefault(POOL_VARIABLE, "jemalloc")
    import pyarrow as pa

    if pa.default_memory_pool().backend_name == "jemalloc":
        pa.jemalloc_set_decay_ms(0)
