"""The report's figures (matplotlib, Agg canvas, PNG) into ``OUT/plots/``.

Deterministic: matplotlib's default style (a user's matplotlibrc is ignored),
fixed figure sizes and dpi, no ``Software`` metadata in the PNG, series and
colours in a fixed order, and the intervals of ``runner.analysis.stats``. The same
shards give byte-identical files (for one matplotlib version). ``OUT/plots`` belongs to
the report: PNGs it did not write this time are removed.

- ``bloat-*``: live entries and tokens vs time per policy, mean over seeds with
  a 95% band (from every checkpoint row).
- ``frontier-*``: contradiction rate vs recall. A policy run at several values
  of one ``policy.*`` parameter is a line through those values (the default
  cell included, at its resolved value); every other cell is a reference point.
- ``false_forget-*``: false-forget rate vs final size per policy.
- ``scaling-*``: when a workload ran at several horizons, three log–log panels (final
  size, final tokens, per-job seconds ``wall_s``) against the horizon, one line per
  policy variant that ran at two or more of them (mean over seeds, 95% interval). The
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
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, cast

import pyarrow as pa

from runner.analysis import scaling
from runner.report import pool
from runner.report.plot_scaling import scaling_figure
from runner.report.plot_setting import (
    FRONTIERS,
    PlotSummary,
    bloat_figure,
    frontier_figure,
    params_full,
)
from runner.report.plot_style import report_style, setting_title
from runner.results.aggregate import Setting


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


@dataclass(frozen=True)
class _Figure:
    """One figure to draw: its kind (``bloat``, a ``FRONTIERS`` kind or ``scaling``), what
    it shows (a setting; a scaling figure's (workload, k)) and its file."""

    kind: str
    shows: tuple[Any, ...]
    path: Path


class _Inputs:
    """What the figures read, made from the tables once in each process that draws."""

    def __init__(self, summary: pa.Table, final: pa.Table, every: pa.Table) -> None:
        self.summ = PlotSummary(summary)
        self.final, self.every = final, every
        self.full = params_full(final)

    @cached_property
    def fitted(self) -> dict[tuple[str, int], scaling.Study]:
        return {(st.workload, st.k): st for st in scaling.studies(self.final,
                                                                   self.summ.baseline)}


def _draw(fig: _Figure, inputs: _Inputs) -> list[str]:
    """Draw and save one figure; its notes."""
    with report_style():
        if fig.kind == "scaling":
            return scaling_figure(inputs.fitted[fig.shows], fig.path, inputs.summ.baseline)
        setting = cast(Setting, fig.shows)
        if fig.kind == "bloat":
            bloat_figure(setting, inputs.summ.variants(setting), inputs.every, fig.path,
                         inputs.summ.baseline)
        else:
            xm, ym, what = FRONTIERS[fig.kind]
            frontier_figure(setting, inputs.summ, inputs.full, xm, ym, what, fig.path)
    return []


# The tables a helper reads, in ``_Inputs``' order.
TABLES = ("summary", "final", "every")
_HELPER: _Inputs | None = None  # a helper process's inputs (``runner.report.pool``)


def _start_helper(folder: str) -> None:
    """A helper's inputs, from the tables ``_shared`` wrote (memory-mapped)."""
    global _HELPER
    summary, final, every = (pa.ipc.open_file(pa.memory_map(f"{folder}/{name}.arrow"))
                             .read_all() for name in TABLES)
    _HELPER = _Inputs(summary, final, every)


@contextmanager
def _shared(tables: Sequence[pa.Table], helpers: int) -> Iterator[str]:
    """A temporary folder holding the ``TABLES`` for helpers (none written without any)."""
    with tempfile.TemporaryDirectory(prefix="fbench-plots-") as folder:
        if helpers > 0:
            for name, table in zip(TABLES, tables, strict=True):
                with pa.OSFile(f"{folder}/{name}.arrow", "wb") as sink, \
                        pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)
        yield folder


def _draw_in_helper(fig: _Figure) -> list[str]:
    assert _HELPER is not None
    return _draw(fig, _HELPER)


def write_plots(plots_dir: Path, summary: pa.Table, final: pa.Table, every: pa.Table,
                helpers: int | None = 0) -> Plots:
    """Every figure for the summary, each job's ``final`` row and ``every`` checkpoint row
    into ``plots_dir``.

    ``helpers``: how many spawned processes draw some of them (``runner.report.pool``);
    ``None``, one per other core when there are enough figures (the CLI's choice). A
    spawned process imports the caller's main module, so a script that asks for helpers
    must guard its own work with ``if __name__ == "__main__":``.

    ``final`` needs the cell columns, ``params_full`` and ``runner.analysis.scaling.COLUMNS``
    (the scaling plots' points); ``every`` the cell columns, ``t`` and the memory-growth
    metrics (``runner.report.plot_setting.BLOAT_METRICS``)."""
    plots_dir = Path(plots_dir)
    inputs = _Inputs(summary, final, every)
    summ = inputs.summ
    result = Plots()
    figures: list[_Figure] = []
    notes: list[str | int] = []  # in order: a note, or the figure whose notes go there
    for setting in summ.settings():
        w, h, k = setting
        stem = f"{_slug(w)}-h{h}-k{k}"
        title = setting_title(setting)
        bloat = plots_dir / f"bloat-{stem}.png"
        figures.append(_Figure("bloat", setting, bloat))
        result.plots.append(Plot("bloat", f"Memory growth — {title}", bloat, w, k, h))
        for kind, (_, _, what) in FRONTIERS.items():
            path = plots_dir / f"{kind}-{stem}.png"
            figures.append(_Figure(kind, setting, path))
            result.plots.append(Plot(kind, f"{what} — {title}", path, w, k, h))
    for w, k in sorted({(c[0], c[2]) for c in summ.cells}):
        horizons = sorted({c[1] for c in summ.cells if c[0] == w and c[2] == k})
        study = inputs.fitted.get((w, k)) if len(horizons) > 1 else None
        if len(horizons) < 2 or study is None:
            notes.append(f"scaling plot for {w} (k={k}) skipped: it ran at one "
                         f"horizon ({horizons[0]})")
            continue
        if not study.series:
            notes.append(f"scaling plot for {w} (k={k}) skipped: no policy ran at two "
                         "horizons")
            continue
        path = plots_dir / f"scaling-{_slug(w)}-k{k}.png"
        notes.append(len(figures))
        figures.append(_Figure("scaling", (w, k), path))
        result.plots.append(Plot("scaling", f"Final size, tokens and seconds vs horizon "
                                 f"(log–log) — {w}, k={k}", path, w, k, None))
    helpers = pool.helpers_for(len(figures)) if helpers is None else helpers
    with _shared((summary, final, every), helpers) as folder:
        drawn = pool.share(figures, partial(_draw, inputs=inputs), _draw_in_helper,
                           _start_helper, (folder,), helpers)
    for note in notes:
        result.notes += [note] if isinstance(note, str) else drawn[note]
    written = {p.path.resolve() for p in result.plots}
    for old in sorted(plots_dir.glob("*.png")):
        if old.resolve() not in written:
            old.unlink()
    return result
