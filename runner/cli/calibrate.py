"""``fbench calibrate WORKLOAD``: the headroom check, as a table and as JSON."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from runner.cli.app import app, console, err, user_errors
from runner.cli.job import run_horizon


def _ci(mean: float, ci: tuple[float, float]) -> str:
    if math.isnan(ci[0]):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


@app.command()
@user_errors
def calibrate(
    workload: Annotated[str, typer.Argument(help="Workload name (see `fbench list workloads`).")],
    seeds: Annotated[int, typer.Option(help="Seeds 0..N-1.")] = 20,
    param: Annotated[list[str] | None, typer.Option(
        help="workload.KEY=VALUE (or any namespace.key=value); repeatable.")] = None,
    budgets: Annotated[str, typer.Option(
        help="Memory budgets (store.budget, entries) besides none, comma-separated.")] = "30,120",
    policies: Annotated[str | None, typer.Option(
        help="Comma-separated memories (default: every reference policy and the oracle).")
    ] = None,
    horizon: Annotated[str | None, typer.Option(metavar="N|Nx", help="Horizon (default: the "
                                                "workload's own).")] = None,
    executor: Annotated[str, typer.Option(help="inline or ray.")] = "inline",
    output: Annotated[Path | None, typer.Option("--json", help="Write the calibration as "
                                                "JSON here.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help=(
        "No progress: no bar on a terminal, and elsewhere no line every 30 s "
        "(FBENCH_PROGRESS_SECONDS sets the seconds); errors and the results still print."))
    ] = False,
) -> None:
    """The headroom check: does a workload tell policies apart?

    Each policy's current recall, contradiction and false-forget with 95% intervals, the
    best policy's gap to the oracle, policies bit-identical on every seed, saturated and
    impossible queries, and criteria (a)–(d)."""
    from runner.calibrate.run import calibrate as run_calibration
    from runner.cli.progress import Tally, progress
    from runner.errors import FbenchError
    from runner.spec.params import split_assignment

    if seeds <= 0:
        raise FbenchError(f"--seeds must be positive, got {seeds}")
    try:
        budget_list = [int(b) for b in budgets.split(",") if b.strip()]
    except ValueError:
        raise FbenchError(f"--budgets {budgets!r} is not a list of entry counts; write e.g. "
                          "--budgets 30,120") from None
    names = [p.strip() for p in policies.split(",") if p.strip()] if policies else None
    # (calibrate counts a failed job as done: any failure stops it with one line)
    with progress("calibrate", err, quiet, Tally(0, None)) as update:
        cal = run_calibration(
            workload, list(range(seeds)), names, budget_list,
            [split_assignment(p) for p in param or []], run_horizon(horizon, workload),
            executor, progress=lambda done, total: update(Tally(done, total, ran=done)))
    table = Table(title=escape(f"calibration of {workload}: {len(cal.seeds)} seeds"))
    for col in ("policy", "budget", "current recall ↑", "contradiction ↓", "false-forget ↓",
                "final size"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for c in cal.cells:
        table.add_row(escape(c.label), str(c.budget or "—"),
                      *(_ci(c.means[m], c.ci[m]) for m in ("recall_current_at_k",
                                                           "contradiction_rate",
                                                           "false_forget_rate")),
                      f"{c.final_size:.0f}")
    console.print(table)
    console.print(f"saturated queries {cal.saturated:.1%}, impossible {cal.impossible:.1%}",
                  markup=False)
    for crit in cal.criteria:
        console.print(f"{'met' if crit.met else 'NOT MET'}  {crit.name}: {crit.detail}",
                      markup=False)
    if output is not None:
        from runner.results.atomic import write_json

        write_json(output, cal.to_json())
        console.print(f"wrote {output}", markup=False)
