"""``fbench trace export`` and ``fbench trace validate``: any workload written as a trace
file (docs/trace-format.md), and a trace checked line by line."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runner.cli.app import app, console, user_errors
from runner.cli.job import run_horizon

if TYPE_CHECKING:  # imported where used: other commands start without the workloads
    from workloads.events import Event
    from workloads.trace.format import Header

trace_app = typer.Typer(help="Trace files: export a workload as one, validate one.",
                        no_args_is_help=True)
app.add_typer(trace_app, name="trace")


@trace_app.command("export")
@user_errors
def export(
    workload: Annotated[str, typer.Argument(help="Workload name (see `fbench list workloads`).")],
    output: Annotated[Path, typer.Option(help="The trace file to write: JSON lines, or its "
                                         "Parquet twin for a name ending in .parquet.")],
    seed: Annotated[int, typer.Option(help="The stream's seed.")] = 0,
    horizon: Annotated[str | None, typer.Option(metavar="N|Nx", help="Horizon (default: the "
                                                "workload's own).")] = None,
    param: Annotated[list[str] | None, typer.Option(
        help="workload.KEY=VALUE; repeatable.")] = None,
) -> None:
    """Write one seeded stream of a workload as a trace: replaying it (`--workload trace
    --param workload.path=FILE`) gives every policy the numbers of the workload itself."""
    from runner.spec.params import split_assignment
    from runner.spec.resolve import make_spec, materialize
    from workloads.trace.format import Header

    spec = make_spec(workload, "keep_all", seed, run_horizon(horizon, workload),
                     params=[split_assignment(p) for p in param or []])
    r = materialize(spec)
    w, wp = r.workload, r.workload_params
    vocab = w.vocabulary()
    header = Header(spec.horizon, w.horizon_unit, dict(w.categories), dict(w.update_kinds),
                    vocab.entities, vocab.phrases, w.distinct_facts(wp),
                    source=f"fbench trace export {workload} --seed {seed} "
                           f"--horizon {spec.horizon}"
                           + "".join(f" --param {k}={v}" for k, v in spec.params))
    n = write_trace(output, header, w.events(seed, spec.horizon, wp))
    console.print(f"wrote {output}: {n} events of {workload} (seed {seed}, horizon "
                  f"{spec.horizon} {w.horizon_unit})", markup=False)


@trace_app.command("validate")
@user_errors
def validate(
    path: Annotated[Path, typer.Argument(help="The trace file (JSON lines, or .parquet).")],
) -> None:
    """Check a trace line by line: the header, every event's fields, time order, and
    queries only after an observation. The first problem is one line (exit 2)."""
    from runner.errors import FbenchError
    from workloads import Observe, Query, Tick
    from workloads.trace.format import TraceError, parse

    if not path.is_file():
        raise FbenchError(f"{path}: no such file")
    counts = {Observe: 0, Query: 0, Tick: 0}
    try:
        header, events = parse(path)
        for ev in events:
            counts[type(ev)] += 1
    except TraceError as exc:
        raise FbenchError(str(exc)) from None
    console.print(f"{path}: valid fbench trace (format 1): horizon {header.horizon} "
                  f"{header.horizon_unit}, {counts[Observe]} observations, {counts[Query]} "
                  f"queries, {counts[Tick]} ticks", markup=False)


SOURCES = ("longmemeval",)


@trace_app.command("import")
@user_errors
def import_(
    source: Annotated[str, typer.Argument(help="The data's format: longmemeval.")],
    path: Annotated[Path, typer.Argument(help="The file to convert (LongMemEval's JSON).")],
    output: Annotated[Path, typer.Option(help="The trace to write (.jsonl or .parquet).")],
    haystack: Annotated[bool, typer.Option(
        help="Every other turn of the haystack too, as noise (default: the evidence "
             "turns only).")] = False,
) -> None:
    """Convert outside data into a trace: LongMemEval's knowledge-update questions
    (docs/trace-format.md, "LongMemEval")."""
    from runner.errors import FbenchError
    from workloads.trace.longmemeval import LongMemEvalError, convert

    if source not in SOURCES:
        raise FbenchError(f"unknown trace source {source!r}; known: {', '.join(SOURCES)}")
    if not path.is_file():
        raise FbenchError(f"{path}: no such file")
    try:
        imported = convert(path, haystack)
    except LongMemEvalError as exc:
        raise FbenchError(str(exc)) from None
    if not imported.kept:
        raise FbenchError(f"{path}: no knowledge-update question whose old and new values "
                          f"can be told apart ({len(imported.left_out)} left out)")
    n = write_trace(output, imported.header, imported.events)
    left = (f"; left out {len(imported.left_out)} whose old and new evidence cannot be told "
            f"apart ({', '.join(imported.left_out[:5])})" if imported.left_out else "")
    console.print(f"wrote {output}: {n} events, {len(imported.kept)} knowledge-update "
                  f"questions{left}", markup=False)


def write_trace(output: Path, header: Header, events: Iterable[Event]) -> int:
    """Write a trace atomically (JSON lines, or Parquet for a .parquet name), its folder
    made if missing: the number of events written."""
    from runner.results.atomic import write_atomic
    from workloads.trace.columnar import write_parquet
    from workloads.trace.format import event_json

    n = 0

    def write(tmp: Path) -> None:
        nonlocal n
        if output.suffix == ".parquet":
            n = write_parquet(tmp, header, events)
            return
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps(header.to_json(), sort_keys=True) + "\n")
            for ev in events:
                f.write(json.dumps(event_json(ev), sort_keys=True, ensure_ascii=False) + "\n")
                n += 1

    output.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(output, write)
    return n
