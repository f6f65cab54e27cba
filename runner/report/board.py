"""The board as tables and Markdown (``runner.analysis.board``): one row per cell with
its rank range, regret against the oracle and its interval, the key metrics and its
cost (timing, not deterministic), and each cell of yours against every published cell."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from runner.analysis.board import KEY_METRICS, YOURS, Board, Row, Setting
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
    lines: list[str] = []
    for setting, rows in by_setting(board.rows):
        shown = [r for i, r in enumerate(rows)
                 if limit is None or i < limit or r.cell.source == YOURS]
        lines += [f"### {setting.label()}", "", _row(HEADS), _row(["---"] * len(HEADS)),
                  *(_row(cells(r)) for r in shown), ""]
        for r in rows:
            if r.cell.source == YOURS and r.versus:
                lines += versus_markdown(r)
    return "\n".join(lines)


def versus_markdown(row: Row) -> list[str]:
    heads = ("against", "source", "seeds", "Δ regret (yours − theirs)", "p", "p Holm")
    out = [f"{variant_label(row.cell.policy, row.cell.params)} against each published cell "
           "(paired by seed; Holm over these comparisons):", "", _row(heads),
           _row(["---"] * len(heads))]
    for v in sorted(row.versus, key=lambda v: (v.delta, v.theirs)):
        out.append(_row([variant_label(v.theirs.policy, v.theirs.params), v.theirs.source,
                         str(v.n), format_cell(v.delta, v.ci_low, v.ci_high),
                         f"{v.p:.3g}", f"{v.p_holm:.3g}"]))
    return [*out, ""]


def by_setting(rows: Sequence[Row]) -> list[tuple[Setting, list[Row]]]:
    out: dict[Setting, list[Row]] = {}
    for r in rows:
        out.setdefault(r.setting, []).append(r)
    return sorted(out.items())


def _row(values: Sequence[str]) -> str:
    return "| " + " | ".join(values) + " |"


def table(board: Board) -> pa.Table:
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
