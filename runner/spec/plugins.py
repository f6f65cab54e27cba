"""The plugins a sweep runs: where their code came from, and what a Ray worker needs
to import them.

A file plugin (``mymem:RecencyMem`` from ``./mymem.py``) travels to the workers as a
package folder holding a copy of the file (Ray's ``py_modules`` takes folders), so
``import mymem`` gives the same source, hence the same identity, on every node. An
installed distribution's plugin travels as its top-level package folder, with its entry
points in the workers' environment (``PLUGIN_TARGETS``), so a node without the
distribution installed still resolves its names to the same code and identity.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

from fbench.registry import PLUGIN_TARGETS, Origin, plugin_targets
from runner.adapters import MEMORIES
from runner.spec.jobspec import JobSpec
from workloads import WORKLOADS

SHIP_ROOT = Path(tempfile.gettempdir()) / "fbench-plugins"


def plugin_origins(jobs: list[JobSpec]) -> dict[str, tuple[str, Origin]]:
    """``{name: (its entry-point group, origin)}`` of every plugin memory and workload
    the jobs run."""
    out: dict[str, tuple[str, Origin]] = {}
    for name in sorted({j.policy for j in jobs if j.code}):
        out[name] = (MEMORIES.group or "", MEMORIES.origin(name))
    for name in sorted({j.workload for j in jobs if j.code}):
        out[name] = (WORKLOADS.group or "", WORKLOADS.origin(name))
    return {n: (g, o) for n, (g, o) in out.items() if o.identity}


def _package_of(module_name: str) -> Path | None:
    """The folder of the module's top-level package (None for a single-file module)."""
    spec = importlib.util.find_spec(module_name.split(".")[0])
    folders = spec.submodule_search_locations if spec is not None else None
    return Path(next(iter(folders))) if folders else None


def ship_folder(origin: Origin) -> str:
    """A folder to ship as ``py_modules`` so a worker imports the plugin's module."""
    module = origin.target.partition(":")[0]
    package = _package_of(module)
    if package is not None:
        return str(package)
    # a single-file module: a package of that name holding a copy of the file
    folder = SHIP_ROOT / origin.version.replace(":", "-")[:30] / module
    if not (folder / "__init__.py").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origin.path, folder / "__init__.py")
    return str(folder)


def plugin_folders(jobs: list[JobSpec]) -> list[str]:
    """The folders a worker needs for the jobs' plugins (none for fbench's own)."""
    return sorted({ship_folder(o) for _, o in plugin_origins(jobs).values()})


def plugin_env(jobs: list[JobSpec]) -> dict[str, str]:
    """What a cluster worker's environment needs to resolve the jobs' installed plugins
    by name without their distribution's metadata."""
    origins = plugin_origins(jobs)
    return {PLUGIN_TARGETS: plugin_targets(origins)} if origins else {}
