"""The scaling figure (``scaling-*``): a workload run at several horizons, three log–log
panels (final size, final tokens, per-job seconds ``wall_s``) against the horizon, one
line per policy variant that ran at two or more of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

from runner.analysis import scaling
from runner.report.plot_style import (
    HOLLOW,
    MARKERS,
    Point,
    directed_label,
    line_style,
    new_figure,
    save_png,
)
from runner.results.tables import horizon_unit, variant_label

# metric, y label, panel title
SCALING_PANELS = (
    ("final_size", "live entries", f"{directed_label('final_size')}: log–log"),
    ("final_tokens", "tokens of live entries", f"{directed_label('final_tokens')}: log–log"),
    ("wall_s", "seconds per job", "wall_s (timing, not deterministic): log–log"),
)


def scaling_figure(study: scaling.Study, path: Path) -> list[str]:
    """Final size, tokens and per-job seconds vs horizon on log–log axes, one line per
    policy variant (mean over seeds, 95% bootstrap CI); the notes name points a log axis
    cannot show (a mean <= 0)."""
    fig, axes = new_figure(15, 4.5, 3)
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
                        label=variant_label(series.policy, series.params), **line_style(i),
                        **HOLLOW)
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
    save_png(fig, path)
    return notes
