"""Shipped weights: one safetensors file per model in ``memcore/weights/``, with the
model's non-tensor facts (labels, feature names, provenance) as one JSON object in
the file's metadata.

One metadata key, with sorted JSON inside: safetensors writes its metadata map in
hash order, so several keys would make each write's bytes differ; with one key a
retrained file is byte-identical to the shipped one (a clean ``git status``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from safetensors import safe_open

if TYPE_CHECKING:
    import torch

T = TypeVar("T")

WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "weights"
META_KEY = "fbench"  # the one safetensors metadata key: a JSON object
SUMS = "SHA256SUMS"  # the shipped files' digests, next to them (sha256sum's format)


@dataclass(frozen=True)
class WeightsFile(Generic[T]):
    """The tensors (torch's, or numpy arrays) and the JSON metadata of one safetensors
    file."""

    tensors: dict[str, T]
    metadata: dict[str, Any]


def weights_path(name: str) -> Path:
    """Where the shipped weights of model ``name`` live."""
    return WEIGHTS_DIR / f"{name}.safetensors"


def recorded_digests(folder: Path) -> dict[str, str]:
    """``{file name: SHA-256}`` from ``folder/SHA256SUMS`` (empty when there is none)."""
    sums = folder / SUMS
    if not sums.is_file():
        return {}
    out = {}
    for line in sums.read_text().splitlines():
        digest, _, name = line.partition("  ")
        if name:
            out[name.strip()] = digest.strip()
    return out


def load_weights(path: Path) -> WeightsFile[torch.Tensor]:
    """Read torch tensors and metadata (see ``_read``)."""
    return _read(path, "pt")


def load_arrays(path: Path) -> WeightsFile[np.ndarray]:
    """Read numpy arrays and metadata, without torch (see ``_read``)."""
    return _read(path, "numpy")


def _read(path: Path, framework: str) -> WeightsFile[Any]:
    """Read tensors and metadata. Safetensors only (nothing is unpickled); a file whose
    SHA-256 differs from the one recorded next to it, or that is not safetensors at
    all, is a one-line error; a missing file names the command that writes it."""
    if not path.is_file():
        raise FileNotFoundError(
            f"weights file {path} is missing; write it with `fbench train {path.stem}`"
        )
    expected = recorded_digests(path.parent).get(path.name)
    if expected is not None and hashlib.sha256(path.read_bytes()).hexdigest() != expected:
        raise ValueError(
            f"weights file {path} does not match its recorded SHA-256 (tampered or corrupt); "
            f"reinstall fbench, or rewrite it with `fbench train {path.stem}`")
    try:
        with safe_open(str(path), framework=framework) as f:
            tensors = {key: f.get_tensor(key) for key in f.keys()}  # noqa: SIM118 (not a dict)
            raw = f.metadata() or {}
    except Exception as exc:  # safetensors raises its own error types for a bad header
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"weights file {path} is not a valid safetensors file: {first}") from None
    if META_KEY not in raw:
        raise ValueError(f"weights file {path} has no {META_KEY!r} metadata")
    return WeightsFile(tensors, json.loads(raw[META_KEY]))


def record_digest(path: Path) -> None:
    """Write ``path``'s SHA-256 into the SHA256SUMS next to it (atomic)."""
    sums = recorded_digests(path.parent)
    sums[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    tmp = path.parent / (SUMS + ".tmp")
    tmp.write_text("".join(f"{d}  {n}\n" for n, d in sorted(sums.items())))
    tmp.replace(path.parent / SUMS)


def save_weights(path: Path, weights: WeightsFile[torch.Tensor]) -> None:
    """Write contiguous tensors and the metadata (an atomic rename, never a torn file)."""
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tensors = {k: v.detach().contiguous() for k, v in weights.tensors.items()}
    meta = {META_KEY: json.dumps(weights.metadata, sort_keys=True)}
    save_file(tensors, str(tmp), metadata=meta)
    tmp.chmod(0o644)  # package data: readable by everyone (the writer creates it 0600)
    tmp.replace(path)
    record_digest(path)
