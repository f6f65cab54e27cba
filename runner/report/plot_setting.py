"""The figures of one setting (workload, horizon, k): memory growth over time per
policy (``bloat-*``), and one metric against another per cell (``frontier-*``, the
budget view ``budget-*``, ``false_forget-*``), a policy run over one parameter or
budget drawn as a line through its values. A setting with more curves than a panel
holds (``plot_style.MAX_CURVES``) gets one panel per group of them
(``plot_style.split_panels``), the oracle and the baseline drawn in each as references.

``*_fig`` build the figure (for a caller that inspects it), ``*_figure`` save it."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from runner.analysis import stats
from runner.metrics import METRICS
from runner.report.findings import LINE_STORE_KEYS, Variant, sweeps
from runner.report.plot_style import (
    HOLLOW,
    MARKERS,
    Panel,
    Point,
    directed_label,
    legend_right,
    new_grid,
    new_rows,
    panel_style,
    reference_style,
    rest_params,
    save_png,
    setting_title,
    split_panels,
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


def panel_styles(panel: Panel, policies: Sequence[str]) -> list[tuple[int, dict[str, Any], int]]:
    """(curve, style, index among its kind) for each curve of the panel: references
    first in their style, then the panel's own curves in distinct colours."""
    out = []
    seen: dict[str, int] = {}
    for i in panel.refs:
        j = seen.get(policies[i], 0)
        seen[policies[i]] = j + 1
        out.append((i, reference_style(policies[i], j), j))
    out += [(i, panel_style(j), j) for j, i in enumerate(panel.own)]
    return out


BLOAT_METRICS = (("final_size", "live entries"), ("final_tokens", "tokens of live entries"))


def bloat_fig(setting: Setting, variants: list[Variant], shards: pa.Table,
              baseline: str = "keep_all") -> Figure:
    """Live entries and tokens vs time, one row of two panels per group of variants."""
    cols = {c: shards.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params")}
    t = np.asarray(shards.column("t").to_numpy(), dtype=np.float64)
    in_setting = np.array([(a, b, c) == setting for a, b, c in
                           zip(cols["workload"], cols["horizon"], cols["k"], strict=True)])
    series: dict[tuple[int, str], tuple[np.ndarray, list[float], list[float], list[float]]] = {}
    for metric, _ in BLOAT_METRICS:
        values = shards.column(metric).to_numpy(zero_copy_only=False).astype(np.float64)
        for i, (policy, params) in enumerate(variants):
            mask = in_setting & np.array([p == policy and q == params for p, q in
                                          zip(cols["policy"], cols["params"], strict=True)])
            ts = np.unique(t[mask])
            means, los, his = [], [], []
            for tt in ts:
                s = stats.summarize(values[mask & (t == tt)], METRICS[metric].bounds)
                means.append(s.mean)
                los.append(s.mean if np.isnan(s.ci_low) else s.ci_low)
                his.append(s.mean if np.isnan(s.ci_high) else s.ci_high)
            series[(i, metric)] = (ts, means, los, his)
    panels = split_panels([(p, rest_params(q)) for p, q in variants], baseline)
    policies = [p for p, _ in variants]
    n = len(panels)
    fig, grid = new_rows(13, 4.5 if n == 1 else 0.5 + 3.5 * n, [p.title for p in panels], 2)
    unit = horizon_unit(setting[0]) or "time"
    for row, panel in zip(grid, panels, strict=True):
        for ax, (metric, ylabel) in zip(row, BLOAT_METRICS, strict=True):
            for i, style, _ in panel_styles(panel, policies):
                ts, means, los, his = series[(i, metric)]
                ax.plot(ts, means, label=variant_label(*variants[i]), **style)
                ax.fill_between(ts, los, his, color=style["color"],
                                alpha=0.15 if i in panel.refs else 0.2, linewidth=0)
            ax.set_xlabel(f"t ({unit})")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{directed_label(metric)}: mean, 95% t band")
        legend_right(row[1], *row[0].get_legend_handles_labels())
    fig.suptitle(f"Memory growth — {setting_title(setting)}",
                 fontsize="x-large" if n > 1 else None)
    return fig


def bloat_figure(setting: Setting, variants: list[Variant], shards: pa.Table,
                 path: Path, baseline: str = "keep_all") -> None:
    save_png(bloat_fig(setting, variants, shards, baseline), path)


def params_full(shards: pa.Table) -> dict[Cell, dict[str, Any]]:
    names = ("workload", "horizon", "k", "policy", "params", "params_full")
    cols = [shards.column(c).to_pylist() for c in names]
    out: dict[Cell, dict[str, Any]] = {}
    for w, h, k, policy, params, full in zip(*cols, strict=True):
        cell: Cell = (w, h, k, policy, params)
        if cell not in out:
            out[cell] = json.loads(full)
    return out


def _errorbar(ax: Axes, x: Point, y: Point, **kw: Any) -> Any:
    return ax.errorbar([x.mean], [y.mean], xerr=x.err(), yerr=y.err(), capsize=3, **kw)


def _line(ax: Axes, setting: Setting, summ: PlotSummary, full: dict[Cell, dict[str, Any]],
          xm: str, ym: str, line: tuple[str, str, str], vs: list[Variant],
          st: dict[str, Any]) -> Any:
    """A policy's cells over one parameter, as a line through them, each value named;
    the line."""
    policy, rest, key = line
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
    (drawn,) = ax.plot([p[1].mean for p in pts], [p[2].mean for p in pts], marker="o",
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
    return drawn


def frontier_fig(setting: Setting, summ: PlotSummary, full: dict[Cell, dict[str, Any]],
                 xm: str, ym: str, title: str) -> Figure:
    """``ym`` against ``xm``: a policy run at several values of one parameter is a line
    through them (the τ frontier, a capacity budget curve); every other cell a point.
    One panel per group of curves, stacked, on the same scales."""
    variants = summ.variants(setting)
    lines = sorted(sweeps(variants).items())
    in_line = {v for _, vs in lines for v in vs}
    points = [v for v in variants if v not in in_line]
    curves = ([(policy, rest) for (policy, rest, _), _ in lines]
              + [(p, rest_params(q, LINE_STORE_KEYS)) for p, q in points])
    panels = split_panels(curves, summ.baseline)
    n = len(panels)
    fig, grid = new_grid(10.5, 6 if n == 1 else 0.6 + 5.2 * n, n, 1)
    for (ax,) in grid[1:]:  # the same scales in every panel, each with its tick labels
        ax.sharex(grid[0][0])
        ax.sharey(grid[0][0])
    for (ax,), panel in zip(grid, panels, strict=True):
        handles = []  # in the panel's order (references first), not by artist type
        for i, st, j in panel_styles(panel, [p for p, _ in curves]):
            if i < len(lines):
                handles.append(_line(ax, setting, summ, full, xm, ym, *lines[i], st))
                continue
            cell: Cell = (*setting, *points[i - len(lines)])
            x, y = summ.point(cell, xm), summ.point(cell, ym)
            if x is not None and y is not None:
                marker = MARKERS[j % len(MARKERS)] if i in panel.refs else \
                    MARKERS[(j + 1) % len(MARKERS)]
                handles.append(_errorbar(ax, x, y, color=st["color"], marker=marker,
                                         linestyle="none",
                                         label=variant_label(*points[i - len(lines)]),
                                         **HOLLOW))
        ax.set_xlabel(f"{directed_label(xm)} (mean, 95% CI)")
        ax.set_ylabel(f"{directed_label(ym)} (mean, 95% CI)")
        if panel.title:
            ax.set_title(panel.title)
        legend_right(ax, handles, [h.get_label() for h in handles])
    fig.suptitle(f"{title} — {setting_title(setting)}")
    declutter(fig)
    return fig


def declutter(fig: Figure) -> None:
    """Point labels that would print over one another, as laid out for the PNG: one of
    the same parameter takes the other's value into its own (``tau=240/500/1000``); any
    other is left out. Every label left is readable."""
    assert fig.canvas is not None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for ax in fig.axes:
        kept: list[Any] = []
        for ann in list(ax.texts):
            box = ann.get_window_extent(renderer)
            hit = next((k for k in kept if k.get_window_extent(renderer).overlaps(box)), None)
            if hit is None:
                kept.append(ann)
                continue
            name, _, value = ann.get_text().partition("=")
            held, _, values = hit.get_text().partition("=")
            if name == held:
                hit.set_text(f"{held}={values}/{value}")
            ann.remove()
        shown: list[Any] = []
        for ann in kept:  # a label that grew may now reach another
            box = ann.get_window_extent(renderer)
            if any(k.get_window_extent(renderer).overlaps(box) for k in shown):
                ann.remove()
            else:
                shown.append(ann)


def frontier_figure(setting: Setting, summ: PlotSummary, full: dict[Cell, dict[str, Any]],
                    xm: str, ym: str, title: str, path: Path) -> None:
    save_png(frontier_fig(setting, summ, full, xm, ym, title), path)


# kind -> (x metric, y metric, title)
FRONTIERS = {
    "frontier": ("recall_at_k", "contradiction_rate", "Contradiction vs recall"),
    "budget": ("final_size", "recall_at_k", "Recall vs memory (the budget view)"),
    "false_forget": ("final_size", "false_forget_rate", "False-forget rate vs final size"),
}
