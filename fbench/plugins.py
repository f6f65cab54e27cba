"""Where a plugin comes from: its ``Origin`` (a distribution and its version, or a
module and its source file's SHA-256), importing ``module:attr`` targets, and passing a
driver's entry points to cluster workers (``PLUGIN_TARGETS``)."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from fbench.errors import FbenchError


class RegistryError(FbenchError):
    """An unknown name, or a plugin that cannot be loaded (one line: what and the fix)."""


@dataclass(frozen=True)
class Origin:
    """Where an entry came from. ``identity`` is empty for fbench's own entries (their
    code is fbench's version and commit, recorded with every shard) and otherwise
    names the plugin's code exactly: it is part of a job's identity."""

    source: str            # "builtin", "distribution" or "file"
    where: str = "fbench"  # the distribution's name, or the module's name
    version: str = ""      # the distribution's version, or "sha256:<hex>" of the file
    target: str = ""       # "module:attr" of a plugin
    path: str = ""         # the module's source file (a file plugin)

    @property
    def identity(self) -> str:
        if self.source == "builtin":
            return ""
        if self.source == "distribution":
            return f"{self.where}=={self.version}"
        return f"{self.where}@{self.version}"

    def describe(self) -> str:
        if self.source == "builtin":
            return "fbench"
        if self.source == "distribution":
            return f"{self.where} {self.version} ({self.target})"
        return f"{self.path or self.where} ({self.version[:19]})"


BUILTIN = Origin("builtin")


class _Installed(Protocol):
    """All installed entry points: ``SelectableGroups`` on Python 3.11, ``EntryPoints``
    from 3.12; both select one group."""

    def select(self, *, group: str) -> metadata.EntryPoints: ...


_INSTALLED: dict[tuple[str, ...], _Installed] = {}


def installed_entry_points(group: str) -> metadata.EntryPoints:
    """The installed distributions' entry points in ``group``. Every distribution's
    metadata is read once a process (for a given ``sys.path``), not once a group: a
    scan opens a file in each of some hundreds of distributions."""
    key = tuple(sys.path)
    if key not in _INSTALLED:
        _INSTALLED[key] = metadata.entry_points()
    return _INSTALLED[key].select(group=group)


def file_origin(module: Any, target: str) -> Origin:
    """The origin of an object defined in ``module``: its source file and SHA-256."""
    path = Path(str(module.__file__ or "")) if hasattr(module, "__file__") else Path()
    if not path.is_file():
        return Origin("file", module.__name__, "sha256:unknown", target)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Origin("file", module.__name__, f"sha256:{digest}", target, str(path.resolve()))


def import_target(target: str) -> tuple[Any, Any]:
    """``(module, object)`` of ``"module:attr"`` (``attr`` may be dotted), importable
    from the current directory or ``PYTHONPATH``."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise RegistryError(f"plugin {target!r} is not module:attr; write e.g. mymem:MyMemory")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)  # the console script's sys.path[0] is its bin folder
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        where = ("put it in the current directory or on PYTHONPATH" if exc.name == module_name
                 else "install what it imports")
        raise RegistryError(f"cannot import plugin module {module_name!r} ({exc}); {where}"
                            ) from None
    except Exception as exc:  # the plugin's own code failed while importing
        raise RegistryError(f"plugin module {module_name!r} fails to import "
                            f"({type(exc).__name__}: {exc}); fix that module") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise RegistryError(f"plugin module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return module, obj


def distribution_origin(ep: metadata.EntryPoint) -> Origin:
    """An entry point's distribution and version; fbench's own entry points (its
    incumbents, the oracle) are built in: their code is fbench's."""
    dist = ep.dist
    name = str(dist.metadata["Name"]) if dist is not None else "unknown"
    if name == "fbench":
        return Origin("builtin", target=ep.value)
    version = dist.version if dist is not None else "unknown"
    return Origin("distribution", name, str(version), ep.value)


# The environment variable through which a driver passes its installed plugins' entry
# points ({group: {name: [module:attr, distribution, version]}}) to cluster workers.
PLUGIN_TARGETS = "FBENCH_PLUGIN_TARGETS"


def loader(target: str) -> Callable[[], Any]:
    return lambda: import_target(target)[1]


def plugin_targets(origins: Mapping[str, tuple[str, Origin]]) -> str:
    """``PLUGIN_TARGETS``'s value for ``{name: (group, origin)}`` (distributions only)."""
    out: dict[str, dict[str, list[str]]] = {}
    for name, (group, o) in sorted(origins.items()):
        if o.source == "distribution":
            out.setdefault(group, {})[name] = [o.target, o.where, o.version]
    return json.dumps(out, sort_keys=True)
