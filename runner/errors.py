"""User-facing errors: the CLI prints their one-line message and exits 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


class FbenchError(Exception):
    """Bad input or configuration, explained in one line (names the problem and the fix)."""


def lookup(registry: Mapping[str, T], name: str, kind: str) -> T:
    """``registry[name]``, or an error listing the known names (and the closest)."""
    if name in registry:
        return registry[name]
    raise FbenchError(unknown(name, kind, registry))


def unknown(name: str, kind: str, known: Iterable[str]) -> str:
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; known: {', '.join(names)}"
