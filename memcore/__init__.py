"""The reference memory core: a columnar store with pluggable forgetting policies,
extractors and embedders. Imports nothing of fbench's other packages: the memory
never sees ground truth."""

from memcore import minilm as _minilm  # noqa: F401  (registers the minilm embedder)
from memcore.embed import EMBEDDERS, Embedder, HashingEmbedder
from memcore.extract import EXTRACTORS, Extractor, Lexicon
from memcore.policies import POLICIES, Policy, Removal, register_policy
from memcore.store import Hit, MemoryStore, StoreParams

__all__ = [
    "EMBEDDERS",
    "EXTRACTORS",
    "POLICIES",
    "Embedder",
    "Extractor",
    "HashingEmbedder",
    "Hit",
    "Lexicon",
    "MemoryStore",
    "Policy",
    "Removal",
    "StoreParams",
    "register_policy",
]
