"""Training arithmetic that gives the same bits on every x86-64 CPU.

Training amplifies last-bit differences: the same torch build gives different
weights (not just different last bits) on an AVX2 and an AVX512 machine, or with
MKL on an Intel and an AMD CPU, because each of them dispatches to its own SIMD
kernels. Three things pin every numeric path training takes:

* ``PINNED_ENV``, set for the training subprocess before torch loads:
  ATen's ``default`` kernels (a fixed vector width and no FMA, whatever the CPU
  offers), glibc's baseline libm variants (its FMA variants of exp, log, sin, ...
  round differently), one thread everywhere, MKL and oneDNN pinned to their
  conditional-reproducibility / lowest ISA modes. oneDNN and MKL are then off
  the path (``PortableMath`` takes over the MKL kernels training would reach: BLAS
  products and ``sqrt``).
* ``PortableMath``, a dispatch mode active for the whole of training (forward,
  backward and optimizer): BLAS products (``mm``, ``addmm``, ``mv``, ``addmv``,
  ``dot``), whose MKL kernels depend on the CPU model, are computed as a
  broadcast multiply and one ATen sum in a fixed order; ``sqrt`` (Adam's and
  L-BFGS's), whose float kernel is MKL VML's and is not correctly rounded, with
  bits that move with the CPU and ``MKL_CBWR``, is numpy's IEEE square root,
  correctly rounded on every CPU; any other op must be in
  ``ATEN_OPS``, ATen's own elementwise, reduction, indexing and copy kernels, or
  training stops naming the op (so a new layer cannot bring a CPU-dependent
  kernel back silently).
* ``one thread`` and deterministic algorithms (``runner.train.common``).

The weights then depend on the torch build and the glibc, never on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# Set in the training subprocess's environment before torch is imported.
PINNED_ENV: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "default",
    # Both spellings: glibc >= 2.33 names the features, older ones add _Usable.
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4,-AVX2_Usable,-FMA_Usable,-FMA4_Usable",
    "MKL_CBWR": "COMPATIBLE",
    "MKL_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "DNNL_MAX_CPU_ISA": "SSE41",
}
# Outer settings that would change a kernel choice and that the pin does not cover.
CLEARED_ENV = ("MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY_OVERRIDE")

EXPECTED_CAPABILITY = "DEFAULT"  # what torch.backends.cpu.get_cpu_capability() reports


def _scaled(out: torch.Tensor, self: torch.Tensor, beta: Any, alpha: Any) -> torch.Tensor:
    """``beta * self + alpha * out`` with BLAS's rule that beta 0 ignores ``self``."""
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out
    return out + (self if beta == 1 else self * beta)


def _mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)


def _mv(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return (a * v).sum(1)


def _addmm(self: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *,
           beta: Any = 1, alpha: Any = 1) -> torch.Tensor:
    return _scaled(_mm(a, b), self, beta, alpha)


def _addmv(self: torch.Tensor, a: torch.Tensor, v: torch.Tensor, *,
           beta: Any = 1, alpha: Any = 1) -> torch.Tensor:
    return _scaled(_mv(a, v), self, beta, alpha)


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * b).sum()


def _sqrt(x: torch.Tensor) -> torch.Tensor:
    """IEEE square root (correctly rounded on every CPU), through numpy: ATen's float
    ``sqrt`` runs on MKL VML, whose bits depend on the CPU model."""
    return torch.from_numpy(np.asarray(np.sqrt(x.detach().numpy()))).to(x.dtype)


# BLAS products, decomposed into ATen's own multiply and sum; sqrt, off MKL.
DECOMPOSED: dict[Any, Callable[..., torch.Tensor]] = {
    aten.sqrt.default: _sqrt,
    aten.mm.default: _mm,
    aten.mv.default: _mv,
    aten.addmm.default: _addmm,
    aten.addmv.default: _addmv,
    aten.dot.default: _dot,
}

# ATen ops whose CPU kernels are ATen's own (compiled per capability, so pinned by
# ATEN_CPU_CAPABILITY) or exact (copies, views, comparisons, integer and RNG bits).
ATEN_OPS = frozenset({
    # views, copies, allocation, RNG
    "_local_scalar_dense", "_to_copy", "alias", "as_strided", "cat", "clone", "copy_",
    "detach", "empty", "empty_like", "empty_strided", "expand", "fill_", "lift_fresh",
    "new_zeros",
    "normal_", "ones_like", "permute", "rand", "scalar_tensor", "select", "select_backward",
    "slice", "slice_backward", "split", "split_with_sizes", "squeeze", "stack", "t",
    "transpose", "unbind", "uniform_", "unsqueeze", "view", "zeros", "zeros_like",
    # indexing
    "index_add", "index_add_", "index_select", "index_select_backward",
    # elementwise arithmetic and comparisons
    "abs", "add", "add_", "addcdiv_", "addcmul", "addcmul_", "bitwise_and", "bitwise_or",
    "clamp", "div", "div_", "eq", "floor", "ge", "gt", "le", "lerp_", "lt", "mul", "mul_",
    "ne", "neg", "pow", "reciprocal", "relu", "relu_", "rsub", "sigmoid", "sub",
    "threshold_backward", "where",
    # reductions and losses
    "_log_softmax", "_log_softmax_backward_data", "binary_cross_entropy_with_logits",
    "cumsum", "max", "mse_loss", "mse_loss_backward", "nll_loss_backward",
    "nll_loss_forward", "sum",
})


class UnportableOp(RuntimeError):
    """Training called an op whose kernel is not known to be CPU-independent."""


class PortableMath(TorchDispatchMode):
    """Run BLAS products as ATen sums and refuse every op outside ``ATEN_OPS``.

    ``seen`` collects the name of every op that ran (tests read it)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        self.seen.add(name)
        if func in DECOMPOSED:
            return DECOMPOSED[func](*args, **kwargs)
        if func.namespace == "profiler" or name in ATEN_OPS:
            return func(*args, **kwargs)
        raise UnportableOp(
            f"training called aten.{name}, whose CPU kernel is not known to give the same "
            f"bits on every x86-64 CPU; decompose it in runner/train/portable.py (DECOMPOSED) "
            f"or, if it is ATen's own kernel, list it in ATEN_OPS")


__all__ = ["ATEN_OPS", "CLEARED_ENV", "DECOMPOSED", "EXPECTED_CAPABILITY", "PINNED_ENV",
           "PortableMath", "UnportableOp"]
