"""Tokenisation shared by the embedder, the importance scorer and the extractors, and
an observation's tags."""

from __future__ import annotations

import re
from collections.abc import Mapping

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased ``[a-z0-9]+`` runs."""
    return _TOKEN.findall(text.lower())


def whitespace_tokens(text: str) -> int:
    """The token count used for memory cost: whitespace-separated words."""
    return len(text.split())


def parse_tags(meta: Mapping[str, str] | None) -> list[str]:
    """The tags of an observation: its meta ``tags``, comma-separated."""
    raw = (meta or {}).get("tags", "")
    return [t.strip() for t in raw.split(",") if t.strip()]
