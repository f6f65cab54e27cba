"""Parameters: ``namespace.key=value`` strings validated against the frozen
dataclass that declares them (``policy``, ``workload`` or ``store``).

A bare ``key`` is accepted when exactly one namespace declares it. Values are
coerced to the field's type and checked by the dataclass's ``__post_init__``;
any problem is a one-line ``FbenchError``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from runner.errors import FbenchError

Scalar = bool | int | float | str
NAMESPACES = ("policy", "workload", "store")
OWN = "own"  # a memory's embedder when it ranks by its own means (no shared embedder)
_MISSING = object()


@functools.cache
def fields_of(cls: type) -> dict[str, tuple[type, Any]]:
    """``{name: (type, default)}`` of a params dataclass."""
    hints = typing.get_type_hints(cls)
    return {f.name: (hints[f.name], f.default) for f in dataclasses.fields(cls)}


def coerce(raw: Scalar, typ: type, key: str) -> Scalar:
    if isinstance(raw, str) and typ is not str:
        text = raw.strip()
        try:
            if typ is bool:
                if text.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                return text.lower() in ("true", "1")
            if typ is int:
                return int(text)
            if typ is float:
                value = float(text)
                if not math.isfinite(value):
                    raise FbenchError(f"parameter {key}={raw!r} must be a finite number")
                return value
        except ValueError:
            raise FbenchError(
                f"parameter {key}={raw!r} is not a valid {typ.__name__}; give e.g. "
                f"{key}={typ()!r}"
            ) from None
    if typ is float and isinstance(raw, int | float) and not isinstance(raw, bool):
        if not math.isfinite(raw):
            raise FbenchError(f"parameter {key}={raw!r} must be a finite number")
        return float(raw)
    if not isinstance(raw, typ) or (typ is int and isinstance(raw, bool)):
        raise FbenchError(f"parameter {key}={raw!r} must be a {typ.__name__}")
    return raw


def split_assignment(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise FbenchError(f"parameter {text!r} is not key=value; write e.g. --param tau=150")
    return key.strip(), value


def resolve(
    assignments: Iterable[tuple[str, Scalar]],
    declared: Mapping[str, type],
    where: Mapping[str, str],
) -> dict[str, Scalar]:
    """Canonical ``{"namespace.key": typed value}`` from raw assignments.

    ``declared`` maps each namespace to its params dataclass and ``where`` names
    what owns it (for messages, e.g. ``{"policy": "policy 'ebbinghaus'"}``).
    """
    tables = {ns: fields_of(cls) for ns, cls in declared.items()}
    out: dict[str, Scalar] = {}
    for key, raw in assignments:
        ns, dot, name = key.partition(".")
        if dot and ns in tables:
            owners = [ns]
        else:
            name = key
            owners = [n for n, t in tables.items() if name in t]
        if not owners or name not in tables[owners[0]]:
            raise FbenchError(unknown_key(key, name, tables))
        if len(owners) > 1:
            raise FbenchError(
                f"parameter {key!r} is ambiguous; write one of "
                + ", ".join(f"{n}.{name}" for n in owners)
            )
        full = f"{owners[0]}.{name}"
        out[full] = coerce(raw, tables[owners[0]][name][0], full)
    for ns, cls in declared.items():
        build(cls, out, ns, where.get(ns, ns))
        # A value equal to its default is no override: the same job keeps one id.
        for name, (_, default) in tables[ns].items():
            if out.get(f"{ns}.{name}", _MISSING) == default:
                del out[f"{ns}.{name}"]
    return dict(sorted(out.items()))


def close_keys(key: str, name: str, tables: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The declared ``namespace.key`` names closest to a mistyped ``key`` (its bare
    part ``name``): matched against both the namespaced and the bare names, best first,
    so ``tua`` finds ``policy.tau``, and so does ``store.tau`` (a key in the wrong
    namespace)."""
    full: dict[str, list[str]] = {}  # a candidate as it may be typed -> the keys it means
    for ns, table in tables.items():
        for k in table:
            full.setdefault(f"{ns}.{k}", []).append(f"{ns}.{k}")
            full.setdefault(k, []).append(f"{ns}.{k}")
    score: dict[str, float] = {}  # a declared key -> its best similarity to what was typed
    for typed in dict.fromkeys((key, name)):
        for match in difflib.get_close_matches(typed, list(full), n=3):
            ratio = difflib.SequenceMatcher(None, typed, match).ratio()
            for k in full[match]:
                score[k] = max(score.get(k, 0.0), ratio)
    return sorted(score, key=lambda k: (-score[k], k))[:3]


def unknown_key(key: str, name: str, tables: Mapping[str, Mapping[str, object]]) -> str:
    """The one-line message for an undeclared parameter: the closest keys, then all."""
    known = sorted(f"{n}.{k}" for n, t in tables.items() for k in t)
    close = close_keys(key, name, tables)
    hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    return f"unknown parameter {key!r}{hint}; known: {', '.join(known) or 'none'}"


def build(cls: type, params: Mapping[str, Scalar], ns: str, owner: str) -> Any:
    """Instantiate ``cls`` from the ``ns.*`` entries of canonical params."""
    prefix = ns + "."
    kwargs = {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise FbenchError(f"bad parameter for {owner}: {exc}") from None
