"""The heuristic importance scorer of the seed (an LLM could replace it)."""

from __future__ import annotations

from functools import lru_cache

from memcore.text import tokenize, whitespace_tokens

SALIENT = frozenset(
    "prefers favorite always never allergic birthday deadline password lives works "
    "married now changed moved switched important".split()
)


def importance_of(salient: int, tokens: int) -> float:
    """``min(1, min(1, 0.3 + 0.25·salient) + min(0.2, 0.02·tokens))``."""
    return min(1.0, min(1.0, 0.3 + 0.25 * salient) + min(0.2, 0.02 * tokens))


def heuristic_importance(tokens: list[str]) -> float:
    """``importance_of`` the salient tokens and all of them."""
    return importance_of(sum(1 for tok in tokens if tok in SALIENT), len(tokens))


# Every importance there is: from 3 salient tokens the first term is 1, from 11 tokens
# the second is 0.2 (``tests/test_due.py`` checks them all, to 40 tokens): what a policy
# may prepare for (``learned_forget``'s table of its network's answers)
IMPORTANCES = tuple(sorted({importance_of(s, n) for s in range(4) for n in range(12)}))


@lru_cache(maxsize=16384)
def text_importance(text: str) -> float:
    """``heuristic_importance`` of ``text``'s tokens, once per text (texts recur)."""
    return heuristic_importance(tokenize(text))


@lru_cache(maxsize=16384)
def text_cost(text: str) -> tuple[float, int]:
    """``text``'s importance and its token count (``whitespace_tokens``): what an entry
    of that text costs and is worth, once per text."""
    return text_importance(text), whitespace_tokens(text)
