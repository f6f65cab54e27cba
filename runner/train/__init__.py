"""Deterministic training of the models shipped in ``memcore/weights/``.

``TRAINERS`` maps a model name to its ``Trainer``; ``write_weights(name)`` retrains
and writes the shipped file, ``check_weights(name)`` retrains and compares with
it tensor-by-tensor (bit-for-bit, with ``torch.equal``) and metadata. Retraining
is reproducible on the same torch build and CPU family (the written file is then
byte-identical too); other hardware may differ in the last bits.

Command line: ``python -m runner.train [tagger|forget|all] [--check]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from memcore.learned.weights import WeightsFile, load_weights, save_weights, weights_path
from runner.train.common import tensor_differences
from runner.train.forget import forget_metadata, train_forget
from runner.train.tagger import tagger_metadata, train_tagger


@dataclass(frozen=True)
class Trainer:
    """How to retrain one shipped model: its tensors and its file metadata."""

    name: str
    description: str
    train: Callable[[], dict[str, torch.Tensor]]
    metadata: Callable[[], dict[str, Any]]

    def __call__(self) -> dict[str, torch.Tensor]:
        return self.train()

    @property
    def path(self) -> Path:
        return weights_path(self.name)


TRAINERS: dict[str, Trainer] = {
    t.name: t
    for t in (
        Trainer("tagger", "slot tagger imitating the keyword teacher on contradiction texts",
                train_tagger, tagger_metadata),
        Trainer("forget", "learned-forget MLP imitating the Ebbinghaus/unslotted retention rule",
                train_forget, forget_metadata),
    )
}


def _trainer(name: str) -> Trainer:
    if name not in TRAINERS:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(TRAINERS))}")
    return TRAINERS[name]


def write_weights(name: str) -> Path:
    """Retrain model ``name`` and write its shipped weights file; returns the path."""
    trainer = _trainer(name)
    save_weights(trainer.path, WeightsFile(trainer.train(), trainer.metadata()))
    return trainer.path


def weight_differences(name: str) -> list[str]:
    """Retrain model ``name`` and list how the result differs from the shipped file
    (tensors compared with ``torch.equal``, then the metadata); empty when identical."""
    trainer = _trainer(name)
    shipped = load_weights(trainer.path)
    diffs = tensor_differences(trainer.train(), shipped.tensors)
    meta = json.loads(json.dumps(trainer.metadata()))  # as it reads back from the file
    diffs += [
        f"metadata {key!r} differs"
        for key in sorted(meta.keys() | shipped.metadata.keys())
        if meta.get(key) != shipped.metadata.get(key)
    ]
    return diffs


def check_weights(name: str) -> bool:
    """True when retraining model ``name`` reproduces its shipped file bit-for-bit."""
    return not weight_differences(name)


__all__ = ["TRAINERS", "Trainer", "check_weights", "weight_differences", "write_weights"]
