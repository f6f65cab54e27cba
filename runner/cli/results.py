"""``fbench aggregate``, ``compact`` and ``report``: the commands that read a sweep's shards."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner.cli.app import app, console, user_errors
from runner.errors import FbenchError


@app.command()
@user_errors
def aggregate(
    out: Annotated[str, typer.Argument(help="A sweep's output folder (or its URI).")],
    baseline: Annotated[
        str | None, typer.Option(help="Policy the paired deltas compare to (default: the "
                                 "sweep's own, as its sweep.json records it; else keep_all).")
    ] = None,
    finals: Annotated[
        bool, typer.Option("--finals", help="Also write OUT/finals.parquet and "
                           "OUT/checkpoints.parquet: every job's final row with its whole "
                           "identity, and the plots' series (what a published sweep keeps "
                           "of its shards).")
    ] = False,
) -> None:
    """Reduce a sweep's shards into OUT/summary.parquet (intervals over seeds, paired
    deltas) and OUT/comparisons.parquet (every comparison, its family and verdict). A
    published folder (no shards, OUT/finals.parquet) is reduced from its final rows."""
    from runner.results.aggregate import aggregate as run_aggregate
    from runner.results.finals import write_finals
    from runner.results.sweep_config import sweep_baseline
    from runner.results.tables import main_table
    from runner.results.where import location

    final = write_finals(out) if finals else None
    summary = run_aggregate(out, baseline=baseline or sweep_baseline(location(out)),
                            final=final)
    # its cells name policies, workloads and parameters as given: shown as they are
    console.print(main_table(summary), markup=False)


@app.command("compact")
@user_errors
def compact_cmd(
    out: Annotated[str, typer.Argument(help="A sweep's output folder (or its URI).")],
) -> None:
    """Merge a sweep's per-job shards into a few large Parquet files (OUT/compacted/)."""
    from runner.results.compact import compact

    console.print(compact(out).line(), markup=False, highlight=False, soft_wrap=True)


@app.command("report")
@user_errors
def report_cmd(
    out: Annotated[str, typer.Argument(help="A sweep's output folder (or its URI).")],
    output: Annotated[
        Path | None, typer.Option(help="Where to write the Markdown (default OUT/RESULTS.md).")
    ] = None,
    report_dir: Annotated[
        Path | None, typer.Option(help="A folder for RESULTS.md and the plots (instead of "
                                  "--output; needed when OUT is a URI).")
    ] = None,
    include: Annotated[
        list[str] | None,
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
    """Write the Markdown report, plots and comparisons.csv for a sweep (deterministic);
    with --html, the same as one web page needing no server or network."""
    from runner.report.markdown import write_report
    from runner.results.where import ArrowPath, location

    if output is not None and report_dir is not None:
        raise FbenchError("give --output or --report-dir, not both")
    folder = location(out)
    if report_dir is not None:
        output = report_dir / "RESULTS.md"
    if output is None and isinstance(folder, ArrowPath):
        raise FbenchError(f"{folder} is remote: give --report-dir DIR, a local folder for "
                          "RESULTS.md and the plots")
    md = Path(output) if output is not None else Path(str(folder)) / "RESULTS.md"
    page = md.with_suffix(".html") if html else None
    if calibration is not None and not calibration.is_dir():
        raise FbenchError(f"--calibration {str(calibration)!r} is not a folder; give the "
                          "folder of `fbench calibrate --json` files")
    path = write_report(folder, output, include or [], html=page, calibration=calibration,
                        helpers=None)
    console.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
    if page is not None:
        console.print(f"wrote {page}", markup=False, highlight=False, soft_wrap=True)
