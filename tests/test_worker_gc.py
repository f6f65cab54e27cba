"""A worker's collector (``cluster.worker_gc``): frozen between batches, thawed in time."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_CHECK = textwrap.dedent("""
    import gc, weakref
    from cluster import worker_gc

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    worker_gc.before_batch()
    assert gc.get_threshold()[0] == worker_gc.YOUNG
    held = Node()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    dead = cycle()  # cyclic garbage made during a batch
    worker_gc.before_batch()  # ... frozen with what the worker holds
    gc.collect()
    assert dead() is not None, "a frozen cycle is out of the collector's sight"
    for _ in range(worker_gc.THAW_EVERY):
        worker_gc.before_batch()
    assert dead() is None, "thawed and collected within THAW_EVERY batches"
    assert gc.get_freeze_count() > 0 and held is not None
    print("ok")
""")


def test_a_worker_freezes_what_it_holds_and_still_frees_cycles() -> None:
    """Prevents the worker's collector settings from leaking memory (a cycle frozen for
    good) or from being lost (every batch's full collections walking the kept streams
    again, about 5% of a worker's time). Run in a fresh interpreter: the settings are
    process-wide."""
    done = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
