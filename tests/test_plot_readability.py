"""The report's figures stay readable with many variants: at most 8 curves a panel (a
setting with more is split into panels, references included), every legend inside the
figure, the oracle drawn in every panel of a setting where it ran, and the plot files
the report links unchanged. Summaries and shards are synthetic (the sweeps' shapes:
``sweeps/frontier.toml``, ``results.toml``, ``incumbents.toml``), built in memory."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from runner.analysis import scaling
from runner.report.plot_scaling import scaling_fig
from runner.report.plot_setting import FRONTIERS, PlotSummary, bloat_fig, frontier_fig, params_full
from runner.report.plot_style import (
    MAX_CURVES,
    ORACLE,
    report_style,
    rest_params,
    split_panels,
)
from runner.report.plots import write_plots
from runner.results.aggregate import Setting
from runner.results.tables import variant_label

# (about a minute of plots: make test runs it, make test-fast does not)
pytestmark = pytest.mark.slow

WORKLOAD = "contradiction"
SEEDS = (0, 1, 2)
METRICS = ("recall_at_k", "contradiction_rate", "final_size", "final_tokens",
           "false_forget_rate")
# resolved values of the parameters the synthetic grids vary (a line's default cell)
DEFAULTS = {"policy.tau": 150, "policy.capacity_fraction": 2.5, "store.budget": 0}
REFERENCE = ("keep_all", "last_write_wins", "ebbinghaus", "learned_forget", "window",
             "lethe", "ttl", "fifo", "lru", "lfu", "lifo")
CAPACITY = ("fifo", "lru", "lfu", "lifo")

Cells = list[tuple[str, dict[str, Any]]]


def frontier_cells(budgets: tuple[int, ...] = (0, 15, 30, 60, 120, 240)) -> Cells:
    """sweeps/frontier.toml: the oracle and 11 policies at 6 budgets (72 cells)."""
    return [(p, {"store.budget": b}) for p in (ORACLE, *REFERENCE) for b in budgets]


def results_cells(oracle: bool = False) -> Cells:
    """sweeps/results.toml: every reference policy, ebbinghaus over 7 τ and the capacity
    policies over 4 capacity fractions (34 cells); with the oracle at its default."""
    cells: Cells = [(p, {}) for p in REFERENCE]
    cells += [("ebbinghaus", {"policy.tau": t}) for t in (30, 60, 120, 150, 240, 500, 1000)]
    cells += [(p, {"policy.capacity_fraction": f}) for p in CAPACITY for f in (0.5, 1, 2.5, 5)]
    return cells + ([(ORACLE, {})] if oracle else [])


def incumbent_cells(oracle: bool = False) -> Cells:
    """sweeps/incumbents.toml: an embedder axis (the store's for fbench's own, the
    policy's for lethe_agent) and lethe_agent's retention (11 cells); with the oracle at
    its default, which then is absent from the MiniLM group."""
    cells: Cells = []
    for p in ("keep_all", "ebbinghaus", "lethe"):
        cells += [(p, {}), (p, {"store.embedder": "minilm"})]
    cells += [("lethe_agent", {"policy.embedder": e, "policy.retention": r})
              for e in ("hashing", "minilm") for r in ("score_decay", "fifo")]
    cells.append(("mem0", {}))
    return cells + ([(ORACLE, {})] if oracle else [])


def tables(cells: Cells, horizons: tuple[int, ...] = (300,),
           baseline: str = "keep_all") -> tuple[pa.Table, pa.Table]:
    """A summary (means and CIs of METRICS per cell) and shards (three checkpoints per
    job, the last final) for ``cells`` at each horizon, deterministic."""
    summ: dict[str, list[Any]] = {c: [] for c in ("workload", "horizon", "k", "policy",
                                                  "params", "metric", "mean", "ci_low",
                                                  "ci_high")}
    shard: dict[str, list[Any]] = {c: [] for c in ("job_id", "workload", "horizon", "k",
                                                   "policy", "params", "params_full", "seed",
                                                   "t", "is_final", "final_size",
                                                   "final_tokens", "wall_s")}
    for h in horizons:
        for n, (policy, over) in enumerate(cells):
            params = json.dumps(over, sort_keys=True)
            full = json.dumps({**DEFAULTS, **over}, sort_keys=True)
            rng = np.random.default_rng(n)
            size = 20.0 + 10.0 * n
            for metric in METRICS:
                mean = float(rng.uniform(0.05, 0.95)) if metric.endswith(("_k", "_rate")) \
                    else size * (7.0 if metric == "final_tokens" else 1.0) * h / 100
                for c, v in (("workload", WORKLOAD), ("horizon", h), ("k", 5),
                             ("policy", policy), ("params", params), ("metric", metric),
                             ("mean", mean), ("ci_low", 0.97 * mean),
                             ("ci_high", 1.03 * mean)):
                    summ[c].append(v)
            for seed in SEEDS:
                for t in (h // 3, 2 * h // 3, h):
                    value = size * t / 100 + seed
                    for c, v in (("job_id", f"{n}-{h}-{seed}"), ("workload", WORKLOAD),
                                 ("horizon", h), ("k", 5), ("policy", policy),
                                 ("params", params), ("params_full", full), ("seed", seed),
                                 ("t", t), ("is_final", t == h), ("final_size", value),
                                 ("final_tokens", 7 * value), ("wall_s", 0.001 * t + 0.1)):
                        shard[c].append(v)
    summary = pa.table(summ).replace_schema_metadata({"fbench.baseline": baseline})
    return summary, pa.table(shard)


SCENARIOS: dict[str, tuple[Callable[[], Cells], str]] = {
    "frontier": (frontier_cells, ORACLE),
    "results": (results_cells, "keep_all"),
    "results+oracle": (lambda: results_cells(oracle=True), "keep_all"),
    "incumbents+oracle": (lambda: incumbent_cells(oracle=True), "keep_all"),
}


def figures(name: str) -> Iterator[tuple[str, Figure, list[str]]]:
    """Every figure of the scenario's setting (the scaling one at two horizons): kind,
    the drawn figure and the labels of all its curves."""
    make, baseline = SCENARIOS[name]
    cells = make()
    summary, shards = tables(cells, (100, 300), baseline)
    summ = PlotSummary(summary)
    full = params_full(shards)
    setting: Setting = (WORKLOAD, 300, 5)
    variants = summ.variants(setting)
    assert len(variants) == len(cells) > MAX_CURVES
    with report_style():
        fig = bloat_fig(setting, variants, shards, baseline)
        yield "bloat", fig, [variant_label(*v) for v in variants]
        fig.clear()
        for kind, (xm, ym, what) in FRONTIERS.items():
            fig = frontier_fig(setting, summ, full, xm, ym, what)
            yield kind, fig, []
            fig.clear()
        (study,) = scaling.studies(shards, baseline)
        fig, _ = scaling_fig(study, baseline)
        yield "scaling", fig, [variant_label(s.policy, s.params) for s in study.series]
        fig.clear()


Drawn = list[tuple[str, str, list[str], list[tuple[list[str], int]], list[Any]]]


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def drawn(request: pytest.FixtureRequest) -> Drawn:
    """Each figure of a scenario, drawn on its canvas once, with what the tests read:
    per axes its labelled curves and its number of lines, and each legend's extent
    with the figure's."""
    out: Drawn = []
    for kind, fig, labels in figures(request.param):
        assert fig.canvas is not None
        fig.canvas.draw()  # the layout the PNG gets
        axes = [(ax.get_legend_handles_labels()[1], len(ax.get_lines())) for ax in fig.axes]
        extents = [(leg.get_window_extent(), fig.bbox) for leg in _legends(fig)]
        out.append((request.param, kind, labels, axes, extents))
    return out


COLUMNS = {"bloat": 2, "scaling": 3}


def _legends(fig: Figure) -> list[Any]:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def test_no_panel_has_more_than_eight_curves(drawn: list[Any]) -> None:
    """Prevents an unreadable panel: a setting with dozens of variants (72 cells of the
    frontier sweep, 34 of the results sweep) drawn as one tangle of curves and a legend
    longer than the figure. Every panel labels at most 8 curves (references included);
    the bloat and scaling panels draw no more lines than that either."""
    for scenario, kind, _, axes, _ in drawn:
        assert len(axes) > 1, (scenario, kind)
        for labels, n_lines in axes:
            assert 0 < len(labels) <= MAX_CURVES, (scenario, kind, labels)
            assert len(set(labels)) == len(labels), (scenario, kind, labels)
            if kind == "bloat":
                assert n_lines <= MAX_CURVES, (scenario, kind, n_lines)


def test_splitting_drops_no_curve(drawn: list[Any]) -> None:
    """Prevents a split that loses variants: every variant of the setting is a curve of
    some panel (a reference may recur, nothing is missing)."""
    for scenario, kind, labels, axes, _ in drawn:
        if labels:  # bloat and scaling: one curve per variant
            shown = {label for ax_labels, _ in axes for label in ax_labels}
            assert shown == set(labels), (scenario, kind, set(labels) - shown)


def test_every_legend_lies_inside_the_figure(drawn: list[Any]) -> None:
    """Prevents a clipped legend (the old one-legend-for-all was taller than the figure,
    or ran off its right edge): after the constrained layout, each legend's window
    extent is within the figure's bounding box."""
    for scenario, kind, _, axes, extents in drawn:
        # one legend a panel: a row of the bloat (2 axes) and scaling (3 axes) figures
        assert len(extents) == len(axes) // COLUMNS.get(kind, 1), (scenario, kind)
        for box, fig_box in extents:
            assert box.x0 >= fig_box.x0 - 0.5 and box.y0 >= fig_box.y0 - 0.5, (scenario, kind)
            assert box.x1 <= fig_box.x1 + 0.5 and box.y1 <= fig_box.y1 + 0.5, (scenario, kind)


def _line(handle: Any) -> Line2D:
    """The line a legend entry shows (an error bar's data line)."""
    return handle if isinstance(handle, Line2D) else handle.lines[0]


@pytest.mark.parametrize("scenario", ["frontier", "results+oracle", "incumbents+oracle"])
def test_the_oracle_is_in_every_panel_in_black(scenario: str) -> None:
    """Prevents splitting the oracle away: where an oracle cell exists, every panel of
    every figure of the setting draws an oracle curve, black (dashed where it is a line;
    on the frontier sweep's bloat, at the panel's own budget, where it ran), first in
    the panel's legend, and no other curve is black."""
    black = to_rgba("black")
    for kind, fig, _ in figures(scenario):
        for ax in fig.axes:
            handles, labels = ax.get_legend_handles_labels()
            mine = [(lab, _line(h)) for h, lab in zip(handles, labels, strict=True)
                    if lab.split(" ")[0] == ORACLE]
            others = [_line(h) for h, lab in zip(handles, labels, strict=True)
                      if lab.split(" ")[0] != ORACLE]
            assert mine, (scenario, kind, ax.get_title(), labels)
            assert all(to_rgba(line.get_color()) == black for _, line in mine), (scenario, kind)
            assert not any(to_rgba(line.get_color()) == black for line in others), (scenario,
                                                                                   kind)
            line = mine[0][1]
            if kind in ("bloat", "scaling") or (scenario, kind) == ("frontier", "frontier"):
                assert line.get_linestyle() == "--", (scenario, kind)
            legend = ax.get_legend()
            if legend is not None:  # the reference leads the legend
                assert legend.get_texts()[0].get_text().split(" ")[0] == ORACLE, (scenario,
                                                                                   kind)
            if scenario == "frontier" and kind == "bloat":  # "fifo store.budget=60"
                (budget,) = {lab.split(" ", 1)[1] for lab in labels}
                assert [lab for lab, _ in mine] == [f"{ORACLE} {budget}"], labels


def test_split_panels_groups_by_budget_then_family() -> None:
    """Prevents an arbitrary or lossy split: the frontier sweep's 72 bloat curves are one
    group per budget (the oracle at that budget the reference), each split into whole
    policy families; every curve is in exactly one panel; at most 8 per panel."""
    cells = frontier_cells()
    curves = [(p, rest_params(json.dumps(c))) for p, c in cells]
    panels = split_panels(curves, ORACLE)
    assert len(panels) == 12
    own = sorted(i for p in panels for i in p.own)
    refs = sorted({i for p in panels for i in p.refs})
    assert sorted(own + refs) == list(range(len(curves)))
    assert all(len(p.curves) <= MAX_CURVES for p in panels)
    for p in panels:
        (ref,) = p.refs
        assert curves[ref][0] == ORACLE
        assert {curves[i][1] for i in p.curves} == {curves[ref][1]}  # one budget a panel
    families = [{curves[i][0] for i in p.own} for p in panels[:2]]
    assert families == [{"keep_all", "last_write_wins", "ebbinghaus", "learned_forget",
                         "window", "lethe", "ttl"}, set(CAPACITY)]


def test_a_policy_grid_larger_than_a_panel_is_split_evenly() -> None:
    """Prevents a 1-curve leftover panel: ebbinghaus at 8 τ values (with keep_all as the
    reference: 9 curves) becomes two panels of 4 variants plus keep_all, and each
    capacity policy with its 5 variants gets a panel of its own."""
    curves = [(p, rest_params(json.dumps(c))) for p, c in results_cells()]
    panels = split_panels(curves, "keep_all")
    ebb = [p for p in panels if {curves[i][0] for i in p.own} == {"ebbinghaus"}]
    assert [len(p.own) for p in ebb] == [4, 4]
    assert [p.title for p in ebb] == ["ebbinghaus (1 of 2)", "ebbinghaus (2 of 2)"]
    for policy in CAPACITY:
        (mine,) = [p for p in panels if any(curves[i][0] == policy for i in p.own)]
        assert {curves[i][0] for i in mine.own} == {policy} and len(mine.own) == 5
    assert all([curves[i][0] for i in p.refs] == ["keep_all"] for p in panels)


def test_a_setting_that_fits_keeps_one_panel() -> None:
    """Prevents needless splitting: 8 curves or fewer stay one untitled panel."""
    curves = [("keep_all", "{}"), *(("ebbinghaus", "{}") for _ in range(7))]
    (panel,) = split_panels(curves, "keep_all")
    assert panel.title == "" and panel.refs == (0,) and panel.own == tuple(range(1, 8))


def test_the_report_links_the_same_files_and_they_are_deterministic(tmp_path: Path) -> None:
    """Prevents a split that renames, adds or drops the files the report links (one file
    per figure and setting, whatever its panels), or that draws panels in an order that
    changes between runs (same data, same PNG bytes)."""
    summary, shards = tables(frontier_cells((0, 60)), (100, 300), ORACLE)  # 24 cells
    final = shards.filter(shards.column("is_final"))
    first = write_plots(tmp_path / "a" / "plots", summary, final, shards)
    again = write_plots(tmp_path / "b" / "plots", summary, final, shards)
    names = [p.path.name for p in first.plots]
    expected = [f"{kind}-{WORKLOAD}-h{h}-k5.png" for h in (100, 300)
                for kind in ("bloat", "frontier", "budget", "false_forget")]
    assert names == [*expected, f"scaling-{WORKLOAD}-k5.png"]
    assert [p.kind for p in first.plots] == [p.kind for p in again.plots]
    for a, b in zip(first.plots, again.plots, strict=True):
        assert a.path.read_bytes() == b.path.read_bytes(), a.path.name


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_no_point_label_prints_over_another(scenario: str) -> None:
    """Prevents the dense frontier plots' point labels printing over one another
    (tau = 240/500/1000 on top of each other): as laid out for the PNG, no two labels of
    a panel overlap, and a parameter's neighbouring values share one label."""
    for kind, fig, _ in figures(scenario):
        assert fig.canvas is not None
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        for ax in fig.axes:
            boxes = [t.get_window_extent(renderer) for t in ax.texts]
            for i, a in enumerate(boxes):
                assert not any(a.overlaps(b) for b in boxes[i + 1:]), (scenario, kind)
