"""Deterministic training of the models shipped in ``memcore/weights/``.

``TRAINERS`` maps a model name to its ``Trainer``; ``write_weights(name)`` retrains
and writes the shipped file, ``weight_differences(name)`` retrains and compares
with it tensor-by-tensor (bit-for-bit, with ``torch.equal``) and metadata.
Training always runs in a subprocess whose numeric paths are pinned
(``runner.train.portable``, ``runner.train.isolated``), whatever the caller's
environment: retraining then gives the same bits on any x86-64 CPU (AVX2 or
AVX512, Intel or AMD, MKL or not) for one torch build, and the written file is
byte-identical. The file records the torch build that wrote it (``built_with``,
never compared), so a failed check can name the likely cause.

Command line: ``fbench train [tagger|forget|all] [--check]``.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from memcore.learned.weights import WeightsFile, load_weights, save_weights, weights_path
from runner.train.common import tensor_differences
from runner.train.forget import forget_metadata, train_forget
from runner.train.isolated import train_pinned
from runner.train.tagger import tagger_metadata, train_tagger


@dataclass(frozen=True)
class Trainer:
    """How to retrain one shipped model: its tensors and its file metadata.

    ``train`` runs in the current process; ``write_weights`` and
    ``weight_differences`` call it in the pinned subprocess (``train_pinned``)."""

    name: str
    description: str
    train: Callable[[], dict[str, torch.Tensor]]
    metadata: Callable[[], dict[str, Any]]

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


BUILT_WITH = "built_with"  # metadata: the torch build and libc that wrote the file


def built_with() -> dict[str, str]:
    """The build facts the weights depend on (recorded, never compared)."""
    libc, libc_version = platform.libc_ver()
    return {"torch": torch.__version__, "libc": f"{libc} {libc_version}".strip()}


def write_weights(name: str) -> Path:
    """Retrain model ``name`` and write its shipped weights file; returns the path."""
    trainer = _trainer(name)
    meta = {**trainer.metadata(), BUILT_WITH: built_with()}
    save_weights(trainer.path, WeightsFile(train_pinned(name), meta))
    return trainer.path


def weight_differences(name: str) -> list[str]:
    """Retrain model ``name`` and list how the result differs from the shipped file
    (tensors compared with ``torch.equal``, then the metadata but ``built_with``);
    empty when identical."""
    trainer = _trainer(name)
    shipped = load_weights(trainer.path)
    diffs = tensor_differences(train_pinned(name), shipped.tensors)
    meta = json.loads(json.dumps(trainer.metadata()))  # as it reads back from the file
    theirs = {k: v for k, v in shipped.metadata.items() if k != BUILT_WITH}
    diffs += [
        f"metadata {key!r} differs"
        for key in sorted(meta.keys() | theirs.keys())
        if meta.get(key) != theirs.get(key)
    ]
    return diffs


def likely_cause(name: str, diffs: list[str]) -> str:
    """One line on why retraining model ``name`` gave ``diffs`` (non-empty)."""
    shipped = load_weights(_trainer(name).path).metadata.get(BUILT_WITH)
    if shipped is None:
        return (f"the shipped file records no build (written before training was pinned to "
                f"portable kernels): retrain with `fbench train {name}`")
    here = built_with()
    changed = [f"{k} {shipped.get(k, 'unrecorded')} there, {v} here"
               for k, v in here.items() if shipped.get(k) != v]
    if changed:
        return (f"the shipped file was written by another build ({'; '.join(changed)}): "
                f"install that torch (make install), or retrain with `fbench train {name}`")
    if any(line.startswith("metadata") for line in diffs):
        return (f"the trainer's settings or data changed since the file was written: "
                f"retrain with `fbench train {name}` and commit the weights")
    return ("same torch build and libc, so the training code or its data changed since the "
            f"file was written (the CPU is pinned out): retrain with `fbench train {name}`")


def check_weights(name: str) -> bool:
    """True when retraining model ``name`` reproduces its shipped file bit-for-bit."""
    return not weight_differences(name)


__all__ = ["TRAINERS", "Trainer", "check_weights", "likely_cause", "weight_differences",
           "write_weights"]
