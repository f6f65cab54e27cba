"""Present a summary's numbers as text: decimals per metric, ``mean [low, high]`` cells, the
labels of policy variants and horizons, and the CLI's main table of headline metrics."""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa
from rich.table import Table

from runner.analysis import stats
from runner.metrics import METRICS
from runner.results.aggregate import CELL, Cell, cell_sort_key, summary_baseline

# The metrics the CLI table and the report's main table show (their direction and
# description still come from the declarations).
HEADLINE = ("contradiction_rate", "recall_at_k", "recall_current_at_k", "false_forget_rate",
            "final_size", "final_tokens")


def horizon_unit(workload: str) -> str:
    """The workload's horizon unit ("turns", "days"), or "" for a workload not registered."""
    from workloads import WORKLOADS

    w = WORKLOADS.get(workload)
    return w.horizon_unit if w is not None else ""


def _value_text(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def variant_label(policy: str, params: str) -> str:
    """``ebbinghaus tau=60``: the policy and its overrides (``policy.`` prefix dropped)."""
    items = sorted(json.loads(params).items())
    extra = ", ".join(f"{k.removeprefix('policy.')}={_value_text(v)}" for k, v in items)
    return f"{policy} {extra}" if extra else policy


def decimals(value: float) -> int:
    """3 decimals for rates and small numbers, 1 for tens and hundreds, 0 beyond."""
    a = abs(value) if not math.isnan(value) else 0.0
    return 3 if a < 10 else 1 if a < 1000 else 0


def metric_decimals(summary: pa.Table) -> dict[str, int]:
    """One number of decimals per metric (from its largest mean), so a row reads evenly."""
    largest: dict[str, float] = {}
    for name, m in zip(summary.column("metric").to_pylist(),
                       summary.column("mean").to_pylist(), strict=True):
        if m is not None and not math.isnan(m):
            largest[name] = max(largest.get(name, 0.0), abs(m))
        else:
            largest.setdefault(name, 0.0)
    return {name: decimals(v) for name, v in largest.items()}


TOO_FEW = "†"  # after a cell whose interval is too wide, or too approximate, to inform
TOO_FEW_NOTE = (f"{TOO_FEW}: too few seeds for the interval to inform (it spans half a "
                f"rate's range or more, or is a t interval of under {stats.SMALL_N} seeds)")


def format_cell(mean: float | None, ci_low: float | None, ci_high: float | None,
                n: int | None = None, n_jobs: int | None = None,
                digits: int | None = None, too_few: bool = False) -> str:
    """``mean [low, high]``, the interval's ends (``—`` when undefined), ``(n=2)`` if seeds
    lack it, ``TOO_FEW`` when ``too_few``."""
    if mean is None or math.isnan(mean):
        text = "—"
    else:
        d = decimals(mean) if digits is None else digits
        ends = (ci_low, ci_high)
        text = f"{mean:.{d}f} " + ("[—]" if any(e is None or math.isnan(e) for e in ends)
                                   else f"[{ci_low:.{d}f}, {ci_high:.{d}f}]")
    if n is not None and n_jobs is not None and n != n_jobs:
        text += f" (n={n})"
    return text + (f" {TOO_FEW}" if too_few else "")


def format_row(r: dict[str, Any], digits: int | None = None) -> str:
    """``format_cell`` of a summary row, marked when its seeds are too few to inform."""
    bounds = METRICS[r["metric"]].bounds if r["metric"] in METRICS else None
    return format_cell(r["mean"], r["ci_low"], r["ci_high"], r["n"], r["n_jobs"], digits,
                       stats.too_few(r["n"], r["ci_low"], r["ci_high"], bounds))


def main_table(summary: pa.Table) -> Table:
    """Policies as rows for each workload/horizon/k, headline metrics as mean [interval]."""
    rows = summary.to_pylist()
    by_cell: dict[Cell, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_cell.setdefault(tuple(r[c] for c in CELL), {})[r["metric"]] = r
    shown = [METRICS[name] for name in HEADLINE if name in METRICS]
    table = Table(title=f"fbench summary: mean [{stats.LEVEL:.0%} interval over seeds]",
                  caption=TOO_FEW_NOTE)
    for col in ("workload", "horizon", "k", "policy", "seeds"):
        table.add_column(col, justify="right" if col in ("horizon", "k", "seeds") else "left")
    for m in shown:
        table.add_column(f"{m.name} {m.arrow}".strip(), justify="right")
    last: tuple[str, int, int] | None = None
    baseline = summary_baseline(summary)
    digits = metric_decimals(summary)
    for cell in sorted(by_cell, key=lambda c: cell_sort_key(c, baseline)):
        w, h, k, policy, params = cell
        if last is not None and (w, h, k) != last:
            table.add_section()
        last = (w, h, k)
        metrics = by_cell[cell]
        any_row = next(iter(metrics.values()))
        cells = []
        for m in shown:
            r = metrics.get(m.name)
            cells.append("" if r is None else format_row(r, digits.get(m.name)))
        table.add_row(w, str(h), str(k), variant_label(policy, params), str(any_row["n_jobs"]),
                      *cells)
    return table
