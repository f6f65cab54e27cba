"""Tokenisation shared by the embedder, the importance scorer and the extractors."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased ``[a-z0-9]+`` runs."""
    return _TOKEN.findall(text.lower())


def whitespace_tokens(text: str) -> int:
    """The token count used for memory cost: whitespace-separated words."""
    return len(text.split())
