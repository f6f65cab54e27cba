"""``RESULTS.md``: a deterministic Markdown report of a sweep, and its plots.

It leads with the answer (the board of its sweeps, when they ran the oracle; what ran
and its cost, the numbered findings, the seeds' reproduction table, one figure), then
one compact table per setting. Every number in it is computed from ``summary.parquet``
and ``comparisons.parquet`` (recomputed first if missing or stale) and the shards;
metric names, directions and descriptions come from the metric declarations. Nothing
depends on the clock or the machine: the only versions it names are the ones the shards
recorded, and the timing the shards recorded appears only where it says so (the board's
and the Cost section's seconds, the Scaling section's per-job slope). Plots are
referenced relative to the Markdown file's folder. This module assembles the report as
blocks (``runner.report.blocks``) and writes their two renderings, the Markdown
(``markdown_text``) and the web page (``web_page``, ``html``); what the sections state
is computed in ``runner.report.findings``, ``findings_text``, ``claims`` and
``reproduction``; the Scaling section is ``runner.report.scaling_section``.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from runner.analysis import scaling
from runner.errors import FbenchError
from runner.metrics import METRICS
from runner.report import board, headroom, incumbents, rankings, reproduction, scaling_section
from runner.report import claims as claims_mod
from runner.report.blocks import (
    Block,
    Heading,
    Items,
    Paragraph,
    demoted,
    directed,
    images,
    seed_ranges,
    setting_title,
    table,
)
from runner.report.categories import category_tables, setting_categories
from runner.report.claims import NOT_RUN, Result
from runner.report.evidence import Evidence
from runner.report.findings import (
    BUDGET_METRICS,
    USEFUL_SHARE,
    ReportIndex,
    degenerate,
    equal_memory,
    frontier3,
)
from runner.report.findings_text import findings, frontier_line, verdict_marks
from runner.report.markdown_text import render_markdown
from runner.report.method import method_section
from runner.report.plots import Plots, write_plots
from runner.report.ran import cost_section, report_command, versions_section, what_ran
from runner.results.aggregate import UNUSED, Setting, compared_metrics, read_summary
from runner.results.atomic import write_text
from runner.results.comparisons import COMPARISONS, PRIMARY_METRICS
from runner.results.layout import CHECKPOINT_COLUMNS
from runner.results.load import read_rows
from runner.results.tables import TOO_FEW_NOTE, format_row, variant_label
from runner.results.where import ArrowPath, Loc, arrow_source, location

if TYPE_CHECKING:
    from runner.report.drill import CellEvidence

# The checkpoint rows' columns (``CHECKPOINT_COLUMNS``, what a published folder keeps):
# the memory-growth plots' series (``plot_setting.bloat_fig``). Everything else the
# report reads is per job, from the final rows.
# The final rows' columns the report leaves unread (the evidence reads ``params_full``,
# "What ran" and the Versions table the provenance).
FINAL_UNREAD = UNUSED - {"params_full", "versions", "git_commit", "fbench_version",
                         "workload_version"}


def write_report(out: str | Loc, output: Path | None = None,
                 include: Sequence[str | Loc] = (), html: Path | None = None,
                 calibration: Path | None = None, helpers: int | None = 0,
                 board_blocks: Sequence[Block] | None = None) -> Path:
    """Write the plots into ``OUT/plots``, every comparison into ``OUT/comparisons.csv``
    (every metric of every cell is ``OUT/summary.parquet``), and the report (default
    ``OUT/RESULTS.md``); each folder of ``include`` (another sweep, e.g. the incumbents')
    follows as a section of its own. The seeds' claims are tested on the first folder
    that ran their cells. ``html``: the same report as one self-contained web page too.
    ``calibration``: a folder of ``fbench calibrate --json`` files, shown as the Headroom
    section. A remote OUT (``runner.results.where``) keeps its tables; the plots and the
    report go to ``output``'s folder, which must then be given. ``helpers``: processes
    that draw plots beside this one (``write_plots``; ``None``: one per other core).
    ``board_blocks``: the board the report leads with, in place of its sweeps' own (the
    one ``fbench board`` placed them on)."""
    out = location(out)
    if output is None:
        if isinstance(out, ArrowPath):
            raise FbenchError(f"{out} is remote: give a local folder for the report and its "
                              "plots (--report-dir)")
        output = out / "RESULTS.md"
    output = Path(output)
    folders = [out, *map(location, include)]
    rows = {f: read_rows(f, final=None, every=CHECKPOINT_COLUMNS, skip=FINAL_UNREAD)
            for f in folders}  # (each folder's files read once)
    final = {f: rows[f].final for f in folders}
    tables = {f: _tables(f, final[f]) for f in folders}
    evidence = [Evidence(f, final[f]) for f in folders]
    results = claims_mod.evaluate(evidence)
    repro = reproduction.rows(evidence, results)
    top = findings([("" if f == out else f.name, ReportIndex(tables[f][0], final[f]),
                     tables[f][1].to_pylist()) for f in folders], results)
    lead = board_blocks if board_blocks is not None else board.lead_section(
        [(f.name, final[f], incumbents.read_memories(f)) for f in folders])
    blocks: list[Block] = []
    for f in folders:
        summary, comparisons = tables[f]
        plots = write_plots(_plot_folder(f, out, output), summary, final[f], rows[f].every,
                            helpers)
        memories = incumbents.read_memories(f)
        if f != out:
            blocks += included(f, render(summary, final[f], plots, output.parent, comparisons,
                                         found=[], memories=memories,
                                         included_from=_seen_from(f, output.parent),
                                         on_board=bool(lead)))
            continue
        blocks += render(summary, final[f], plots, output.parent, comparisons, results, repro,
                         top, report_command(out, include, output, calibration),
                         headroom.load(calibration) if calibration else [], memories,
                         lead=lead)
        blocks += rankings.section(summary, [(i.name, tables[i][0]) for i in folders[1:]])
    output.parent.mkdir(parents=True, exist_ok=True)
    write_text(output, render_markdown(blocks))
    if html is not None:
        from runner.report.drill import sweep_evidence

        cells = [c for f in folders for c in sweep_evidence(f, final[f], f.name)]
        _write_page(blocks, output.parent, [(f.name, tables[f][1]) for f in folders], cells,
                    html)
    return output


def _write_page(blocks: Sequence[Block], folder: Path,
                comparisons: Sequence[tuple[str, pa.Table]], cells: Sequence[CellEvidence],
                html: Path) -> None:
    """The report's blocks as the web page at ``html`` (figures relative to ``folder``),
    with every sweep's primary ``comparisons`` (sweep name, table) in one more section,
    and the ``cells``' evidence in another, linked from the comparisons."""
    from runner.report.drill import anchor, with_evidence
    from runner.report.html import write_html
    from runner.report.web_page import page_of, with_comparisons

    page = with_comparisons(page_of(blocks, folder), comparisons,
                            {anchor(c.key) for c in cells})
    write_html(with_evidence(page, cells), html)


def _seen_from(folder: Loc, base: Path) -> str:
    """An included sweep's folder as a reader of the report in ``base`` finds it: a local
    one relative to ``base``, a remote one by its URI."""
    if isinstance(folder, Path):
        return Path(os.path.relpath(folder.resolve(), base.resolve())).as_posix()
    return str(folder)


def _plot_folder(folder: Loc, out: Loc, output: Path) -> Path:
    """``FOLDER/plots`` for a local sweep folder; beside the report for a remote one."""
    if isinstance(folder, Path):
        return folder / "plots"
    return output.parent / "plots" if folder == out else output.parent / "plots" / folder.name


def _tables(out: Loc, final: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The folder's summary and comparisons (recomputed when stale or missing); the
    comparisons also as ``comparisons.csv`` (every one, with p, Holm and BH values)."""
    summary = read_summary(out, final)  # recomputed, comparisons too, unless current
    comparisons = pq.read_table(arrow_source(out / COMPARISONS))
    buf = io.BytesIO()
    pacsv.write_csv(comparisons.replace_schema_metadata(None), buf)
    write_text(out / "comparisons.csv", buf.getvalue().decode())
    return summary, comparisons


def included(out: Loc, blocks: Sequence[Block]) -> list[Block]:
    """Another sweep's report as one section: its title gives way to a level-2 heading
    naming the folder, every other heading goes one level down."""
    body = [b for b in blocks if not (isinstance(b, Heading) and b.level == 1)]
    return [Heading(2, f"Included sweep: `{out.name}/`"),
            Paragraph(f"The report of the sweep in `{out.name}/` (its own grid, method, seeds "
                      "and baseline), included by `fbench report --include`."),
            *demoted(body)]


def render(summary: pa.Table, final: pa.Table, plots: Plots, folder: Path,
           comparisons: pa.Table | None = None,
           claims: Sequence[Result] = (),
           reproduction: Sequence[Sequence[str]] = (),
           found: Sequence[Block] | None = None, command: str | None = None,
           calibrations: Sequence[dict[str, Any]] = (),
           memories: incumbents.Memories | None = None,
           included_from: str | None = None, lead: Sequence[Block] = (),
           on_board: bool = False) -> list[Block]:
    """The report's blocks, from the summary and each job's ``final`` row; plot paths are
    relative to ``folder``. It leads with the answer: the board (``lead``), what ran and
    its cost, the numbered findings (the seeds' claims first), the reproduction table
    and one figure; then a compact table per setting. ``found``: the findings (default:
    this sweep's own). ``included_from``: the folder of a sweep included in another's
    report (as seen from that report's folder), whose tables per setting stay in its own
    report, its method said by what differs, its metric legend left to the report it
    is in. ``on_board``: its cells are on the board the report leads with, so its
    libraries table says only what each library cell is."""
    idx = ReportIndex(summary, final)
    cmp = comparisons.to_pylist() if comparisons is not None else []
    studies = scaling.studies(final, idx.baseline)
    blocks: list[Block] = [
        Heading(1, "fbench results"),
        Paragraph("Generated by `fbench report` from a sweep's shards; do not edit by hand. "
                  "In each sweep's folder: every comparison with its p, Holm and BH values in "
                  "`comparisons.csv`; every metric of every cell in `summary.parquet`."),
        *lead,
        *what_ran(idx, final, command),
        *cost_section(final),
        *incumbents.section(summary, final, memories or {}, brief=on_board),
        *(found if found is not None else findings([("", idx, cmp)], claims)),
        *_reproduction(reproduction),
        *images([p for p in plots.plots if p.kind == "frontier"][:1], folder)]
    for setting in idx.settings():
        blocks += _setting(idx, cmp, setting, plots, folder, included_from)
    blocks += scaling_section.section(idx, studies, plots, folder)
    blocks += headroom.section(list(calibrations))
    blocks += method_section(idx, bool(studies), brief=included_from is not None)
    blocks += versions_section(final) + ([] if included_from is not None else _legend())
    if plots.notes:
        blocks += [Heading(2, "Plots not made"), Items(tuple(plots.notes))]
    return blocks


def _reproduction(rows: Sequence[Sequence[str]]) -> list[Block]:
    """The reproduction table (``runner.report.reproduction.rows``): the rows the sweeps
    ran, and a line counting those they did not; [] when they ran none."""
    ran = [r for r in rows if r[3] != NOT_RUN]
    if not ran:
        return []
    idle = len(rows) - len(ran)
    note = (f" {idle} of the seeds' {len(rows)} numbers are not in these sweeps "
            "(`sweeps/results.toml` runs them all)." if idle else "")
    return [Heading(2, "Reproduction of the seeds"),
            Paragraph("Holds in kind: yes or no by the verdict of the seed's claim the number "
                      "bears on (its test and effect are in Findings); a number no claim of the "
                      "seed's covers is shown, not judged." + note),
            table(["seed", "quantity", "published", "fbench mean [95% interval]", "definition",
                   "holds in kind"], ran, "llrrll")]


def _legend() -> list[Block]:
    """The primary metrics (every other one: ``fbench list metrics``)."""
    want = {"lower": "↓ lower", "higher": "↑ higher", "none": "(descriptive)"}
    rows = [[m.name, want[m.direction],
             f"{m.margin:.0%} of the baseline" if m.relative else f"{m.margin:g}",
             m.description] for m in compared_metrics() if m.name in PRIMARY_METRICS]
    return [Heading(2, "Primary metrics"), Paragraph("Every other metric: `fbench list metrics`."),
            table(["metric", "better", "margin", "description"], rows, "llll")]


def _setting(idx: ReportIndex, cmp: list[dict[str, Any]], setting: Setting, plots: Plots,
             folder: Path, own_report: str | None = None) -> list[Block]:
    """The primary metrics of each cell (bit-identical cells collapsed, degenerate ones
    flagged, the 3-axis frontier marked), each value followed by its primary verdict;
    then the equal-memory and per-category tables. For an included sweep
    (``own_report``: its folder as seen from the report's), these tables stay in its
    own report: a line says where; its frontier line and figures stay here."""
    shown = images([p for p in plots.plots if (p.workload, p.horizon, p.k) == setting],
                   folder)
    if own_report is not None:
        return [Heading(2, setting_title(setting)),
                Paragraph(own_report_line(idx, setting, own_report)),
                Paragraph(frontier_line(idx, setting)), *shown]
    cells = [c for c in idx.in_setting(setting) if idx.same_as(c) is None]
    seeds = set().union(*(idx.seeds.get(c, set()) for c in cells))
    metrics = [METRICS[n] for n in PRIMARY_METRICS if n in METRICS]
    on = set(frontier3(idx, cells))
    marks = verdict_marks(cmp, setting)
    rows = []
    for c in cells:
        r = idx.rows[c]
        twins = idx.twins_of(c)
        label = variant_label(c[3], c[4]) + (f" (= {', '.join(twins)})" if twins else "")
        flag = "degenerate" if degenerate(idx, c) else "★" if c in on else ""
        rows.append([label, str(idx.n_jobs(c)), flag]
                    + [_cell(r.get(m.name), idx.digits) + marks.get((c, m.name), "")
                       for m in metrics])
    return [
        Heading(2, setting_title(setting)),
        Paragraph(f"Seeds {seed_ranges(seeds)}; mean [95% interval], then the primary "
                  f"comparison with `{idx.baseline}` (Holm within this setting): ▲ better, "
                  "▼ worse, ▲≈ / ▼≈ better / worse but within the margin, ≈ equivalent, "
                  "? inconclusive, = identical. ★: on the frontier of contradiction, current "
                  f"recall and size (a cell with under {USEFUL_SHARE:.0%} of the best current "
                  f"recall here is never starred). {TOO_FEW_NOTE}."),
        table(["policy", "n", "", *(directed(m) for m in metrics)], rows,
              "lrl" + "r" * len(metrics)),
        Paragraph(frontier_line(idx, setting)),
        *_equal_memory(idx, setting), *category_tables(idx, setting), *shown]


def own_report_line(idx: ReportIndex, setting: Setting, folder: str) -> str:
    """Where an included sweep's tables of a setting are: its own report."""
    cells = [c for c in idx.in_setting(setting) if idx.same_as(c) is None]
    parts = [f"every cell's primary metrics ({len(cells)} cells) and their verdicts "
             f"against `{idx.baseline}`"]
    if _equal_memory(idx, setting):
        parts.append("the table at equal memory")
    cats = setting_categories(idx, setting)
    if cats:
        parts.append(f"the per-category tables ({', '.join(cats)})")
    what = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
    return (f"{what[0].upper()}{what[1:]}: in [`{folder}/RESULTS.md`]({folder}/RESULTS.md), "
            "the sweep's own report (`fbench report` on its folder); every cell of every "
            f"metric is in `{folder}/summary.parquet`.")


def _cell(r: dict[str, Any] | None, digits: dict[str, int]) -> str:
    if r is None:
        return ""
    return format_row(r, digits.get(r["metric"]))


def _equal_memory(idx: ReportIndex, setting: Setting) -> list[Block]:
    """Each capacity policy run at several capacities, read at every other policy's final
    size (``runner.report.findings.equal_memory``): the table of the two."""
    found = equal_memory(idx, setting)
    if not found:
        return []
    metrics = [METRICS[m] for m in BUDGET_METRICS]
    rows = []
    for e in found:
        cells = []
        for m, (own, there) in zip(metrics, e.values, strict=True):
            d = idx.digits.get(m.name, 3)
            cells.append(f"{own:.{d}f} vs {there:.{d}f}" if own is not None
                         and there is not None else "—")
        rows.append([variant_label(*e.variant), f"{e.size:.1f}", variant_label(*e.curve), *cells])
    return [Heading(3, "At equal memory"),
            Paragraph("Each capacity policy, run at several capacities, read at another "
                      "policy's mean final size (linear interpolation between the two "
                      "capacities around it; sizes outside the grid are left out). Cells: the "
                      "policy's own mean vs the capacity policy's at the same size."),
            table(["policy", "final size", "capacity policy",
                   *(directed(m) for m in metrics)], rows, "lrl" + "r" * len(metrics))]
