"""The report's figures (matplotlib, Agg canvas, PNG) into ``OUT/plots/``.

Deterministic: matplotlib's default style (a user's matplotlibrc is ignored),
fixed figure sizes and dpi, no ``Software`` metadata in the PNG, series and
colours in a fixed order, and the t intervals of ``runner.analysis.stats``. The same
shards give byte-identical files (for one matplotlib version). ``OUT/plots`` belongs to
the report: PNGs it did not write this time are removed.

- ``bloat-*``: live entries and tokens vs time per policy, mean over seeds with
  a t band (from every checkpoint row).
- ``frontier-*``: contradiction rate vs recall. A policy run at several values
  of one ``policy.*`` parameter is a line through those values (the default
  cell included, at its resolved value); every other cell is a reference point.
- ``false_forget-*``: false-forget rate vs final size per policy.
- ``scaling-*``: when a workload ran at several horizons, three log–log panels (final
  size, final tokens, per-job seconds ``wall_s``) against the horizon, one line per
  policy variant that ran at two or more of them (mean over seeds, t interval). The
  fitted slopes (``runner.analysis.scaling``) are in the report. ``wall_s`` is a timing column:
  the same shards still give the same figure.

One file per figure and setting, whatever its number of panels: a panel draws at most
``plot_style.MAX_CURVES`` curves, so a setting with more variants gets one panel (a row
of panels, for ``bloat-*`` and ``scaling-*``) per group of them — by their non-policy
parameters (a budget, an embedder), then by policy family — with the oracle (black,
dashed) in every panel where it ran and the baseline (grey) as a reference in each; each
panel's legend is outside it, inside the figure (``plot_style.split_panels``).

This module decides which figures a summary gets, names their files and notes the ones
skipped; ``runner.report.plot_setting`` draws a setting's figures,
``runner.report.plot_scaling`` the scaling one, with ``runner.report.plot_style``'s
shared conventions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from runner.analysis import scaling
from runner.report.plot_scaling import scaling_figure
from runner.report.plot_setting import (
    FRONTIERS,
    PlotSummary,
    bloat_figure,
    frontier_figure,
    params_full,
)
from runner.report.plot_style import report_style, setting_title


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


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def write_plots(plots_dir: Path, summary: pa.Table, shards: pa.Table) -> Plots:
    """Every figure for the summary (and the shards' checkpoint rows) into ``plots_dir``.

    ``shards`` needs the cell columns, ``t``, ``params_full`` and
    ``runner.analysis.scaling.COLUMNS`` (its final rows give the scaling plots' points)."""
    plots_dir = Path(plots_dir)
    summ = PlotSummary(summary)
    full = params_full(shards)
    result = Plots()
    with report_style():
        for setting in summ.settings():
            w, h, k = setting
            stem = f"{_slug(w)}-h{h}-k{k}"
            title = setting_title(setting)
            bloat = plots_dir / f"bloat-{stem}.png"
            bloat_figure(setting, summ.variants(setting), shards, bloat, summ.baseline)
            result.plots.append(Plot("bloat", f"Memory growth — {title}", bloat, w, k, h))
            for kind, (xm, ym, what) in FRONTIERS.items():
                path = plots_dir / f"{kind}-{stem}.png"
                frontier_figure(setting, summ, full, xm, ym, what, path)
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
            result.notes += scaling_figure(study, path, summ.baseline)
            result.plots.append(Plot("scaling", f"Final size, tokens and seconds vs horizon "
                                     f"(log–log) — {w}, k={k}", path, w, k, None))
    written = {p.path.resolve() for p in result.plots}
    for old in sorted(plots_dir.glob("*.png")):
        if old.resolve() not in written:
            old.unlink()
    return result
