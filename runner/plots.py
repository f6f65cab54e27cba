"""The report's figures (matplotlib, Agg canvas, PNG) into ``OUT/plots/``.

Deterministic: matplotlib's default style (a user's matplotlibrc is ignored),
fixed figure sizes and dpi, no ``Software`` metadata in the PNG, series and
colours in a fixed order, and intervals from the seeded bootstrap of
``runner.stats``. The same shards give byte-identical files (for one matplotlib
version). ``OUT/plots`` belongs to the report: PNGs it did not write this time
are removed.

- ``bloat-*``: live entries and tokens vs time per policy, mean over seeds with
  a bootstrap band (from every checkpoint row).
- ``frontier-*``: contradiction rate vs recall. A policy run at several values
  of one ``policy.*`` parameter is a line through those values (the default
  cell included, at its resolved value); every other cell is a reference point.
- ``false_forget-*``: false-forget rate vs final size per policy.
- ``scaling-*``: when a workload ran at several horizons, three log–log panels (final
  size, final tokens, per-job seconds ``wall_s``) against the horizon, one line per
  policy variant that ran at two or more of them (mean over seeds, bootstrap CI). The
  fitted slopes (``runner.scaling``) are in the report. ``wall_s`` is a timing column:
  the same shards still give the same figure.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pyarrow as pa
from matplotlib import style as mpl_style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from runner import scaling, stats
from runner.aggregate import (
    Cell,
    Setting,
    SummaryIndex,
    horizon_unit,
    variant_label,
)
from runner.metrics import METRICS

DPI = 100
PNG_METADATA: dict[str, Any] = {"Software": None}
COLORS = [matplotlib.colormaps["tab10"](i) for i in range(10)]
LINESTYLES = ["-", "--", ":", "-."]
# Hollow markers of distinct shapes, so cells at the same point stay visible.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
HOLLOW: dict[str, Any] = {"markerfacecolor": "none", "markersize": 8, "markeredgewidth": 1.5}

Variant = tuple[str, str]  # policy, params


@dataclass(frozen=True)
class Plot:
    kind: str
    title: str
    path: Path
    workload: str
    k: int
    horizon: int | None  # None: across horizons (scaling)


@dataclass
class Plots:
    plots: list[Plot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # plots skipped, and why


@dataclass(frozen=True)
class Point:
    mean: float
    lo: float
    hi: float

    def err(self) -> list[list[float]]:
        """Asymmetric error bar lengths (0 where the interval is undefined)."""
        lo = 0.0 if np.isnan(self.lo) else self.mean - self.lo
        hi = 0.0 if np.isnan(self.hi) else self.hi - self.mean
        return [[lo], [hi]]


def _directed(metric: str) -> str:
    m = METRICS.get(metric)
    return f"{metric} {m.arrow}".strip() if m is not None else metric


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _style(i: int) -> dict[str, Any]:
    return {"color": COLORS[i % len(COLORS)], "linestyle": LINESTYLES[(i // len(COLORS)) % 4]}


class _Summary(SummaryIndex):
    """The summary as the plots read it: variants of a setting, and points with CIs."""

    def variants(self, setting: Setting) -> list[Variant]:
        return [(c[3], c[4]) for c in self.cells if c[:3] == setting]

    def point(self, cell: Cell, metric: str) -> Point | None:
        r = self.rows.get(cell, {}).get(metric)
        if r is None or r["mean"] is None or np.isnan(r["mean"]):
            return None
        return Point(r["mean"], r["ci_low"], r["ci_high"])


def _save(fig: Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=DPI, metadata=PNG_METADATA)


def _figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _setting_title(setting: Setting) -> str:
    w, h, k = setting
    unit = horizon_unit(w)
    return f"{w}, horizon {h}{' ' + unit if unit else ''}, k={k}"


def _bloat(setting: Setting, variants: list[Variant], shards: pa.Table, path: Path) -> None:
    w, h, k = setting
    cols = {c: shards.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params")}
    t = np.asarray(shards.column("t").to_numpy(), dtype=np.float64)
    in_setting = np.array([(a, b, c) == setting for a, b, c in
                           zip(cols["workload"], cols["horizon"], cols["k"], strict=True)])
    fig, axes = _figure(12, 4.5, 2)
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
            style = _style(i)
            ax.plot(ts, means, label=variant_label(policy, params), **style)
            ax.fill_between(ts, los, his, color=style["color"], alpha=0.2, linewidth=0)
        ax.set_xlabel(f"t ({unit})")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{_directed(metric)}: mean, 95% bootstrap band")
    fig.suptitle(f"Memory growth — {_setting_title(setting)}")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper")
    _save(fig, path)


def _params_full(shards: pa.Table) -> dict[Cell, dict[str, Any]]:
    names = ("workload", "horizon", "k", "policy", "params", "params_full")
    cols = [shards.column(c).to_pylist() for c in names]
    out: dict[Cell, dict[str, Any]] = {}
    for w, h, k, policy, params, full in zip(*cols, strict=True):
        cell: Cell = (w, h, k, policy, params)
        if cell not in out:
            out[cell] = json.loads(full)
    return out


# store parameters a curve may run over, besides any policy.* parameter: the budget axes
LINE_STORE_KEYS = ("store.budget", "store.budget_tokens")


def _line_key(key: str) -> bool:
    return key.startswith("policy.") or key in LINE_STORE_KEYS


def sweeps(variants: Iterable[Variant]) -> dict[tuple[str, str, str], list[Variant]]:
    """Variants of one policy (same other overrides) that differ in exactly one
    ``policy.*`` parameter or budget (``store.budget``), keyed by (policy, the other
    params, parameter)."""
    groups: dict[tuple[str, str], list[Variant]] = {}
    for policy, params in variants:
        rest = json.dumps({k: v for k, v in json.loads(params).items()
                           if not _line_key(k)}, sort_keys=True)
        groups.setdefault((policy, rest), []).append((policy, params))
    out: dict[tuple[str, str, str], list[Variant]] = {}
    for (policy, rest), vs in groups.items():
        keys = {k for _, p in vs for k in json.loads(p) if _line_key(k)}
        if len(vs) >= 2 and len(keys) == 1:
            out[(policy, rest, keys.pop())] = vs
    return out


def _errorbar(ax: Axes, x: Point, y: Point, **kw: Any) -> None:
    ax.errorbar([x.mean], [y.mean], xerr=x.err(), yerr=y.err(), capsize=3, **kw)


def _frontier(setting: Setting, summ: _Summary, full: dict[Cell, dict[str, Any]],
              xm: str, ym: str, title: str, path: Path) -> None:
    """``ym`` against ``xm``: a policy run at several values of one parameter is a line
    through them (the τ frontier, a capacity budget curve); every other cell a point."""
    variants = summ.variants(setting)
    lines = sweeps(variants)
    in_line = {v for vs in lines.values() for v in vs}
    fig, (ax,) = _figure(8, 6)
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
        st = _style(i)
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
            _errorbar(ax, x, y, color=_style(len(lines) + j)["color"],
                      marker=MARKERS[(j + 1) % len(MARKERS)],
                      linestyle="none", label=variant_label(*v), **HOLLOW)
    ax.set_xlabel(f"{_directed(xm)} (mean, 95% CI)")
    ax.set_ylabel(f"{_directed(ym)} (mean, 95% CI)")
    ax.set_title(f"{title} — {_setting_title(setting)}")
    ax.legend(loc="best")
    _save(fig, path)


# kind -> (x metric, y metric, title)
FRONTIERS = {
    "frontier": ("recall_at_k", "contradiction_rate", "Contradiction vs recall"),
    "budget": ("final_size", "recall_at_k", "Recall vs memory (the budget view)"),
    "false_forget": ("final_size", "false_forget_rate", "False-forget rate vs final size"),
}


# metric, y label, panel title
SCALING_PANELS = (
    ("final_size", "live entries", f"{_directed('final_size')}: log–log"),
    ("final_tokens", "tokens of live entries", f"{_directed('final_tokens')}: log–log"),
    ("wall_s", "seconds per job", "wall_s (timing, not deterministic): log–log"),
)


def _scaling(study: scaling.Study, path: Path) -> list[str]:
    """Final size, tokens and per-job seconds vs horizon on log–log axes, one line per
    policy variant (mean over seeds, 95% bootstrap CI); the notes name points a log axis
    cannot show (a mean <= 0)."""
    fig, axes = _figure(15, 4.5, 3)
    unit = horizon_unit(study.workload)
    notes = []
    for ax, (metric, ylabel, title) in zip(axes, SCALING_PANELS, strict=True):
        for i, series in enumerate(study.series):
            pts = [(h, Point(p.mean, p.ci_low, p.ci_high))
                   for h, p in zip(series.horizons, series.points[metric], strict=True)]
            gone = [h for h, p in pts if not p.mean > 0]
            if gone:
                notes.append(f"scaling plot for {study.workload} (k={study.k}): "
                             f"{variant_label(series.policy, series.params)}'s mean {metric} is "
                             f"not positive at horizon {', '.join(map(str, gone))}, not drawn on "
                             "the log axis")
            shown = [(h, p) for h, p in pts if p.mean > 0]
            ax.errorbar([h for h, _ in shown], [p.mean for _, p in shown],
                        yerr=np.hstack([p.err() for _, p in shown]) if shown else None,
                        marker=MARKERS[i % len(MARKERS)], capsize=3,
                        label=variant_label(series.policy, series.params), **_style(i), **HOLLOW)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(list(study.horizons), [str(h) for h in study.horizons])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"horizon{' (' + unit + ')' if unit else ''}")
        ax.set_ylabel(f"{ylabel} (mean, 95% CI)")
        ax.set_title(title)
    fig.suptitle(f"Scaling with the horizon — {study.workload}, k={study.k} "
                 "(slopes in the report)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper")
    _save(fig, path)
    return notes


def write_plots(plots_dir: Path, summary: pa.Table, shards: pa.Table) -> Plots:
    """Every figure for the summary (and the shards' checkpoint rows) into ``plots_dir``.

    ``shards`` needs the cell columns, ``t``, ``params_full`` and ``runner.scaling.COLUMNS``
    (its final rows give the scaling plots' points)."""
    plots_dir = Path(plots_dir)
    summ = _Summary(summary)
    full = _params_full(shards)
    result = Plots()
    with mpl_style.context("default"), matplotlib.rc_context(
        {"font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 8,
         "figure.dpi": DPI, "savefig.dpi": DPI}
    ):
        for setting in summ.settings():
            w, h, k = setting
            stem = f"{_slug(w)}-h{h}-k{k}"
            title = _setting_title(setting)
            bloat = plots_dir / f"bloat-{stem}.png"
            _bloat(setting, summ.variants(setting), shards, bloat)
            result.plots.append(Plot("bloat", f"Memory growth — {title}", bloat, w, k, h))
            for kind, (xm, ym, what) in FRONTIERS.items():
                path = plots_dir / f"{kind}-{stem}.png"
                _frontier(setting, summ, full, xm, ym, what, path)
                result.plots.append(Plot(kind, f"{what} — {title}", path, w, k, h))
        fitted = {(st.workload, st.k): st for st in scaling.studies(shards, summ.baseline)}
        for w, k in sorted({(c[0], c[2]) for c in summ.cells}):
            horizons = sorted({c[1] for c in summ.cells if c[0] == w and c[2] == k})
            study = fitted.get((w, k))
            if len(horizons) < 2 or study is None:
                result.notes.append(f"scaling plot for {w} (k={k}) skipped: it ran at one "
                                    f"horizon ({horizons[0]})")
                continue
            if not study.series:
                result.notes.append(f"scaling plot for {w} (k={k}) skipped: no policy ran at "
                                    "two horizons")
                continue
            path = plots_dir / f"scaling-{_slug(w)}-k{k}.png"
            result.notes += _scaling(study, path)
            result.plots.append(Plot("scaling", f"Final size, tokens and seconds vs horizon "
                                     f"(log–log) — {w}, k={k}", path, w, k, None))
    written = {p.path.resolve() for p in result.plots}
    for old in sorted(plots_dir.glob("*.png")):
        if old.resolve() not in written:
            old.unlink()
    return result
