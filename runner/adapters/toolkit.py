"""What an adapter may borrow from fbench to feed a library: fbench's embedders and its
memory-side slot extractors, by name, as its own memories use them.

- ``embedder(name)``: ``hashing`` (a 512-d bag of hashed words, dependency-free) or
  ``minilm`` (all-MiniLM-L6-v2, 384-d, from the local model package). Vectors are unit
  float64 arrays. MiniLM is a ``memcore.embed.BatchEmbedder``: an adapter that is
  ``Prefetches`` passes each block's texts to its ``prefetch``, and a process then shares
  the encoded batches between every job on the same stream (``memcore.minilm``).
- ``extractor(name, vocab)``: the memory's own reading of the slot a text asserts
  (``"entity.attribute"`` or None), from the workload's vocabulary (entity names and
  attribute phrases, as ``build`` receives it: never ground truth). ``keyword`` (the
  keyword teacher: canonical phrasing only), ``learned`` (the shipped tagger, on the
  vocabulary it was trained for) or ``auto`` (learned where it was trained for the
  vocabulary, else keyword). The harness-side extractors, which the harness tells the
  truth, are not offered.

A library's own one-text-at-a-time encoder is cached for the process by
``runner.adapters.embed_cache.CachedEmbed``; its clock is the stream's through
``fbench.clock.simulate`` or ``fbench.faketime.ClockedObject``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore import EMBEDDERS, EXTRACTORS, Lexicon
from memcore.embed import Embedder
from memcore.extract import Extractor
from runner.errors import FbenchError, lookup

if TYPE_CHECKING:  # `fbench list` loads adapters without the workloads
    from workloads import Vocabulary

MEMORY_SIDE = ("keyword", "learned", "auto")
ALIASES = {"teacher": "keyword", "tagger": "learned"}


def embedder(name: str) -> Embedder:
    """fbench's embedder ``name`` (``hashing`` or ``minilm``), ready to embed."""
    return lookup(EMBEDDERS, name, "embedder")()


def extractor(name: str, vocab: Vocabulary) -> Extractor:
    """fbench's memory-side extractor ``name`` for the workload's ``vocab``; a name the
    memory may not use (a harness-side one, or none) is one line naming those it may."""
    canonical = ALIASES.get(name, name)
    if canonical not in MEMORY_SIDE:
        raise FbenchError(f"extractor {name!r} is not one an adapter may use: "
                          f"{', '.join(MEMORY_SIDE)}")
    try:
        return EXTRACTORS[canonical](Lexicon(tuple(vocab.entities), tuple(vocab.phrases)))
    except ValueError as exc:  # the tagger on a vocabulary it was not trained for
        raise FbenchError(str(exc)) from None
