"""``fbench board OUT``: place a sweep's memories on the board of the published results,
paired by seed (``runner.analysis.board``), after rerunning a few published jobs here
(``runner.job.verify``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.csv as pacsv
import typer

from runner.cli.app import app, console, err, user_errors
from runner.errors import FbenchError

VERIFY = 2  # published jobs rerun besides the baselines', by default


@app.command("board")
@user_errors
def board_cmd(
    out: Annotated[str, typer.Argument(help="A sweep's output folder: its memories are "
                                       "placed on the board.")],
    published: Annotated[
        Path | None, typer.Option(help="A folder of published sweeps (each with its "
                                  "finals.parquet) instead of fbench's own.")
    ] = None,
    verify: Annotated[
        int, typer.Option(help="Published jobs to rerun here before pairing, besides the "
                          "oracle's (a seeded sample).")
    ] = VERIFY,
    html: Annotated[
        bool, typer.Option("--html", help="Also rewrite OUT's report (RESULTS.md and the "
                           "web page RESULTS.html) to lead with this board.")
    ] = False,
) -> None:
    """Place OUT's memories on the board: every published library and reference policy
    at the same setting, ranked by regret against the oracle at equal memory, paired by
    seed; writes OUT/board.md, OUT/board.parquet and OUT/board.csv (with --html, OUT's
    report leads with it). Exit 2 when nothing could be placed."""
    from published import folder
    from runner.analysis.board import build
    from runner.report.board import board_table, markdown
    from runner.results.atomic import write_parquet, write_text
    from runner.results.finals import published_rows
    from runner.results.load import read_rows
    from runner.results.where import location

    if verify < 0:
        raise FbenchError(f"--verify {verify}: give a number of jobs, 0 or more")
    loc = location(out)
    if html and not isinstance(loc, Path):
        raise FbenchError(f"--html: {out} is remote; the report with its board is written "
                          "beside a local sweep (copy it here, or leave out --html)")
    left_out: list[str] = []
    rows = published_rows(published or folder(), left_out)
    for line in left_out:
        err.print(f"not used: {line}", markup=False, highlight=False, soft_wrap=True)
    found = build(rows, read_rows(loc, final=None).final)
    for line in found.refused:
        err.print(f"not placed: {line}", markup=False, highlight=False, soft_wrap=True)
    if not found.placed:
        raise FbenchError(f"nothing in {out} could be placed on the board (each cell's "
                          "reason above)")
    _verify(rows, found, verify)
    text = markdown(found)
    write_text(loc / "board.md", f"# The board\n\n{text}\n")
    board = board_table(found)
    write_parquet(loc / "board.parquet", board)
    buf = io.BytesIO()
    pacsv.write_csv(board, buf)
    write_text(loc / "board.csv", buf.getvalue().decode())
    console.print(markdown(found, limit=10), markup=False, highlight=False, soft_wrap=True)
    console.print(f"wrote {loc / 'board.md'}, board.parquet and board.csv", markup=False,
                  highlight=False)
    if html and isinstance(loc, Path):  # (a remote OUT was refused above)
        from runner.report.board import placed_section
        from runner.report.markdown import write_report

        report = write_report(loc, html=loc / "RESULTS.html", board_blocks=placed_section(found))
        console.print(f"wrote {report} and {report.with_suffix('.html')}, leading with the "
                      "board", markup=False, highlight=False)


def _verify(rows: pa.Table, found: Any, n: int) -> None:
    """Rerun the oracle's seed-0 job of each placed setting and ``n`` sampled published
    jobs of the board's cells; refuse, in one line, when any differs here."""
    from runner.analysis.board import ORACLE, YOURS, split_params
    from runner.job.verify import sample, verify

    settings = {(r.setting.workload, r.setting.horizon, r.setting.k) for r in found.rows}
    shown = {(r.cell.source, r.cell.policy, r.cell.params) for r in found.rows
             if r.cell.source != YOURS}
    candidates, oracles = [], []
    for r in rows.to_pylist():
        if (r["workload"], r["horizon"], r["k"]) not in settings:
            continue
        own = split_params(r["params"])[1]
        if r["policy"] == ORACLE and own == "{}" and r["seed"] == 0:
            oracles.append(r)
        elif (r["source"], r["policy"], own) in shown:
            candidates.append(r)
    console.print(f"verifying {len(oracles) + min(n, len(candidates))} published job(s) "
                  "here ...", markup=False, highlight=False)
    problem = verify(sample(candidates, oracles, n))
    if problem is not None:
        raise FbenchError(problem if isinstance(problem, str) else problem.line())
