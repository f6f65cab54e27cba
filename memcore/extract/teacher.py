"""The keyword teacher: the first known entity among the tokens plus the longest
canonical attribute phrase in the text; anything less is no slot."""

from __future__ import annotations

from functools import lru_cache

from memcore.extract.base import Lexicon, register_extractor
from memcore.text import tokenize

ANSWERS_KEPT = 1 << 16  # texts whose slot is kept, per lexicon (then the lot is dropped)


@lru_cache(maxsize=64)
def _answers(lexicon: Lexicon) -> dict[str, str | None]:
    """The slots found so far with ``lexicon``, by text: texts recur (chitchat, the
    same capture on another day) and the answer is a function of the two alone, so
    the extractors of one lexicon (a job's each) share them in a process."""
    return {}


@register_extractor("keyword")
@register_extractor("teacher")
class KeywordTeacher:
    """Links canonical phrasing only: a paraphrase never restates the phrase."""

    def __init__(self, lexicon: Lexicon) -> None:
        self._answers = _answers(lexicon)
        self._entities = frozenset(lexicon.entities)
        # Longest phrase first; matched on whole tokens.
        self._phrases = sorted(
            ((" " + " ".join(tokenize(p)) + " ", a) for p, a in lexicon.phrases),
            key=lambda pa: -len(pa[0]),
        )

    def extract(self, text: str) -> str | None:
        try:
            return self._answers[text]
        except KeyError:
            pass
        if len(self._answers) >= ANSWERS_KEPT:
            self._answers.clear()
        slot = self._answers[text] = self._find(text)
        return slot

    def _find(self, text: str) -> str | None:
        tokens = tokenize(text)
        entity = next((tok for tok in tokens if tok in self._entities), None)
        if entity is None:
            return None
        joined = " " + " ".join(tokens) + " "
        for phrase, attr in self._phrases:
            if phrase in joined:
                return f"{entity}.{attr}"
        return None
