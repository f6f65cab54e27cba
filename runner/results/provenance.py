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


def memory_libraries() -> tuple[str, ...]:
    """The distributions the registered memories declare they drive
    (``MemoryKind.library``: the incumbents', and any plugin's)."""
    from runner.adapters import MEMORIES

    return tuple(dict.fromkeys(lib for name in MEMORIES.names()
                               for lib in MEMORIES[name].library))


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


@cache
def versions() -> dict[str, str]:
    """fbench, python and library versions, the memories' libraries among them (read
    from metadata: no library is imported)."""
    out = {"fbench": _version("fbench"), "python": platform.python_version()}
    out.update({lib: _version(lib) for lib in (*LIBRARIES, *memory_libraries())})
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


def provenance() -> dict[str, Any]:
    """This process's versions and git commit, as shipped to workers."""
    return {"versions": versions(), "git_commit": git_commit()}
