"""The keyword teacher: the first known entity among the tokens plus the longest
canonical attribute phrase in the text; anything less is no slot."""

from __future__ import annotations

from memcore.extract.base import Lexicon, register_extractor
from memcore.text import tokenize


@register_extractor("keyword")
@register_extractor("teacher")
class KeywordTeacher:
    """Links canonical phrasing only: a paraphrase never restates the phrase."""

    def __init__(self, lexicon: Lexicon) -> None:
        self._entities = frozenset(lexicon.entities)
        # Longest phrase first; matched on whole tokens.
        self._phrases = sorted(
            ((" " + " ".join(tokenize(p)) + " ", a) for p, a in lexicon.phrases),
            key=lambda pa: -len(pa[0]),
        )

    def extract(self, text: str) -> str | None:
        tokens = tokenize(text)
        entity = next((tok for tok in tokens if tok in self._entities), None)
        if entity is None:
            return None
        joined = " " + " ".join(tokens) + " "
        for phrase, attr in self._phrases:
            if phrase in joined:
                return f"{entity}.{attr}"
        return None
