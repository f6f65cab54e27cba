"""Shipped weights: one safetensors file per model in ``memcore/weights/``, with the
model's non-tensor facts (labels, feature names, provenance) as one JSON object in
the file's metadata.

One metadata key, with sorted JSON inside: safetensors writes its metadata map in
hash order, so several keys would make each write's bytes differ; with one key a
retrained file is byte-identical to the shipped one (a clean ``git status``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file

WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "weights"
META_KEY = "fbench"  # the one safetensors metadata key: a JSON object


@dataclass(frozen=True)
class WeightsFile:
    """The tensors and the JSON metadata of one safetensors file."""

    tensors: dict[str, torch.Tensor]
    metadata: dict[str, Any]


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
        raw = f.metadata() or {}
    if META_KEY not in raw:
        raise ValueError(f"weights file {path} has no {META_KEY!r} metadata")
    return WeightsFile(tensors, json.loads(raw[META_KEY]))


def save_weights(path: Path, weights: WeightsFile) -> None:
    """Write contiguous tensors and the metadata (an atomic rename, never a torn file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tensors = {k: v.detach().contiguous() for k, v in weights.tensors.items()}
    meta = {META_KEY: json.dumps(weights.metadata, sort_keys=True)}
    save_file(tensors, str(tmp), metadata=meta)
    tmp.chmod(0o644)  # package data: readable by everyone (the writer creates it 0600)
    tmp.replace(path)
