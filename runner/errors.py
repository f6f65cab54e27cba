"""User-facing errors: the CLI prints their one-line message and exits 2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from fbench.errors import FbenchError
from fbench.registry import Registry, unknown

T = TypeVar("T")


def lookup(registry: Mapping[str, T], name: str, kind: str) -> T:
    """``registry[name]``, or an error listing the known names (and the closest)."""
    if isinstance(registry, Registry):
        return registry.lookup(name, kind)
    if name in registry:
        return registry[name]
    raise FbenchError(unknown(name, kind, registry))


__all__ = ["FbenchError", "lookup", "unknown"]
