"""Slot extraction: text -> ``"entity.attribute"`` or ``None``. An axis of its own,
separate from forgetting. Extractors are registered by name and built from a
``Lexicon`` (the domain's entity names and attribute phrases, never ground truth)."""

from memcore.extract import auto as _auto  # noqa: F401  (registers)
from memcore.extract import tagger as _tagger  # noqa: F401  (registers)
from memcore.extract import teacher as _teacher  # noqa: F401  (registers)
from memcore.extract.base import EXTRACTORS, Extractor, Lexicon, register_extractor

__all__ = ["EXTRACTORS", "Extractor", "Lexicon", "register_extractor"]
