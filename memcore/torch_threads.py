"""Running torch on one thread for a block of work, then restoring the caller's count.

Used wherever a job calls torch (the MiniLM embedder, the learned-forget table): a
reduction split over threads sums in another order, and an op above torch's grain size
enters an OpenMP region that waits on a core another process may hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run torch on one thread, then restore the count: a reduction split over threads
    sums in another order, so a vector would depend on who runs the job."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
