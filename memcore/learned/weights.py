"""Shipped weights: one safetensors file per model in ``memcore/weights/``, with the
model's non-tensor facts (labels, feature names) as JSON in the file's metadata."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "weights"


@dataclass(frozen=True)
class WeightsFile:
    """The tensors and the string metadata of one safetensors file."""

    tensors: dict[str, torch.Tensor]
    metadata: dict[str, str]


def weights_path(name: str) -> Path:
    """Where the shipped weights of model ``name`` live."""
    return WEIGHTS_DIR / f"{name}.safetensors"


def load_weights(path: Path) -> WeightsFile:
    """Read tensors and metadata; a missing file names the command that writes it."""
    if not path.is_file():
        raise FileNotFoundError(
            f"weights file {path} is missing; write it with `python -m runner.train {path.stem}`"
        )
    with safe_open(str(path), framework="pt") as f:
        tensors = {key: f.get_tensor(key) for key in f.keys()}  # noqa: SIM118 (not a dict)
        metadata = dict(f.metadata() or {})
    return WeightsFile(tensors, metadata)


def save_weights(path: Path, weights: WeightsFile) -> None:
    """Write contiguous tensors and the metadata (an atomic rename, never a torn file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tensors = {k: v.detach().contiguous() for k, v in weights.tensors.items()}
    save_file(tensors, str(tmp), metadata=dict(weights.metadata))
    tmp.chmod(0o644)  # package data: readable by everyone (the writer creates it 0600)
    tmp.replace(path)
