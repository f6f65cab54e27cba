"""The figures of one setting (workload, horizon, k): memory growth over time per
policy (``bloat-*``), and one metric against another per cell (``frontier-*``, the
budget view ``budget-*``, ``false_forget-*``), a policy run over one parameter or
budget drawn as a line through its values."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from matplotlib.axes import Axes

from runner.analysis import stats
from runner.report.findings import LINE_STORE_KEYS, Variant, sweeps
from runner.report.plot_style import (
    HOLLOW,
    MARKERS,
    Point,
    directed_label,
    line_style,
    new_figure,
    save_png,
    setting_title,
)
from runner.results.aggregate import Cell, Setting, SummaryIndex
from runner.results.tables import horizon_unit, variant_label


class PlotSummary(SummaryIndex):
    """The summary as the plots read it: variants of a setting, and points with CIs."""

    def variants(self, setting: Setting) -> list[Variant]:
        return [(c[3], c[4]) for c in self.cells if c[:3] == setting]

    def point(self, cell: Cell, metric: str) -> Point | None:
        r = self.rows.get(cell, {}).get(metric)
        if r is None or r["mean"] is None or np.isnan(r["mean"]):
            return None
        return Point(r["mean"], r["ci_low"], r["ci_high"])


def bloat_figure(setting: Setting, variants: list[Variant], shards: pa.Table,
                 path: Path) -> None:
    w, h, k = setting
    cols = {c: shards.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params")}
    t = np.asarray(shards.column("t").to_numpy(), dtype=np.float64)
    in_setting = np.array([(a, b, c) == setting for a, b, c in
                           zip(cols["workload"], cols["horizon"], cols["k"], strict=True)])
    fig, axes = new_figure(12, 4.5, 2)
    unit = horizon_unit(w) or "time"
    for ax, metric, ylabel in ((axes[0], "final_size", "live entries"),
                               (axes[1], "final_tokens", "tokens of live entries")):
        values = shards.column(metric).to_numpy(zero_copy_only=False).astype(np.float64)
        for i, (policy, params) in enumerate(variants):
            mask = in_setting & np.array([p == policy and q == params for p, q in
                                          zip(cols["policy"], cols["params"], strict=True)])
            ts = np.unique(t[mask])
            means, los, his = [], [], []
            for tt in ts:
                key = json.dumps([w, h, k, policy, params, metric, "t", float(tt)])
                s = stats.summarize(values[mask & (t == tt)], key)
                means.append(s.mean)
                los.append(s.mean if np.isnan(s.ci_low) else s.ci_low)
                his.append(s.mean if np.isnan(s.ci_high) else s.ci_high)
            style = line_style(i)
            ax.plot(ts, means, label=variant_label(policy, params), **style)
            ax.fill_between(ts, los, his, color=style["color"], alpha=0.2, linewidth=0)
        ax.set_xlabel(f"t ({unit})")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{directed_label(metric)}: mean, 95% bootstrap band")
    fig.suptitle(f"Memory growth — {setting_title(setting)}")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper")
    save_png(fig, path)


def params_full(shards: pa.Table) -> dict[Cell, dict[str, Any]]:
    names = ("workload", "horizon", "k", "policy", "params", "params_full")
    cols = [shards.column(c).to_pylist() for c in names]
    out: dict[Cell, dict[str, Any]] = {}
    for w, h, k, policy, params, full in zip(*cols, strict=True):
        cell: Cell = (w, h, k, policy, params)
        if cell not in out:
            out[cell] = json.loads(full)
    return out



def _errorbar(ax: Axes, x: Point, y: Point, **kw: Any) -> None:
    ax.errorbar([x.mean], [y.mean], xerr=x.err(), yerr=y.err(), capsize=3, **kw)


def frontier_figure(setting: Setting, summ: PlotSummary, full: dict[Cell, dict[str, Any]],
                    xm: str, ym: str, title: str, path: Path) -> None:
    """``ym`` against ``xm``: a policy run at several values of one parameter is a line
    through them (the τ frontier, a capacity budget curve); every other cell a point."""
    variants = summ.variants(setting)
    lines = sweeps(variants)
    in_line = {v for vs in lines.values() for v in vs}
    fig, (ax,) = new_figure(8, 6)
    for i, ((policy, rest, key), vs) in enumerate(sorted(lines.items())):
        name = key.removeprefix("policy.")
        pts = []
        for v in vs:
            cell: Cell = (*setting, *v)
            x, y = summ.point(cell, xm), summ.point(cell, ym)
            value = full.get(cell, {}).get(key)
            if x is not None and y is not None and isinstance(value, int | float):
                pts.append((float(value), x, y))
        # a budget of 0 is no budget: the curve's far end, not its start
        pts.sort(key=lambda p: math.inf if key in LINE_STORE_KEYS and p[0] == 0 else p[0])
        st = line_style(i)
        ax.plot([p[1].mean for p in pts], [p[2].mean for p in pts], marker="o",
                color=st["color"], linestyle=st["linestyle"],
                label=f"{variant_label(policy, rest)} over {name}")
        same_place: dict[tuple[float, float], list[str]] = {}
        for value, x, y in pts:
            _errorbar(ax, x, y, color=st["color"], linestyle="none")
            text = "none" if key in LINE_STORE_KEYS and value == 0 else f"{value:g}"
            same_place.setdefault((x.mean, y.mean), []).append(text)
        for (px, py), values in same_place.items():
            ax.annotate(f"{name}={'/'.join(values)}", (px, py), textcoords="offset points",
                        xytext=(5, 5), fontsize=7)
    for j, v in enumerate(v for v in variants if v not in in_line):
        cell = (*setting, *v)
        x, y = summ.point(cell, xm), summ.point(cell, ym)
        if x is not None and y is not None:
            _errorbar(ax, x, y, color=line_style(len(lines) + j)["color"],
                      marker=MARKERS[(j + 1) % len(MARKERS)],
                      linestyle="none", label=variant_label(*v), **HOLLOW)
    ax.set_xlabel(f"{directed_label(xm)} (mean, 95% CI)")
    ax.set_ylabel(f"{directed_label(ym)} (mean, 95% CI)")
    ax.set_title(f"{title} — {setting_title(setting)}")
    ax.legend(loc="best")
    save_png(fig, path)


# kind -> (x metric, y metric, title)
FRONTIERS = {
    "frontier": ("recall_at_k", "contradiction_rate", "Contradiction vs recall"),
    "budget": ("final_size", "recall_at_k", "Recall vs memory (the budget view)"),
    "false_forget": ("final_size", "false_forget_rate", "False-forget rate vs final size"),
}
