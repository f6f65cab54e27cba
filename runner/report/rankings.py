"""Do the policies' rankings on fbench's own streams hold on another benchmark's? The
section a report gains when an included sweep runs workloads its main sweep does not
(``sweeps/outside.toml``: StateBench): per primary metric, each policy's mean and 95%
interval (``runner.analysis.stats.interval``) and its rank in every column (a setting
and its workload parameters), then Kendall's τ-b between each outside column and each of the main
sweep's base workloads (``BASES``), over the policies both ran (exploratory: the τ are
not corrected for multiplicity)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from scipy import stats

from runner.report.blocks import Block, Heading, Items, Paragraph, table
from runner.results.aggregate import params_sort_key
from runner.results.tables import format_row, variant_label

BASES = ("contradiction", "lifecycle")  # fbench's two family bases
METRICS = (("recall_current_at_k", "higher"), ("contradiction_rate", "lower"),
           ("false_forget_rate", "lower"))

Column = tuple[str, int, int, str]  # workload, horizon, k, its workload parameters
Columns = dict[Column, dict[str, dict[str, Any]]]  # column -> policy label -> summary row


def _columns(summary: pa.Table, metric: str) -> Columns:
    """column -> policy label -> the summary row of ``metric`` (mean, ci_low, ...)."""
    out: Columns = {}
    for r in summary.to_pylist():
        if r["metric"] != metric:
            continue
        params = json.loads(r["params"])
        own = {k: v for k, v in params.items() if k.startswith("workload.")}
        rest = {k: v for k, v in params.items() if k not in own}
        col = (r["workload"], r["horizon"], r["k"], json.dumps(own, sort_keys=True))
        out.setdefault(col, {})[variant_label(r["policy"], json.dumps(rest, sort_keys=True))] = r
    return out


def _order(col: Column) -> tuple[Any, ...]:
    return (*col[:3], params_sort_key(col[3]))  # defaults first, then values numerically


def _title(col: Column) -> str:
    own = json.loads(col[3])
    extra = " ".join(f"{k.removeprefix('workload.')}={v}" for k, v in own.items())
    return f"{col[0]} h{col[1]}" + (f" {extra}" if extra else "")


def _ranks(cells: dict[str, dict[str, Any]], direction: str) -> dict[str, float]:
    labels = [p for p, r in cells.items() if not _nan(r["mean"])]
    sign = -1.0 if direction == "higher" else 1.0
    ranks = stats.rankdata([sign * cells[p]["mean"] for p in labels], method="min")
    return dict(zip(labels, (float(x) for x in ranks), strict=True))


def _nan(x: float | None) -> bool:
    return x is None or math.isnan(x)


def section(main: pa.Table, outside: Sequence[tuple[str, pa.Table]]) -> list[Block]:
    """The rankings section, or nothing when no included sweep runs another workload."""
    own = set(main.column("workload").to_pylist())
    others = [(name, s) for name, s in outside
              if not set(s.column("workload").to_pylist()) & own]
    if not others:
        return []
    blocks: list[Block] = [
        Heading(2, "Do the rankings hold elsewhere?"),
        Paragraph(f"Each policy on the main sweep's {' and '.join(f'`{b}`' for b in BASES)} "
                  f"and on the included sweeps' own workloads "
                  f"({', '.join(f'`{n}/`' for n, _ in others)}): its mean [95% interval over "
                  "seeds], and its rank in the column among the policies "
                  "shown (1 = best; ties share the best rank). τ: Kendall's τ-b between two "
                  "columns' means over the policies both ran (exploratory, not corrected for "
                  "multiplicity).")]
    for metric, direction in METRICS:
        mains = {c: v for c, v in _columns(main, metric).items() if c[0] in BASES}
        outs = {c: v for _, s in others for c, v in _columns(s, metric).items()}
        if mains and outs:
            blocks += _metric(metric, direction, mains, outs)
    return blocks


def _metric(metric: str, direction: str, mains: Columns, outs: Columns) -> list[Block]:
    """One metric's table (a row per policy an outside column ran, a column per main and
    outside column: rank, mean and interval) and its τ between each outside and main column."""
    cols = sorted(mains, key=_order) + sorted(outs, key=_order)
    labels = sorted({p for c in outs for p in outs[c]})  # ranked among these only
    every = {c: {p: r for p, r in v.items() if p in labels} for c, v in
             {**mains, **outs}.items()}
    ranks = {c: _ranks(every[c], direction) for c in cols}
    rows = [[p, *(_ranked(every[c].get(p), ranks[c].get(p, math.nan)) for c in cols)]
            for p in labels]
    arrow = "↑" if direction == "higher" else "↓"
    blocks: list[Block] = [
        Paragraph(f"**{metric} {arrow}**"),
        table(["policy", *map(_title, cols)], rows, "l" + "r" * len(cols))]
    taus = _taus(sorted(outs, key=_order), sorted(mains, key=_order), ranks)
    return blocks + ([Items(tuple(taus))] if taus else [])


def _ranked(r: dict[str, Any] | None, rank: float) -> str:
    """``2. 0.500 [0.490, 0.510]``: a policy's rank in its column and its mean and
    interval; "" not run."""
    if r is None:
        return ""
    return f"{rank:.0f}. " + format_row(r, 3)


def _taus(outs: Sequence[Column], mains: Sequence[Column],
          ranks: dict[Column, dict[str, float]]) -> list[str]:
    """Kendall's τ-b of each outside column against each main column, over the policies
    both ranked (three or more)."""
    taus = []
    for o in outs:
        for m in mains:
            both = sorted(set(ranks[o]) & set(ranks[m]))
            if len(both) < 3:
                continue
            res = stats.kendalltau([ranks[o][p] for p in both], [ranks[m][p] for p in both])
            taus.append(f"{_title(o)} vs {_title(m)}: τ = {res.statistic:+.2f} "
                        f"(p = {res.pvalue:.2g}, {len(both)} policies)")
    return taus
