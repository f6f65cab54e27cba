"""The board as tables and Markdown (``runner.analysis.board``): one row per cell with
its rank range, regret against the oracle and its interval, the key metrics and its
cost (timing, not deterministic), and each cell of yours against every published cell."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from runner.analysis.board import (
    KEY_METRICS,
    ORACLE,
    YOURS,
    Board,
    Row,
    Setting,
    build,
    split_params,
)
from runner.report.blocks import Block, Heading, Paragraph, table
from runner.report.markdown_text import render_markdown
from runner.results.tables import format_cell, variant_label

HEADS = ("rank", "memory", "source", "embedder", "seeds", "regret vs oracle ↓",
         "contradiction ↓", "current recall ↑", "false-forget ↓", "final size",
         "s / job", "ms / query")


def rank_text(row: Row) -> str:
    return str(row.rank) if row.rank == row.rank_worst else f"{row.rank}–{row.rank_worst}"


def cells(row: Row) -> list[str]:
    """A row's Markdown cells (``HEADS``)."""
    memory = variant_label(row.cell.policy, row.cell.params)
    if row.cell.source == YOURS:
        memory = f"**{memory}**"
    budget = f" (oracle {row.budget})" if row.budget else " (oracle unbounded)"
    metrics = [format_cell(*row.metrics[m]) for m in KEY_METRICS]
    return [rank_text(row), memory, row.cell.source, row.cell.embedder, str(row.n),
            format_cell(row.regret, row.regret_low, row.regret_high) + budget, *metrics,
            f"{row.cost['wall_s']:.2f}", f"{row.cost['query_ms_mean']:.2f}"]


def markdown(board: Board, limit: int | None = None) -> str:
    """The board, a table per setting (``limit``: its first rows, and every row of
    yours), then each cell of yours against every published cell."""
    return render_markdown(placed_blocks(board, limit)).rstrip("\n")


def placed_blocks(board: Board, limit: int | None = None) -> list[Block]:
    """``markdown``'s content as report blocks: a level-3 heading and a table per
    setting, each cell of yours against every published cell after its setting's."""
    blocks: list[Block] = []
    for setting, rows in by_setting(board.rows):
        shown = [r for i, r in enumerate(rows)
                 if limit is None or i < limit or r.cell.source == YOURS]
        blocks += [Heading(3, setting.label()),
                   table(HEADS, [cells(r) for r in shown], "llllr" + "r" * 7)]
        for r in rows:
            if r.cell.source == YOURS and r.versus:
                blocks += versus_blocks(r)
    return blocks


def placed_section(board: Board) -> list[Block]:
    """The board a sweep's report leads with once ``fbench board --html`` placed it."""
    return [Heading(2, "The board"),
            Paragraph("This sweep's memories (in bold) placed among the published results "
                      "by `fbench board`: per setting, ranked by regret against the oracle "
                      "at equal memory, paired by seed (mean [95% interval]); the rank is "
                      "the range the setting's paired sign-flip tests allow (Holm over all "
                      "its pairs). Seconds a job and ms a query are timing, not compared."),
            *placed_blocks(board)]


def versus_blocks(row: Row) -> list[Block]:
    heads = ("against", "source", "seeds", "Δ regret (yours − theirs)", "p", "p Holm")
    body = [[variant_label(v.theirs.policy, v.theirs.params), v.theirs.source, str(v.n),
             format_cell(v.delta, v.ci_low, v.ci_high), f"{v.p:.3g}", f"{v.p_holm:.3g}"]
            for v in sorted(row.versus, key=lambda v: (v.delta, v.theirs))]
    return [Paragraph(f"{variant_label(row.cell.policy, row.cell.params)} against each "
                      "published cell (paired by seed; Holm over these comparisons):"),
            table(heads, body, "llrrrr")]


def by_setting(rows: Sequence[Row]) -> list[tuple[Setting, list[Row]]]:
    out: dict[Setting, list[Row]] = {}
    for r in rows:
        out.setdefault(r.setting, []).append(r)
    return sorted(out.items())


def board_table(board: Board) -> pa.Table:
    """The board as one table: a row per cell."""
    cols: dict[str, list[object]] = {k: [] for k in (
        "workload", "workload_version", "horizon", "k", "workload_params", "rank",
        "rank_worst", "source", "policy", "params", "embedder", "n", "budget", "regret",
        "regret_low", "regret_high")}
    for m in KEY_METRICS:
        cols.update({m: [], f"{m}_low": [], f"{m}_high": []})
    cols.update({"wall_s": [], "query_ms_mean": []})
    for r in board.rows:
        s = r.setting
        for k, v in (("workload", s.workload), ("workload_version", s.version),
                     ("horizon", s.horizon), ("k", s.k), ("workload_params", s.params),
                     ("rank", r.rank), ("rank_worst", r.rank_worst),
                     ("source", r.cell.source), ("policy", r.cell.policy),
                     ("params", r.cell.params), ("embedder", r.cell.embedder), ("n", r.n),
                     ("budget", r.budget), ("regret", r.regret),
                     ("regret_low", r.regret_low), ("regret_high", r.regret_high),
                     ("wall_s", r.cost["wall_s"]), ("query_ms_mean", r.cost["query_ms_mean"])):
            cols[k].append(v)
        for m in KEY_METRICS:
            mean, lo, hi = r.metrics[m]
            cols[m].append(mean)
            cols[f"{m}_low"].append(lo)
            cols[f"{m}_high"].append(hi)
    return pa.table(cols)


# --- the board that leads a report ------------------------------------------------------

LEAD_HEADS = ("rank", "memory", "embedder", "seeds", "regret vs oracle ↓",
              "contradiction ↓", "current recall ↑", "false-forget ↓", "final size",
              "s / job")


def lead_cells(finals: Sequence[tuple[str, pa.Table, Mapping[str, Any]]]) -> pa.Table:
    """The rows the report's board ranks: of each sweep (name, final rows, its
    ``memories.json``), every library cell and every reference policy at its defaults
    (its own parameters at most an embedder), and the oracle; a cell two sweeps both ran
    (the same jobs) is kept from the first."""
    kept: list[pa.Table] = []
    seen: set[str] = set()
    for name, table_, memories in finals:
        rows = table_.to_pylist()
        keep = []
        for r in rows:
            own = json.loads(split_params(r["params"])[1])
            library = memories.get(r["policy"], {}).get("family") == "incumbent"
            default = set(own) <= {"store.embedder"}
            keep.append(r["job_id"] not in seen and (library or default or r["policy"] == ORACLE))
        picked = table_.filter(pa.array(keep, pa.bool_()))
        seen |= set(picked.column("job_id").to_pylist())
        kept.append(picked.append_column("source", pa.array([name] * picked.num_rows,
                                                            pa.string())))
    return pa.concat_tables(kept, promote_options="default")


def lead_section(finals: Sequence[tuple[str, pa.Table, Mapping[str, Any]]]) -> list[Block]:
    """The board that leads a report: per setting with an oracle, every library setting
    and reference policy ranked by regret against the oracle at equal memory."""
    board = build(lead_cells(finals))
    if not board.rows:
        return []
    blocks: list[Block] = [
        Heading(2, "The board"),
        Paragraph("Per setting, every library setting and every reference policy at its "
                  "defaults, ranked by regret: the oracle's current recall minus the "
                  "memory's, paired by seed, the oracle at the smallest budget that holds "
                  "the memory's mean final size (mean [95% interval]). The rank is the range "
                  "the setting's paired sign-flip tests allow (Holm over all its pairs): "
                  "memories no test tells apart share ranks. Seconds a job are timing, not "
                  "compared. Place your own memory here: `fbench board OUT`.")]
    for setting, rows in by_setting(board.rows):
        blocks += [Heading(3, f"{setting.workload}, horizon {setting.horizon}, k = {setting.k}"
                           + (f", {setting.params}" if setting.params != "{}" else "")),
                   table(LEAD_HEADS, [lead_row(r) for r in rows], "lllr" + "r" * 6)]
    return blocks


def lead_row(row: Row) -> list[str]:
    budget = f" (oracle {row.budget})" if row.budget else ""
    return [rank_text(row), variant_label(row.cell.policy, row.cell.params),
            row.cell.embedder, str(row.n),
            format_cell(row.regret, row.regret_low, row.regret_high) + budget,
            *(format_cell(*row.metrics[m]) for m in KEY_METRICS),
            f"{row.cost['wall_s']:.3g}"]
