"""The scaling figure (``scaling-*``): a workload run at several horizons, three log–log
panels (final size, final tokens, per-job seconds ``wall_s``) against the horizon, one
line per policy variant that ran at two or more of them; more variants than a panel
holds get one row of panels per group (``plot_style.split_panels``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from runner.analysis import scaling
from runner.report.plot_setting import panel_styles
from runner.report.plot_style import (
    HOLLOW,
    MARKERS,
    Point,
    directed_label,
    legend_right,
    new_rows,
    rest_params,
    save_png,
    split_panels,
)
from runner.results.tables import horizon_unit, variant_label

# metric, y label, panel title
SCALING_PANELS = (
    ("final_size", "live entries", f"{directed_label('final_size')}: log–log"),
    ("final_tokens", "tokens of live entries", f"{directed_label('final_tokens')}: log–log"),
    ("wall_s", "seconds per job", "wall_s (timing, not deterministic): log–log"),
)


def scaling_fig(study: scaling.Study, baseline: str = "keep_all") -> tuple[Figure, list[str]]:
    """Final size, tokens and per-job seconds vs horizon on log–log axes, one line per
    policy variant (mean over seeds, 95% interval), a row of panels per group of
    variants; the notes name points a log axis cannot show (a mean <= 0)."""
    unit = horizon_unit(study.workload)
    xlabel = f"horizon{' (' + unit + ')' if unit else ''}"
    curves = [(s.policy, rest_params(s.params)) for s in study.series]
    panels = split_panels(curves, baseline)
    n = len(panels)
    fig, grid = new_rows(17, 4.5 if n == 1 else 0.5 + 3.8 * n, [p.title for p in panels], 3)
    for row, panel in zip(grid, panels, strict=True):
        for ax, (metric, ylabel, title) in zip(row, SCALING_PANELS, strict=True):
            for i, style, j in panel_styles(panel, [p for p, _ in curves]):
                _draw_series(ax, study.series[i], metric, style, MARKERS[j % len(MARKERS)])
            _log_log(ax, study.horizons, xlabel, f"{ylabel} (mean, 95% CI)", title)
        legend_right(row[2], *row[0].get_legend_handles_labels())
    fig.suptitle(f"Scaling with the horizon — {study.workload}, k={study.k} "
                 "(slopes in the report)", fontsize="x-large" if n > 1 else None)
    return fig, _not_shown(study)


def _not_shown(study: scaling.Study) -> list[str]:
    """A note per series and metric whose mean is not positive at some horizon: those
    points are not drawn on the log axis."""
    notes = []
    for metric, _, _ in SCALING_PANELS:
        for series in study.series:
            gone = [h for h, p in zip(series.horizons, series.points[metric], strict=True)
                    if not p.mean > 0]
            if gone:
                notes.append(f"scaling plot for {study.workload} (k={study.k}): "
                             f"{variant_label(series.policy, series.params)}'s mean {metric} is "
                             f"not positive at horizon {', '.join(map(str, gone))}, not drawn on "
                             "the log axis")
    return notes


def _draw_series(ax: Axes, series: scaling.Series, metric: str, style: dict[str, Any],
                 marker: str) -> None:
    """One series' means of ``metric`` (those a log axis shows) with their intervals."""
    shown = [(h, Point(p.mean, p.ci_low, p.ci_high))
             for h, p in zip(series.horizons, series.points[metric], strict=True)
             if p.mean > 0]
    ax.errorbar([h for h, _ in shown], [p.mean for _, p in shown],
                yerr=np.hstack([p.err() for _, p in shown]) if shown else None,
                marker=marker, capsize=3,
                label=variant_label(series.policy, series.params), **style,
                **HOLLOW)


def _log_log(ax: Axes, horizons: Sequence[int], xlabel: str, ylabel: str,
             title: str) -> None:
    """Log–log axes, ticked at the study's horizons."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(horizons), [str(h) for h in horizons])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def scaling_figure(study: scaling.Study, path: Path, baseline: str = "keep_all") -> list[str]:
    """Save the scaling figure; its notes (points a log axis cannot show)."""
    fig, notes = scaling_fig(study, baseline)
    save_png(fig, path)
    return notes
