"""The slot tagger's network and features.

Features are hashed unigrams and bigrams of ``memcore.text.tokenize(text)``
(32-bit FNV-1a modulo ``buckets``); the network is
``EmbeddingBag(sum) + bias -> ReLU -> Linear`` giving logits over
``len(labels) + 1`` classes, class 0 meaning "no slot".
"""

from __future__ import annotations

import torch
from torch import nn

from memcore.extract.tagger import BUCKETS, LABELS_KEY, featurize, tagger_labels
from memcore.learned.weights import WeightsFile

HIDDEN = 32
__all__ = ["BUCKETS", "HIDDEN", "LABELS_KEY", "TaggerNet", "featurize", "tagger_from_weights"]


class TaggerNet(nn.Module):
    """Bag of hashed n-grams -> one hidden ReLU layer -> class logits."""

    def __init__(self, buckets: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(buckets, hidden, mode="sum")
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.out = nn.Linear(hidden, classes)

    @property
    def buckets(self) -> int:
        return int(self.bag.num_embeddings)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """Logits ``(bags, classes)`` for flat ``ids`` split into bags at ``offsets``."""
        hidden = torch.relu(self.bag(ids, offsets) + self.bias)
        return self.out(hidden)


def tagger_from_weights(weights: WeightsFile[torch.Tensor]
                        ) -> tuple[TaggerNet, tuple[str, ...]]:
    """Rebuild the network (shapes read from the tensors) and its labels; never trains."""
    labels = tagger_labels(weights.metadata)
    buckets, hidden = weights.tensors["bag.weight"].shape
    classes = weights.tensors["out.weight"].shape[0]
    if classes != len(labels) + 1:
        raise ValueError(f"tagger weights have {classes} classes for {len(labels)} labels")
    net = TaggerNet(int(buckets), int(hidden), int(classes))
    net.load_state_dict(weights.tensors, strict=True)
    net.eval()
    net.requires_grad_(False)
    return net, labels
