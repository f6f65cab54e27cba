"""The conventions every report figure shares, so the same shards give byte-identical
PNGs: a fixed dpi and sizes on an Agg canvas, no ``Software`` metadata, colours, line
styles and hollow markers in a fixed order, error bars from a mean and its interval,
and the titles' and axes' wording."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from runner.metrics import METRICS
from runner.results.aggregate import Setting
from runner.results.tables import horizon_unit

DPI = 100
PNG_METADATA: dict[str, Any] = {"Software": None}
COLORS = [matplotlib.colormaps["tab10"](i) for i in range(10)]
LINESTYLES = ["-", "--", ":", "-."]
# Hollow markers of distinct shapes, so cells at the same point stay visible.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
HOLLOW: dict[str, Any] = {"markerfacecolor": "none", "markersize": 8, "markeredgewidth": 1.5}


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


def directed_label(metric: str) -> str:
    m = METRICS.get(metric)
    return f"{metric} {m.arrow}".strip() if m is not None else metric


def line_style(i: int) -> dict[str, Any]:
    return {"color": COLORS[i % len(COLORS)], "linestyle": LINESTYLES[(i // len(COLORS)) % 4]}


def save_png(fig: Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=DPI, metadata=PNG_METADATA)


def new_figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def setting_title(setting: Setting) -> str:
    w, h, k = setting
    unit = horizon_unit(w)
    return f"{w}, horizon {h}{' ' + unit if unit else ''}, k={k}"
