"""What every trainer shares: a deterministic training context and tensor comparison."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from runner.train.portable import PortableMath


@contextmanager
def deterministic(seed: int) -> Iterator[None]:
    """Seeded, single-threaded, deterministic-algorithms torch under ``PortableMath``
    (BLAS products as ATen sums; any op not known to be CPU-independent refused),
    restored on exit.

    Run in the pinned subprocess of ``runner.train.isolated`` (ATen's ``default``
    kernels, baseline libm), this with full-batch updates makes retraining
    reproduce the same tensors bit-for-bit on any x86-64 CPU for one torch build.
    """
    threads = torch.get_num_threads()
    det = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    rng = torch.get_rng_state()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    try:
        with torch.enable_grad(), PortableMath():
            yield
    finally:
        torch.set_rng_state(rng)
        torch.use_deterministic_algorithms(det, warn_only=warn_only)
        torch.set_num_threads(threads)


def tensor_differences(
    trained: dict[str, torch.Tensor], shipped: dict[str, torch.Tensor]
) -> list[str]:
    """One line per tensor that is missing, extra, or not bit-for-bit equal."""
    out = [f"{k}: missing from the shipped file" for k in sorted(trained.keys() - shipped)]
    out += [f"{k}: not produced by training" for k in sorted(shipped.keys() - trained)]
    for key in sorted(trained.keys() & shipped.keys()):
        a, b = trained[key], shipped[key]
        if a.dtype != b.dtype or a.shape != b.shape:
            out.append(f"{key}: {a.dtype}{tuple(a.shape)} vs shipped {b.dtype}{tuple(b.shape)}")
        elif not torch.equal(a, b):
            delta = (a.double() - b.double()).abs().max().item()
            out.append(f"{key}: differs (max |delta| {delta:.3g})")
    return out
