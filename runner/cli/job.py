"""``fbench run``: one job in-process, its metrics as a table or JSON."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from runner.cli.app import app, console, user_errors
from runner.errors import FbenchError


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.3f}"
    return str(value)


@app.command()
@user_errors
def run(
    workload: Annotated[str, typer.Option(help="Workload name (see `fbench list workloads`).")],
    policy: Annotated[str, typer.Option(help="Policy name (see `fbench list policies`).")],
    seed: Annotated[int, typer.Option(help="Seed of the workload's stream.")] = 0,
    horizon: Annotated[
        str | None,
        typer.Option(metavar="N|Nx", help="Length in the workload's unit, or Nx its default "
                                          "(e.g. 2x; default: its own), as in sweep --horizons."),
    ] = None,
    k: Annotated[int, typer.Option(help="Items retrieved per query.")] = 5,
    param: Annotated[
        list[str] | None,
        typer.Option(help="namespace.key=value (policy., workload., store.); repeatable."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    samples: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Record the job's evidence: DIR/queries.parquet (every scored "
                            "query) and DIR/deletions.parquet (every removal).")] = None,
) -> None:
    """Run one job in-process and print its metrics."""
    from runner.job.run import run_job
    from runner.metrics import METRICS
    from runner.spec.params import split_assignment
    from runner.spec.resolve import make_spec

    spec = make_spec(workload, policy, seed, run_horizon(horizon, workload), k,
                     [split_assignment(p) for p in param or []])
    if samples is not None and samples.exists() and not samples.is_dir():
        raise FbenchError(f"--samples {samples} is a file; give a folder")
    result = run_job(spec, samples=samples is not None)
    if samples is not None and result.samples is not None:
        from runner.results.samples import DELETIONS_FILE, QUERIES_FILE, write_samples

        write_samples(result.samples, spec, samples / QUERIES_FILE, samples / DELETIONS_FILE)
    metrics = result.metrics()
    if as_json:
        doc = {"spec": spec.to_dict() | {"job_id": spec.job_id},
               "metrics": {k: _plain(v) for k, v in metrics.items()}}
        sys.stdout.write(json.dumps(doc, sort_keys=False) + "\n")
        return
    table = Table(title=escape(f"{spec.workload} × {spec.policy}, seed {spec.seed}, "
                               f"horizon {spec.horizon}, k={spec.k}  [{spec.job_id}]"))
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("want")
    for name, metric in METRICS.items():
        if name in metrics:
            table.add_row(escape(name), _fmt(metrics[name]), metric.direction)
    console.print(table)


def run_horizon(raw: str | None, workload: str) -> int | None:
    """``run --horizon``: a number in the workload's unit or ``Nx`` (N × its default),
    read by the sweep's own parser (``horizon_of``); None keeps the default."""
    if raw is None:
        return None
    from runner.errors import lookup
    from runner.sweep.expand import horizon_of
    from workloads import WORKLOADS, FromData

    w = lookup(WORKLOADS, workload, "workload")
    if isinstance(w, FromData) and raw.strip().lower().endswith("x"):
        raise FbenchError(f"workload {workload!r} takes its horizon from its data; give "
                          "--horizon as a number, or leave it out for the data's own")
    try:
        return horizon_of(raw, w)
    except FbenchError:
        raise FbenchError(
            f"horizon must be a positive number of {w.horizon_unit}, got {raw}; write e.g. "
            f"--horizon {w.default_horizon} (its default) or --horizon 2x (twice it)"
        ) from None
