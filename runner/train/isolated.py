"""Training in a subprocess whose numeric paths are pinned (``runner.train.portable``).

``train_pinned(name)`` runs ``python -m runner.train.isolated NAME OUT`` with
``PINNED_ENV`` set over the caller's environment (and ``CLEARED_ENV`` removed), so
the caller's ``ATEN_CPU_CAPABILITY``, ``MKL_CBWR`` or thread settings never reach
training: torch reads them once, when it loads, which is why training cannot run
in a process that has torch loaded already. The worker checks that the pin took
(ATen reports its ``default`` capability), trains under ``PortableMath``, and
writes the tensors as safetensors (nothing is pickled) for the caller to read.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from runner.train.portable import CLEARED_ENV, EXPECTED_CAPABILITY, PINNED_ENV

CAPABILITY_KEY = "capability"  # the worker's ATen capability, in its output's metadata


def pinned_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (the caller's environment by default) with the training pin applied."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in CLEARED_ENV}
    env.update(PINNED_ENV)
    return env


def train_pinned(name: str) -> dict[str, torch.Tensor]:
    """Train model ``name`` in a pinned subprocess; its tensors, bit-for-bit the same
    on every x86-64 CPU for one torch build."""
    with tempfile.TemporaryDirectory(prefix="fbench-train-") as tmp:
        out = Path(tmp) / f"{name}.safetensors"
        proc = subprocess.run(
            [sys.executable, "-m", "runner.train.isolated", name, str(out)],
            env=pinned_env(), capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"]
            raise RuntimeError(f"training {name} failed in its pinned subprocess: {lines[-1]}")
        with safe_open(str(out), framework="pt") as f:
            capability = (f.metadata() or {}).get(CAPABILITY_KEY)
            tensors = {key: f.get_tensor(key) for key in f.keys()}  # noqa: SIM118 (not a dict)
    if capability != EXPECTED_CAPABILITY:
        raise RuntimeError(f"training {name} ran on ATen capability {capability}, not "
                           f"{EXPECTED_CAPABILITY}: the pinned environment did not take")
    return tensors


def _worker(name: str, out: str) -> None:
    capability = torch.backends.cpu.get_cpu_capability()
    if capability != EXPECTED_CAPABILITY:
        raise SystemExit(f"ATen capability is {capability}; run through train_pinned()")
    from runner.train import TRAINERS

    with torch.backends.mkldnn.flags(enabled=False):  # oneDNN picks kernels by CPU
        tensors = TRAINERS[name].train()
    save_file({k: v.contiguous() for k, v in tensors.items()}, out,
              metadata={CAPABILITY_KEY: capability})


if __name__ == "__main__":
    _worker(*sys.argv[1:3])
