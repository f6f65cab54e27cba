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
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fbench.clock import Clock, convert, default_on, is_duration, parse
from runner.errors import FbenchError

Scalar = bool | int | float | str
# the clock of the workload the canonical params run (a duration with a unit converts on
# it), and the workload's name
ClockOf = Callable[[Mapping[str, Scalar]], tuple[Clock, str]]
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
    clock: ClockOf | None = None,
) -> dict[str, Scalar]:
    """Canonical ``{"namespace.key": typed value}`` from raw assignments.

    ``declared`` maps each namespace to its params dataclass and ``where`` names
    what owns it (for messages, e.g. ``{"policy": "policy 'ebbinghaus'"}``). A duration
    given with a unit (``tau=30d``) is converted on ``clock``'s clock into the stream's
    unit; a bare number is in the stream's unit already.
    """
    tables = {ns: fields_of(cls) for ns, cls in declared.items()}
    out: dict[str, Scalar] = {}
    timed: list[tuple[str, str]] = []  # durations with a unit, converted once out is known
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
        if isinstance(raw, str) and is_duration(declared[owners[0]], name) and (
                (parse(raw) or (0.0, None))[1] is not None):
            timed.append((full, raw))
            continue
        out[full] = coerce(raw, tables[owners[0]][name][0], full)
    here = clock(out) if clock is not None else None
    out.update(durations(timed, here))
    for ns, cls in declared.items():
        build(cls, out, ns, where.get(ns, ns))
        # A value equal to its default (on the workload's clock) is no override: the
        # same job keeps one id.
        for f in dataclasses.fields(cls):
            default = (default_on(f, here[0]) if here is not None and is_duration(cls, f.name)
                       else f.default)
            if out.get(f"{ns}.{f.name}", _MISSING) == default:
                del out[f"{ns}.{f.name}"]
    return dict(sorted(out.items()))


def durations(timed: list[tuple[str, str]], here: tuple[Clock, str] | None
              ) -> dict[str, Scalar]:
    """Each ``(key, "30d")`` as a number of units of the clock of ``here`` (the clock
    and the workload's name)."""
    if not timed:
        return {}
    if here is None:
        key, raw = timed[0]
        raise FbenchError(f"parameter {key}={raw!r} has a unit but no workload's clock to "
                          f"convert it on; give it as a bare number")
    on, workload = here
    converted: dict[str, Scalar] = {}
    for key, raw in timed:
        try:
            converted[key] = convert(key, raw, on, workload)
        except ValueError as exc:
            raise FbenchError(str(exc)) from None
    return converted


def clock_defaults(declared: Mapping[str, type], canonical: Mapping[str, Scalar],
                   clock: Clock) -> dict[str, Scalar]:
    """The durations not set in ``canonical`` whose default on ``clock`` is not their
    field's own (``fbench.clock.default_on``), as canonical ``namespace.key``."""
    out: dict[str, Scalar] = {}
    for ns, cls in declared.items():
        for f in dataclasses.fields(cls):
            key = f"{ns}.{f.name}"
            if key not in canonical and is_duration(cls, f.name):
                value = default_on(f, clock)
                if value != f.default:
                    out[key] = value
    return out


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
