"""The ``fbench`` command line (Typer). Bad input is one line on stderr, exit 2."""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.table import Table

from runner.errors import FbenchError

if TYPE_CHECKING:  # imported where used: `fbench --help` starts fast
    from runner.sweep.plan import Estimate
    from runner.sweep.run import Prepared

app = typer.Typer(
    name="fbench",
    help="Benchmark whether agent memory forgets well.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# Wider than any table or line fbench prints: outside a terminal nothing is wrapped.
UNBOUNDED_WIDTH = 100_000


class StreamConsole(Console):
    """A rich console that, writing anywhere but a terminal (a pipe, a file, a test's
    capture), lays out at natural width: a table is never squeezed (or a line wrapped)
    to 80 columns for ``fbench list policies | cat``. ``COLUMNS`` still sets a width.
    Asked at every print, so the stream the output goes to decides."""

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        if self.is_terminal or os.environ.get("COLUMNS", "").isdigit():
            return measured
        return ConsoleDimensions(UNBOUNDED_WIDTH, measured.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self.width, self.height = new_size


console = StreamConsole()
err = StreamConsole(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def user_errors(fn: F) -> F:
    """Turn an ``FbenchError`` into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except FbenchError as exc:
            err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


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
) -> None:
    """Run one job in-process and print its metrics."""
    from runner.job.run import run_job
    from runner.metrics import METRICS
    from runner.spec.params import split_assignment
    from runner.spec.resolve import make_spec

    spec = make_spec(workload, policy, seed, run_horizon(horizon, workload), k,
                     [split_assignment(p) for p in param or []])
    result = run_job(spec)
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
    from workloads import WORKLOADS

    w = lookup(WORKLOADS, workload, "workload")
    try:
        return horizon_of(raw, w)
    except (FbenchError, OverflowError):  # OverflowError: "infx" (horizon_of lets it out)
        raise FbenchError(
            f"horizon must be a positive number of {w.horizon_unit}, got {raw}; write e.g. "
            f"--horizon {w.default_horizon} (its default) or --horizon 2x (twice it)"
        ) from None


@app.command()
@user_errors
def sweep(
    seeds: Annotated[int | None, typer.Option(help="Seeds 0..N-1 (default 5).")] = None,
    seed_list: Annotated[str | None, typer.Option(help="Explicit seeds, e.g. 0,3,7.")] = None,
    policies: Annotated[str | None, typer.Option(help="Comma-separated (default: all).")] = None,
    workloads: Annotated[str | None, typer.Option(help="Comma-separated (default: all).")] = None,
    horizons: Annotated[
        str | None, typer.Option(help="In the workload's unit, or Nx its default: 1000,4x.")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(help="target.key=v1,v2 (target: a policy, a workload, store); a grid axis."),
    ] = None,
    config: Annotated[Path | None, typer.Option(help="A sweep.toml with the same fields.")] = None,
    out: Annotated[Path | None, typer.Option(help="Output folder (default results/).")] = None,
    address: Annotated[
        str | None, typer.Option(help="Ray cluster: auto, HOST:PORT or ray://... (or RAY_ADDRESS).")
    ] = None,
    executor: Annotated[
        str | None, typer.Option(help="auto (default), ray or inline.")
    ] = None,
    max_in_flight: Annotated[int | None, typer.Option(help="Ray tasks in flight.")] = None,
    overwrite: Annotated[
        str | None, typer.Option(help="failed (default: resume), never, or always.")
    ] = None,
    k: Annotated[int | None, typer.Option(help="Items retrieved per query (default 5).")] = None,
    baseline: Annotated[
        str | None, typer.Option(help="The policy the report pairs cells with (default keep_all).")
    ] = None,
    report: Annotated[
        bool, typer.Option(help="Aggregate and write OUT/RESULTS.md at the end.")
    ] = True,
    dry_run: Annotated[
        bool, typer.Option(help="Check everything, print the plan, run and write nothing.")
    ] = False,
) -> None:
    """Run seeds × policies × workloads × horizons × params, one Parquet shard per job."""
    from runner.sweep.expand import (
        build_spec,
        expand,
        load_config,
        merge_params,
        parse_list,
        parse_seed_list,
        seeds_from_count,
        spec_from_config,
    )
    from runner.sweep.run import prepare

    cfg = load_config(config) if config is not None else {}
    if seeds is not None and seed_list is not None:
        raise FbenchError("give --seeds or --seed-list, not both")
    overrides: dict[str, Any] = {
        "seeds": (seeds_from_count(seeds) if seeds is not None
                  else parse_seed_list(seed_list) if seed_list is not None else None),
        "policies": parse_list(policies, "policies") or None,
        "workloads": parse_list(workloads, "workloads") or None,
        "horizons": parse_list(horizons, "horizons") or None,
        "k": k,
        "baseline": baseline,
    }
    overrides["params"] = merge_params(spec_from_config(cfg).get("params", ()), param or [])
    spec = build_spec(cfg, overrides)
    jobs = expand(spec)
    folder = out or Path(cfg.get("out", "results"))
    prepared = prepare(
        spec, jobs, folder,
        executor=executor or cfg.get("executor", "auto"),
        address=address or cfg.get("address"),
        max_in_flight=max_in_flight if max_in_flight is not None else cfg.get("max_in_flight"),
        overwrite=overwrite or cfg.get("overwrite", "failed"),
    )
    if dry_run:
        p = prepared.plan
        aside = (f", {len(p.quarantine)} shard(s) that do not validate to quarantine"
                 if p.quarantine else "")
        aside += (f", {len(p.superseded)} shard(s) of changed plugin code set aside"
                  if p.superseded else "")
        console.print(f"{len(p.jobs)} jobs: {len(p.to_run)} to run, {p.skipped} done before"
                      f"{aside}, {prepared.executor} executor, out {folder}", markup=False)
        console.print(_estimate(prepared).line(), markup=False)
        return
    result = _run_with_progress(prepared)
    if result.superseded:
        err.print(f"set aside {len(result.superseded)} shard(s) of plugin code that has "
                  f"changed to {folder / 'superseded'} (kept); their jobs ran again", markup=False)
    if result.quarantined:
        err.print(f"quarantined {len(result.quarantined)} shard(s) that did not validate to "
                  f"{folder / 'quarantine'} (kept, not deleted); their jobs ran again",
                  markup=False)
    retried = f", {result.retried} rerun after failing" if result.retried else ""
    err.print(f"{result.total} jobs: {result.done} run, {result.skipped} skipped (done before), "
              f"{len(result.failed)} failed{retried} ({result.executor} executor) -> {folder}",
              markup=False)
    for failure in result.failed:  # every one: the ids to look up in the manifest
        last = (failure["error"].strip().splitlines() or ["?"])[-1]
        err.print(f"  failed {failure['job_id']} ({failure['attempts']} runs): {last}",
                  markup=False)
    if result.failed:
        err.print(f"  tracebacks: {folder / 'manifest.json'} (failures)", markup=False)
    if report:
        from runner.report.markdown import write_report

        path = write_report(folder)
        err.print(f"report: {path}", markup=False, highlight=False, soft_wrap=True)
    if result.failed:
        raise typer.Exit(1)


def _estimate(prepared: Prepared) -> Estimate:
    """The dry run's wall-time estimate, from this grid's jobs already measured in OUT."""
    from runner.sweep.plan import estimate, sweep_workers

    workers = sweep_workers(prepared.executor, prepared.address, prepared.max_in_flight)
    return estimate(prepared.plan, prepared.out, prepared.executor, workers)


def _run_with_progress(prepared: Any) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from runner.sweep.run import SweepResult, run_sweep

    bar = Progress(
        TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(),
        TextColumn("skipped {task.fields[skipped]}  failed {task.fields[failed]}"),
        TextColumn("{task.fields[rate]} jobs/s"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=err, transient=False,
    )
    task = bar.add_task("sweep", total=len(prepared.plan.jobs), skipped=0, failed=0, rate="-")
    start = [0.0, 0]

    def update(r: SweepResult) -> None:

        now = time.perf_counter()
        if not start[0]:  # first call: the executor is up; show the bar from here on
            start[0], start[1] = now, r.done
            bar.start()
        ran = r.done + len(r.failed) - start[1]
        rate = f"{ran / (now - start[0]):.1f}" if ran and now > start[0] else "-"
        bar.update(task, completed=r.done + r.skipped + len(r.failed), skipped=r.skipped,
                   failed=len(r.failed), rate=rate)

    try:
        return run_sweep(prepared, progress=update)
    finally:
        bar.stop()


@app.command()
@user_errors
def aggregate(
    out: Annotated[Path, typer.Argument(help="A sweep's output folder.")],
    baseline: Annotated[
        str, typer.Option(help="Policy the paired deltas compare to.")
    ] = "keep_all",
) -> None:
    """Reduce a sweep's shards into OUT/summary.parquet (bootstrap CIs over seeds)."""
    from runner.results.aggregate import aggregate as run_aggregate
    from runner.results.tables import main_table

    summary = run_aggregate(out, baseline=baseline)
    # its cells name policies, workloads and parameters as given: shown as they are
    console.print(main_table(summary), markup=False)


@app.command("compact")
@user_errors
def compact_cmd(
    out: Annotated[Path, typer.Argument(help="A sweep's output folder.")],
) -> None:
    """Merge a sweep's per-job shards into a few large Parquet files (OUT/compacted/)."""
    from runner.results.compact import compact

    console.print(compact(out).line(), markup=False, highlight=False, soft_wrap=True)


@app.command("report")
@user_errors
def report_cmd(
    out: Annotated[Path, typer.Argument(help="A sweep's output folder.")],
    output: Annotated[
        Path | None, typer.Option(help="Where to write the Markdown (default OUT/RESULTS.md).")
    ] = None,
    include: Annotated[
        list[Path] | None,
        typer.Option(help="Another sweep's folder to append as a section (repeatable)."),
    ] = None,
    html: Annotated[
        bool, typer.Option("--html", help="Also write the report as one self-contained web "
                           "page (beside the Markdown, .html).")
    ] = False,
    calibration: Annotated[
        Path | None, typer.Option(help="A folder of `fbench calibrate --json` files: the "
                                  "Headroom section.")
    ] = None,
) -> None:
    """Write the Markdown report, plots, summary.csv and comparisons.csv for a sweep
    (deterministic); with --html, the same as one web page needing no server or network."""
    from runner.report.markdown import write_report

    md = Path(output) if output is not None else Path(out) / "RESULTS.md"
    page = md.with_suffix(".html") if html else None
    if calibration is not None and not calibration.is_dir():
        raise FbenchError(f"--calibration {str(calibration)!r} is not a folder; give the "
                          "folder of `fbench calibrate --json` files")
    path = write_report(out, output, include or [], html=page, calibration=calibration)
    console.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
    if page is not None:
        console.print(f"wrote {page}", markup=False, highlight=False, soft_wrap=True)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
