"""auto: the learned tagger where its shipped weights were trained for this lexicon,
else the keyword teacher (a workload the tagger has never seen)."""

from __future__ import annotations

from memcore.extract.base import Extractor, Lexicon, register_extractor
from memcore.extract.tagger import LearnedTagger
from memcore.extract.teacher import KeywordTeacher


@register_extractor("auto")
def auto_extractor(lexicon: Lexicon) -> Extractor:
    """The learned tagger where its shipped weights were trained for this lexicon, else
    the keyword teacher."""
    try:
        return LearnedTagger(lexicon)
    except ValueError:
        return KeywordTeacher(lexicon)
