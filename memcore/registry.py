"""The one registry pattern of memcore: a dict of names and a decorator that adds to it,
refusing a name registered twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def registrar(registry: dict[str, T], kind: str) -> Callable[[str], Callable[[T], T]]:
    """``register(name)``: a decorator adding its target to ``registry`` under ``name``."""

    def register(name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in registry:
                raise ValueError(f"{kind} {name!r} is registered twice")
            registry[name] = obj
            return obj

        return deco

    return register
