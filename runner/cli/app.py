"""The ``fbench`` command line (Typer). Bad input is one line on stderr, exit 2."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console, ConsoleDimensions

from runner.errors import FbenchError

if TYPE_CHECKING:  # imported where used: `fbench --help` starts fast
    from runner.cli.progress import Tally
    from runner.results.where import Loc
    from runner.sweep.estimate import Estimate
    from runner.sweep.expand import SweepSpec
    from runner.sweep.run import Prepared, SweepResult

app = typer.Typer(
    name="fbench",
    help="Benchmark whether agent memory forgets well.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# A sweep's output when neither --out nor the config names one: a folder git ignores, never
# one the repository ships (published/).
DEFAULT_OUT = "runs/main"
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


@app.command()
@user_errors
def sweep(
    seeds: Annotated[int | None, typer.Option(help="Seeds 0..N-1 (default 20).")] = None,
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
    out: Annotated[str | None, typer.Option(
        help="Output folder (default runs/main), or a pyarrow.fs URI: s3://bucket/prefix.")
    ] = None,
    shared_out: Annotated[bool, typer.Option(
        help="OUT is a folder every Ray node mounts at the same path: workers write shards.")
    ] = False,
    report_dir: Annotated[Path | None, typer.Option(
        help="Where RESULTS.md and the plots go (default OUT; needed when OUT is a URI).")
    ] = None,
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
    samples: Annotated[bool, typer.Option(
        help="Record each job's evidence (every query, every deletion) under OUT/samples, "
             "for fbench explain and the report's drill-down; resume reruns a done job "
             "whose evidence is missing.")] = False,
    dry_run: Annotated[
        bool, typer.Option(help="Check everything, print the plan, run and write nothing.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help=(
        "No progress: no bar on a terminal, and elsewhere no line every 30 s "
        "(FBENCH_PROGRESS_SECONDS sets the seconds); errors, failures and the summary "
        "still print."))] = False,
) -> None:
    """Run seeds × policies × workloads × horizons × params, one Parquet shard per job."""
    from runner.results.where import ArrowPath, location
    from runner.sweep.config import load_config
    from runner.sweep.expand import expand
    from runner.sweep.run import prepare

    cfg = load_config(config) if config is not None else {}
    spec = _sweep_spec(cfg, seeds, seed_list, policies, workloads, horizons, param, k,
                       baseline)
    # (a spinner on a terminal while the grid expands and OUT is read; nothing elsewhere)
    with err.status("expanding the grid ...") as status:
        jobs = expand(spec)
        folder = location(out or str(cfg.get("out", DEFAULT_OUT)))
        if report and report_dir is None and isinstance(folder, ArrowPath):
            raise FbenchError(f"--out {folder} is remote: give --report-dir DIR (a local "
                              "folder for RESULTS.md and the plots), or --no-report")
        status.update(f"planning {len(jobs):,} jobs: reading what {folder} holds ...")
        prepared = prepare(
            spec, jobs, folder,
            executor=executor or cfg.get("executor", "auto"),
            address=address or cfg.get("address"),
            max_in_flight=(max_in_flight if max_in_flight is not None
                           else cfg.get("max_in_flight")),
            overwrite=overwrite or cfg.get("overwrite", "failed"),
            shared_out=shared_out,
            samples=samples or _config_flag(cfg, "samples"),
        )
    if dry_run:
        _print_plan(prepared, folder)
        return
    result = _run_with_progress(prepared, quiet)
    _print_outcome(result, folder)
    if report:
        from runner.report.markdown import write_report

        path = write_report(folder, report_dir / "RESULTS.md" if report_dir else None,
                            helpers=None)
        err.print(f"report: {path}", markup=False, highlight=False, soft_wrap=True)
    if result.failed:
        raise typer.Exit(1)


def _config_flag(cfg: dict[str, Any], key: str) -> bool:
    """A true/false field of the sweep config (absent: false)."""
    value = cfg.get(key, False)
    if not isinstance(value, bool):
        raise FbenchError(f"config: {key} must be true or false, got {value!r}")
    return value


def _sweep_spec(cfg: dict[str, Any], seeds: int | None, seed_list: str | None,
                policies: str | None, workloads: str | None, horizons: str | None,
                param: list[str] | None, k: int | None, baseline: str | None) -> SweepSpec:
    """The sweep's spec: the config's fields, each flag given overriding its field
    (``--param`` axes merged with the config's)."""
    from runner.sweep.config import (
        build_spec,
        merge_params,
        parse_list,
        parse_seed_list,
        seeds_from_count,
        spec_from_config,
    )

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
    return build_spec(cfg, overrides)


def _print_plan(prepared: Prepared, folder: Loc) -> None:
    """The dry run's plan on stdout: jobs to run and done, shards to set aside, the
    executor, and the wall-time estimate."""
    p = prepared.plan
    aside = (f", {len(p.quarantine)} shard(s) that do not validate to quarantine"
             if p.quarantine else "")
    aside += (f", {len(p.superseded)} shard(s) of changed plugin code or workload "
              "version set aside"
              if p.superseded else "")
    console.print(f"{len(p.jobs)} jobs: {len(p.to_run)} to run, {p.skipped} done before"
                  f"{aside}, {prepared.executor} executor, out {folder}", markup=False)
    console.print(_estimate(prepared).line(), markup=False)


def _print_outcome(result: SweepResult, folder: Loc) -> None:
    """What a sweep did, on stderr: shards set aside, the counts, and every failed job
    with its error's last line."""
    if result.superseded:
        err.print(f"set aside {len(result.superseded)} shard(s) of plugin code or a workload "
                  f"version that has changed to {folder / 'superseded'} (kept); their jobs ran "
                  "again", markup=False)
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


def _estimate(prepared: Prepared) -> Estimate:
    """The dry run's wall-time estimate, from this grid's jobs already measured in OUT."""
    from runner.sweep.estimate import estimate, sweep_workers

    workers = sweep_workers(prepared.executor, prepared.address, prepared.max_in_flight)
    return estimate(prepared.plan, prepared.out, prepared.executor, workers)


def _run_with_progress(prepared: Prepared, quiet: bool) -> SweepResult:
    """Runs the sweep, its progress on stderr as ``runner.cli.progress`` shows it."""
    from runner.cli.progress import Tally, progress
    from runner.sweep.run import run_sweep

    p = prepared.plan
    first = Tally(p.skipped, len(p.jobs), skipped=p.skipped, failed=0)
    with progress("sweep", err, quiet, first) as update:
        return run_sweep(prepared, progress=lambda r: update(_tally(r)))


def _tally(r: SweepResult) -> Tally:
    """Where a sweep stands; ``ran`` counts every run of a job, a failed job's reruns too."""
    from runner.cli.progress import Tally

    return Tally(r.done + r.skipped, r.total, ran=r.done + len(r.failed) + r.retried,
                 skipped=r.skipped, failed=len(r.failed))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
