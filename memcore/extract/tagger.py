"""tagger: a small PyTorch slot tagger that imitates the keyword teacher.

Hashed unigrams and bigrams -> ``EmbeddingBag(sum)`` -> ReLU -> linear -> softmax
over "no slot" plus every slot of the lexicon it was trained for. It answers a
slot only when that slot is the top class with probability at least ``MIN_PROB``.

The weights ship in ``memcore/weights/tagger.safetensors`` (retrain with
``python -m runner.train tagger``) and are loaded once per process, with a
per-process cache of answers by text, so building an extractor per job is cheap.
Loading never trains. torch is imported on first use, not with ``memcore``.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING

from memcore.extract.base import Lexicon, register_extractor

if TYPE_CHECKING:
    from memcore.learned.tagger_net import TaggerNet

MIN_PROB = 0.5
NAME = "tagger"


class _ShippedTagger:
    """The loaded network and its labels, with answers cached by text."""

    def __init__(self, net: TaggerNet, labels: tuple[str, ...]) -> None:
        import torch

        from memcore.learned.tagger_net import featurize

        self.net = net
        self.labels = labels
        self._torch = torch
        self._featurize = featurize
        self._offsets = torch.zeros(1, dtype=torch.long)  # one bag per call
        self.predict = lru_cache(maxsize=1 << 16)(self._predict)

    def _predict(self, text: str) -> str | None:
        """The slot of ``text``: the top class if it is a slot with p >= ``MIN_PROB``."""
        ids = self._featurize(text, self.net.buckets)
        if not ids:
            return None
        torch = self._torch
        with torch.inference_mode():
            logits = self.net(torch.tensor(ids), self._offsets)
            prob, cls = torch.softmax(logits[0], 0).max(0)
        c = int(cls)
        return self.labels[c - 1] if c > 0 and float(prob) >= MIN_PROB else None


@cache
def shipped_tagger() -> _ShippedTagger:
    """The shipped tagger, loaded once per process (``cache_clear()`` reloads)."""
    from memcore.learned.tagger_net import tagger_from_weights
    from memcore.learned.weights import load_weights, weights_path

    return _ShippedTagger(*tagger_from_weights(load_weights(weights_path(NAME))))


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
