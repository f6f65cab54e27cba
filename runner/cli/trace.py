"""``fbench trace export`` and ``fbench trace validate``: any workload written as a trace
file (docs/trace-format.md), and a trace checked line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from runner.cli.app import app, console, user_errors
from runner.cli.job import run_horizon

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
    from runner.results.atomic import write_atomic
    from runner.spec.params import split_assignment
    from runner.spec.resolve import make_spec, materialize
    from workloads.trace.columnar import write_parquet
    from workloads.trace.format import Header, event_json

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
    n = 0

    def write(tmp: Path) -> None:
        nonlocal n
        events = w.events(seed, spec.horizon, wp)
        if output.suffix == ".parquet":
            n = write_parquet(tmp, header, events)
            return
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps(header.to_json(), sort_keys=True) + "\n")
            for ev in events:
                f.write(json.dumps(event_json(ev), sort_keys=True, ensure_ascii=False) + "\n")
                n += 1

    write_atomic(output, write)
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
