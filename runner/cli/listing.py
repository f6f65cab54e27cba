"""``fbench list``: what is registered (plugins with where they came from)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich.console import RenderableType
from rich.markup import escape
from rich.table import Column, Table

from fbench.registry import RegistryError
from runner.cli.app import app, console, user_errors

Lister = Callable[[list[str]], RenderableType]
LISTERS: dict[str, Lister] = {}


def lister(name: str) -> Callable[[Lister], Lister]:
    def deco(fn: Lister) -> Lister:
        LISTERS[name] = fn
        return fn

    return deco


def _row(table: Table, *cells: str) -> None:
    """A row of names, parameters and descriptions as written: rich markup escaped, so
    ``[age, importance]`` in a description is text, not a style tag."""
    table.add_row(*(escape(c) for c in cells))


def _params_text(cls: type | None) -> str:
    if cls is None:
        return ""
    import dataclasses

    from fbench.clock import DURATION

    def shown(f: dataclasses.Field[object]) -> str:
        texts = f.metadata.get(DURATION)  # a duration: its defaults by clock, in order
        return f"{f.name}={' or '.join(texts) if texts else repr(f.default)}"

    return ", ".join(shown(f) for f in dataclasses.fields(cls)) or "-"


def _from_text(where: str, imports: tuple[str, ...]) -> str:
    """Where a memory comes from (``where``): for one whose modules come from extras of
    fbench, the extras to install (``fbench[incumbents]``) and whether one is missing."""
    from fbench.extras import absent, extra_of

    extras = sorted({e for m in imports if (e := extra_of(m)) is not None})
    if not extras:
        return where
    spec = f"fbench[{','.join(extras)}]"
    where = spec if where == "fbench" else f"{where}, needs {spec}"
    return where + (", not installed" if any(absent(m) for m in imports) else "")


@lister("policies")
def _list_policies(extra: list[str]) -> Table:
    from runner.adapters import MEMORIES

    t = Table(Column("policy", no_wrap=True), "family", "parameters (policy.*)", "from",
              "description")
    for name in sorted({*MEMORIES.names(), *extra}):
        try:
            kind = MEMORIES.lookup(name, "policy")
        except RegistryError as exc:  # an installed entry point that cannot be imported
            if name in extra:
                raise
            _row(t, name, "-", "-", "-", str(exc))
            continue
        _row(t, name, kind.family, _params_text(kind.Params),
             _from_text(MEMORIES.origin(name).describe(), kind.imports), kind.description)
    return t


@lister("workloads")
def _list_workloads(extra: list[str]) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    from workloads import WORKLOADS
    from workloads.headroom import notes as notes_of

    t = Table(Column("workload", no_wrap=True), "version", "horizon unit", "default horizon",
              "parameters (workload.*)", "from")
    notes = []
    for name in sorted({*WORKLOADS.names(), *extra}):
        try:
            w = WORKLOADS.lookup(name, "workload")
        except RegistryError as exc:  # an installed entry point that cannot be imported
            if name in extra:
                raise
            _row(t, name, "-", "-", "-", "-", str(exc))
            continue
        _row(t, name, w.version, w.horizon_unit, str(w.default_horizon), _params_text(w.Params),
             WORKLOADS.origin(name).describe())
        headroom = notes_of(name) if WORKLOADS.origin(name).source == "builtin" else None
        notes.append(Text.assemble((name, "bold"), f": {w.description}"
                                   + (f" Headroom: {headroom}" if headroom else "") + "\n"))
    return Group(t, *notes)


@lister("metrics")
def _list_metrics(extra: list[str]) -> Table:
    from runner.metrics import METRICS

    t = Table("metric", "want", "description")
    for name, m in METRICS.items():
        _row(t, name, m.direction, m.description)
    return t


@lister("store")
def _list_store(extra: list[str]) -> RenderableType:
    from rich.console import Group

    from memcore import EMBEDDERS, EXTRACTORS, StoreParams
    from memcore.backends import BACKENDS

    extractors = _extractors(extra)  # first: registers the harness's
    t = Table("axis", "choices or defaults")
    _row(t, "parameters (store.*)", _params_text(StoreParams))
    _row(t, "store.extractor", ", ".join(sorted({*EXTRACTORS.names(), *extra}))
         + " (each below)")
    _row(t, "store.embedder", ", ".join(sorted(EMBEDDERS)))
    _row(t, "store.backend", ", ".join(sorted(BACKENDS))
         + " (store.path: the sqlite file; empty = a temporary file)")
    return Group(t, extractors)


def _extractors(extra: list[str]) -> Table:
    """Every name ``store.extractor`` takes: memcore's, the harness's (they read ground
    truth, so they live in runner/job/extractors.py), and ``module:attr`` plugins."""
    import inspect

    from memcore import EXTRACTORS, StoreParams
    from runner.job.extractors import HARNESS_EXTRACTORS  # importing registers them

    default = StoreParams().extractor
    t = Table(Column("store.extractor", no_wrap=True), "from", "what it links")
    for name in sorted({*EXTRACTORS.names(), *extra}):
        factory = EXTRACTORS.lookup(name, "extractor")
        module = inspect.getmodule(factory)
        where = module.__name__ if module is not None else "?"
        origin = EXTRACTORS.origin(name)
        if origin.source != "builtin":
            source = origin.describe()
        elif name in HARNESS_EXTRACTORS:
            source = f"fbench harness ({where}; reads ground truth)"
        else:
            source = f"fbench memcore ({where})"
        same = [n for n in EXTRACTORS.names() if n != name and EXTRACTORS[n] is factory]
        alias = f" (alias: {', '.join(same)})" if same else ""
        alias += " (default)" if name == default else ""
        what = (inspect.getdoc(factory) or "").split("\n\n", 1)[0].replace("\n", " ")
        _row(t, name + alias, source, what)
    return t


@app.command("list")
@user_errors
def list_cmd(
    what: Annotated[str, typer.Argument(help="policies, workloads, metrics or store.")],
    names: Annotated[list[str] | None, typer.Argument(
        help="module:attr plugins to list too (installed ones are listed anyway).")] = None,
) -> None:
    """List registered policies, workloads, metrics or store axes, and where each comes
    from (fbench, an installed distribution and its version, or a file)."""
    from runner.errors import lookup

    console.print(lookup(LISTERS, what, "listing")(list(names or [])))


