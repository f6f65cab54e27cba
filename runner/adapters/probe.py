"""Probing an incumbent's library: present, or a one-line error naming the extra.

An adapter never substitutes a re-implementation or a score for a missing library.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from runner.errors import FbenchError

EXTRA = "incumbents"


def require(module: str, package: str, policy: str) -> ModuleType:
    """Import ``module`` (of pip package ``package``) or fail the job in one line."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise FbenchError(
            f"policy {policy!r} needs the {package} package, which is not installed; "
            f"install the extra: pip install -e '.[{EXTRA}]'"
        ) from None
