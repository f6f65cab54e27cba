"""The memory-budget view: capacity policies read at another policy's final size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from runner.report.markdown import write_report
from runner.sweep.expand import SweepSpec, expand
from runner.sweep.run import prepare, run_sweep

SPEC = SweepSpec(seeds=(0, 1), policies=("keep_all", "lethe", "fifo"), workloads=("lifecycle",),
                 horizons=("40",), params=(("fifo.capacity_fraction", ("0.5", "1", "2", "4")),))


@pytest.fixture(scope="module")
def budget(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("budget")
    run_sweep(prepare(SPEC, expand(SPEC), out, executor="inline"))
    write_report(out)
    return out


def means(out: Path) -> dict[tuple[str, str, str], float]:
    rows = pq.read_table(out / "summary.parquet").to_pylist()
    return {(r["policy"], r["params"], r["metric"]): r["mean"] for r in rows}


def test_equal_memory_row_is_the_interpolated_capacity_curve(budget: Path) -> None:
    """Prevents a budget table whose numbers are not the capacity curve read at the other
    policy's size (or that compares policies at unequal memory, the seed's flaw)."""
    m = means(budget)
    size = m[("lethe", "{}", "final_size")]
    curve = sorted(
        (m[("fifo", p, "final_size")], m[("fifo", p, "recall_at_k")],
         m[("fifo", p, "false_forget_rate")])
        for (pol, p, metric) in m if pol == "fifo" and metric == "final_size")
    xs = [c[0] for c in curve]
    assert xs[0] <= size <= xs[-1]
    recall = float(np.interp(size, xs, [c[1] for c in curve]))
    forget = float(np.interp(size, xs, [c[2] for c in curve]))
    own_recall = m[("lethe", "{}", "recall_at_k")]
    own_forget = m[("lethe", "{}", "false_forget_rate")]
    text = (budget / "RESULTS.md").read_text()
    section = text.split("### At equal memory", 1)[1].split("###", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("| lethe |"))
    assert row == (f"| lethe | {size:.1f} | fifo | {own_recall:.3f} vs {recall:.3f} | "
                   f"{own_forget:.3f} vs {forget:.3f} |")


def test_budget_plot_is_written(budget: Path) -> None:
    """Prevents the recall-vs-memory plot from silently missing from the report."""
    assert (budget / "plots" / "budget-lifecycle-h40-k5.png").stat().st_size > 0
    assert "Recall vs memory (the budget view)" in (budget / "RESULTS.md").read_text()
