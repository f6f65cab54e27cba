"""Where a result came from: package and library versions, and the git commit.

A sweep's driver computes this once and ships it with every task: on a cluster node
fbench arrives as shipped folders, not an installed, checked-out package, and its
shards must still name the code that produced them.
"""

from __future__ import annotations

import platform
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = ("numpy", "pyarrow", "torch", "ray", "typer", "matplotlib", "statebench")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


@cache
def versions(libraries: tuple[str, ...] = ()) -> dict[str, str]:
    """fbench, python and library versions, and those of ``libraries`` (the
    distributions the memories of a sweep drive: ``MemoryKind.library``), read from
    metadata: no library is imported."""
    out = {"fbench": _version("fbench"), "python": platform.python_version()}
    out.update({lib: _version(lib) for lib in (*LIBRARIES, *libraries)})
    return out


@cache
def git_commit() -> str:
    """The commit of the fbench checkout, if it is one ('' otherwise)."""
    try:
        res = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
            capture_output=True, text=True, timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout.strip() if res.returncode == 0 else ""


def provenance(libraries: tuple[str, ...] = ()) -> dict[str, Any]:
    """This process's versions (with ``libraries``') and git commit, as shipped to
    workers."""
    return {"versions": versions(tuple(libraries)), "git_commit": git_commit()}
