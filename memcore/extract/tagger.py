"""STUB — replaced by the learned tagger implementation."""

from memcore.extract.base import Lexicon, register_extractor
from memcore.extract.teacher import KeywordTeacher


@register_extractor("tagger")
def _tagger(lexicon: Lexicon) -> KeywordTeacher:
    return KeywordTeacher(lexicon)
