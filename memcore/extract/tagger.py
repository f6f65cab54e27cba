"""tagger: a small slot tagger, trained with PyTorch to imitate the keyword teacher.

Hashed unigrams and bigrams -> ``EmbeddingBag(sum)`` -> ReLU -> linear -> softmax
over "no slot" plus every slot of the lexicon it was trained for
(``memcore.learned.tagger_net``). It answers a slot only when that slot is the top
class with probability at least ``MIN_PROB``.

The weights ship in ``memcore/weights/tagger.safetensors`` (retrain with
``python -m runner.train tagger``) and are loaded once per process, with a
per-process cache of answers by text, so building an extractor per job is cheap.
Loading never trains. It answers with numpy, one element-wise operation at a time
(the same sums, in the same order, on every CPU), so a job never imports torch; its
answers are the torch network's on every text of 60 streams, the closest one 1.6e-4
from a decision boundary (``tests/test_learned.py``).
"""

from __future__ import annotations

from functools import cache, lru_cache
from itertools import pairwise

import numpy as np

from memcore.embed import fnv1a_32
from memcore.extract.base import Lexicon, register_extractor
from memcore.text import tokenize

MIN_PROB = 0.5
NAME = "tagger"
BUCKETS = 2048
LABELS_KEY = "labels"  # metadata: the slot labels, class i + 1 = labels[i]


@lru_cache(maxsize=65536)
def _hash(feature: str) -> int:
    return fnv1a_32(feature.encode("utf-8"))


def featurize(text: str, buckets: int = BUCKETS) -> list[int]:
    """Bucket ids of the text's unigrams, then its bigrams (empty for no tokens)."""
    tokens = tokenize(text)
    feats = tokens + [f"{a} {b}" for a, b in pairwise(tokens)]
    return [_hash(f) % buckets for f in feats]


class _ShippedTagger:
    """The loaded network's arrays and its labels, with answers cached by text."""

    def __init__(self, tensors: dict[str, np.ndarray], labels: tuple[str, ...]) -> None:
        self.bag = tensors["bag.weight"]            # (buckets, hidden)
        self.bias = tensors["bias"]                 # (hidden,)
        self.out_t = np.ascontiguousarray(tensors["out.weight"].T)  # (hidden, classes)
        self.out_bias = tensors["out.bias"]         # (classes,)
        if self.out_t.shape[1] != len(labels) + 1:
            raise ValueError(f"tagger weights have {self.out_t.shape[1]} classes for "
                             f"{len(labels)} labels")
        self.labels = labels
        self.buckets = len(self.bag)
        self.predict = lru_cache(maxsize=1 << 16)(self._predict)

    def logits(self, ids: list[int]) -> np.ndarray:
        """The class logits of one bag of feature ids: its rows summed in order, the
        bias, ReLU, then each hidden unit's row of the output layer added in order."""
        hidden = np.add.reduce(self.bag[ids], axis=0) + self.bias
        np.maximum(hidden, 0, out=hidden)
        return np.add.reduce(hidden[:, None] * self.out_t, axis=0) + self.out_bias

    def _predict(self, text: str) -> str | None:
        """The slot of ``text``: the top class if it is a slot with p >= ``MIN_PROB``."""
        ids = featurize(text, self.buckets)
        if not ids:
            return None
        logits = self.logits(ids)
        c = int(np.argmax(logits))
        prob = 1.0 / float(np.exp(logits - logits[c]).sum())  # softmax at the top class
        return self.labels[c - 1] if c > 0 and prob >= MIN_PROB else None


@cache
def shipped_tagger() -> _ShippedTagger:
    """The shipped tagger, loaded once per process (``cache_clear()`` reloads)."""
    from memcore.learned.weights import load_arrays, weights_path

    weights = load_arrays(weights_path(NAME))
    return _ShippedTagger(weights.tensors, tagger_labels(weights.metadata))


def tagger_labels(metadata: dict[str, object]) -> tuple[str, ...]:
    """The slot labels a tagger weights file records (class i + 1 = label i)."""
    if LABELS_KEY not in metadata:
        raise ValueError(f"tagger weights carry no {LABELS_KEY!r} metadata")
    raw = metadata[LABELS_KEY]
    if not isinstance(raw, list):
        raise ValueError(f"tagger weights' {LABELS_KEY!r} metadata is not a list")
    return tuple(str(label) for label in raw)


@register_extractor("learned")
@register_extractor("tagger")
class LearnedTagger:
    """The shipped slot tagger; its lexicon must be the one it was trained for."""

    def __init__(self, lexicon: Lexicon) -> None:
        model = shipped_tagger()
        if lexicon.slots() != model.labels:
            raise ValueError(
                f"the shipped tagger was trained for another vocabulary ({len(model.labels)} "
                f"slots, e.g. {model.labels[0]!r}), not this lexicon's {len(lexicon.slots())} "
                "slots; use extractor 'teacher' or retrain it (python -m runner.train tagger)"
            )
        self._model = model

    def extract(self, text: str) -> str | None:
        return self._model.predict(text)
