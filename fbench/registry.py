"""The one generic registry: ``name -> entry``, for every kind fbench accepts by name
(memories and policies, workloads, embedders, extractors, backends, executors,
metrics). It imports nothing of fbench, so every package may use it.

Where an entry comes from, in lookup order:

1. **built in**: ``register(name)(obj)`` (a decorator) or ``add(name, obj)``; a name
   registered twice raises.
2. **derived**: ``derive(name)`` computes an entry from others at lookup
   (``pinned.<policy>``, the reference memory of a policy, a per-category metric), so
   a late registration is seen whole; ``derived_names()`` lists them and
   ``derived_origin(name)`` says whose code they run (a plugin policy's wrapper is
   that plugin's).
3. **an installed distribution's entry point** in the registry's ``group``
   (``fbench.policies``, ...), imported only when looked up (one that imports a
   missing library of an extra of fbench names the extra: ``fbench.extras``).
4. **``module:attr``**: imported from the current directory or ``PYTHONPATH``.

A plugin entry passes through ``adapt(obj, name)`` (which may refuse it with a
``TypeError``) and carries its ``Origin``: the distribution and its version, or the
source file and its SHA-256, so results can follow code. An unknown name is a
``RegistryError`` naming the closest known name and the known ones.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fbench.extras import extra_of, missing
from fbench.plugins import (
    BUILTIN,
    PLUGIN_TARGETS,
    Origin,
    RegistryError,
    distribution_origin,
    file_origin,
    import_target,
    installed_entry_points,
    loader,
    plugin_targets,
)

T = TypeVar("T")


@dataclass
class _Entry(Generic[T]):
    origin: Origin
    value: T | None = None
    load: Callable[[], Any] | None = None  # an entry point, imported on first lookup
    derived: bool = False


class Registry(Mapping[str, T]):
    """``name -> T`` with built-in, derived and plugin entries (see the module doc)."""

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        adapt: Callable[[Any, str], T] | None = None,
        derive: Callable[[str], T | None] | None = None,
        derived_names: Callable[[], Iterable[str]] | None = None,
        derived_origin: Callable[[str], Origin] | None = None,
        sort: bool = True,
    ) -> None:
        self.kind = kind
        self.group = group
        self._adapt = adapt
        self._derive = derive
        self._derived_names = derived_names
        self._derived_origin = derived_origin
        self._sort = sort  # False: names in registration order, then derived, then plugins
        self._entries: dict[str, _Entry[T]] = {}
        self._scanned = group is None

    # -- registering -----------------------------------------------------------------

    def add(self, name: str, obj: T, origin: Origin = BUILTIN) -> T:
        """Register ``obj`` under ``name``; a name registered twice raises."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = _Entry(origin, obj)
        return obj

    def register(self, name: str) -> Callable[[Any], Any]:
        """Decorator: ``@REGISTRY.register("name")`` adds its target."""

        def deco(obj: Any) -> Any:
            self.add(name, obj)
            return obj

        return deco

    # -- looking up ------------------------------------------------------------------

    def _scan(self) -> None:
        """Entry points of ``group``, recorded (not imported) once; then the driver's
        entry points passed to a cluster node that lacks the distribution's metadata
        (``PLUGIN_TARGETS``: the plugin's code is shipped to it)."""
        if self._scanned:
            return
        self._scanned = True
        assert self.group is not None
        for ep in installed_entry_points(self.group):
            if ep.name in self._entries:
                continue  # a built-in name wins; the plugin is shadowed
            self._entries[ep.name] = _Entry(distribution_origin(ep), load=ep.load)
        passed = json.loads(os.environ.get(PLUGIN_TARGETS) or "{}").get(self.group, {})
        for name, (target, dist, version) in passed.items():
            if name not in self._entries:
                origin = Origin("distribution", dist, version, target)
                self._entries[name] = _Entry(origin, load=loader(target))

    def _plugin(self, obj: Any, name: str) -> T:
        if self._adapt is None:
            return obj
        try:
            return self._adapt(obj, name)
        except TypeError as exc:
            raise RegistryError(f"{self.kind} plugin {name!r} cannot be used: {exc}") from None

    def _resolve(self, name: str) -> _Entry[T] | None:
        entry = self._entries.get(name)
        if entry is None and self._derive is not None:
            derived = self._derive(name)
            if derived is not None:
                origin = BUILTIN if self._derived_origin is None else self._derived_origin(name)
                entry = self._entries[name] = _Entry(origin, derived, derived=True)
        if entry is None:
            self._scan()
            entry = self._entries.get(name)
        if entry is None and ":" in name:
            module, obj = import_target(name)
            entry = self._entries[name] = _Entry(file_origin(module, name),
                                                 self._plugin(obj, name))
        if entry is not None and entry.value is None and entry.load is not None:
            try:
                loaded = entry.load()
            except Exception as exc:
                raise RegistryError(self._unloadable(name, entry, exc)) from None
            entry.value, entry.load = self._plugin(loaded, name), None
        return entry

    def _unloadable(self, name: str, entry: _Entry[T], exc: Exception) -> str:
        """Why an entry point fails to import, in one line: the extra to install when a
        library of one of fbench's extras is missing, else the error itself."""
        lacks = exc.name if isinstance(exc, ModuleNotFoundError) else None
        if lacks and extra_of(lacks):
            return str(missing(f"{self.kind} {name!r}", lacks))
        return (f"{self.kind} {name!r} from {entry.origin.describe()} cannot be imported "
                f"({type(exc).__name__}: {exc}); reinstall that package")

    def __getitem__(self, name: str) -> T:
        entry = self._resolve(name)
        if entry is None:
            raise KeyError(name)
        assert entry.value is not None
        return entry.value

    def __contains__(self, name: object) -> bool:
        try:
            return isinstance(name, str) and self._resolve(name) is not None
        except RegistryError:
            return False

    def lookup(self, name: str, what: str | None = None) -> T:
        """``self[name]``, or a ``RegistryError`` naming the closest and the known ones."""
        entry = self._resolve(name)
        if entry is None:
            raise RegistryError(unknown(name, what or self.kind, self.names()))
        assert entry.value is not None
        return entry.value

    def origin(self, name: str) -> Origin:
        """Where the entry ``name`` came from (it must resolve)."""
        entry = self._resolve(name)
        if entry is None:
            raise RegistryError(unknown(name, self.kind, self.names()))
        return entry.origin

    def entry_names(self) -> list[str]:
        """The names registered or installed (entry points), and the ``module:attr``
        ones resolved so far; not the derived ones (``derived_names`` builds on this)."""
        self._scan()
        return sorted(n for n, e in self._entries.items() if not e.derived)

    def builtin_names(self) -> list[str]:
        """The names of fbench's own entries (nothing is imported to tell)."""
        self._scan()
        return sorted(n for n, e in self._entries.items()
                      if e.origin.source == "builtin" and not e.derived)

    def names(self) -> list[str]:
        """Every listed name (sorted, or in registration order): registered, derived and
        installed plugins."""
        self._scan()
        own = [n for n, e in self._entries.items()
               if e.origin.source == "builtin" and not e.derived]
        derived = list(self._derived_names()) if self._derived_names is not None else []
        plugins = sorted(n for n, e in self._entries.items() if e.origin.source != "builtin")
        names = list(dict.fromkeys([*own, *derived, *plugins]))
        return sorted(names) if self._sort else names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def unknown(name: str, kind: str, known: Iterable[str]) -> str:
    """The one-line message for an unknown name: the closest known one, and all."""
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; known: {', '.join(names)}"


__all__ = ["BUILTIN", "PLUGIN_TARGETS", "Origin", "Registry", "RegistryError", "file_origin",
           "import_target", "plugin_targets", "unknown"]
