"""The frontier view: a sweep paired with the oracle at equal budget (regret with CIs)
and the computed findings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.report.findings import frontier3


class _Means:
    """The one thing the frontier reads of a report index: each cell's means."""

    def __init__(self, means: dict[str, tuple[float, float, float, float]]) -> None:
        self.means = means

    def mean(self, cell: tuple[Any, ...], metric: str) -> float | None:
        names = ("contradiction_rate", "recall_current_at_k", "final_size", "recall_at_k")
        return self.means[cell[3]][names.index(metric)]


def test_three_axis_frontier_keeps_the_undominated_beyond_margins() -> None:
    """Prevents a frontier that lists a dominated cell, drops an undominated one, crowns a
    lead smaller than the metrics' margins, or keeps a memory that retrieves nothing:
    (contradiction ↓, current recall ↑, size ↓), 0.01 on rates and 5% on size."""
    means = {  # contradiction, current recall, size, recall
        "small": (0.30, 0.60, 100.0, 0.6), "big": (0.30, 0.70, 1000.0, 0.7),
        "dominated": (0.40, 0.55, 200.0, 0.55),
        "near": (0.305, 0.695, 1010.0, 0.7),  # within every margin of "big": not dominated
        "clean": (0.0, 0.2, 50.0, 0.2), "empty": (0.0, 0.0, 0.0, 0.0)}
    cells = [("w", 1, 5, name, "{}") for name in means]
    on = frontier3(cast(Any, _Means(means)), cells)
    assert [c[3] for c in on] == ["small", "big", "near", "clean"]


def test_a_near_useless_memory_is_never_starred() -> None:
    """Prevents the frontier's star going to a memory that forgot nearly everything
    (zero contradiction, a tiny size, current recall 0.017 beside a best of 0.70):
    under a tenth of the setting's best current recall keeps a cell off it."""
    means = {"big": (0.30, 0.70, 1000.0, 0.7), "gone": (0.0, 0.017, 3.0, 0.02),
             "tenth": (0.0, 0.07, 3.0, 0.07)}
    cells = [("w", 1, 5, name, "{}") for name in means]
    assert [c[3] for c in frontier3(cast(Any, _Means(means)), cells)] == ["big", "tenth"]


@pytest.fixture(scope="module")
def frontier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("frontier")
    config = root / "f.toml"
    config.write_text(
        'seeds = 3\nworkloads = ["contradiction"]\nhorizons = ["600"]\n'
        'policies = ["oracle", "fifo", "keep_all", "last_write_wins"]\n'
        'baseline = "oracle"\nexecutor = "inline"\n'
        f'out = "{root / "out"}"\n[params]\n"store.budget" = [0, 20, 60]\n')
    result = CliRunner().invoke(app, ["sweep", "--config", str(config)])
    assert result.exit_code == 0, result.output
    return root / "out"


def test_cells_pair_with_the_oracle_at_the_same_budget(frontier: Path) -> None:
    """Prevents regret computed against the oracle at another budget (or against
    keep_all): each cell's baseline is the oracle with the same store.budget."""
    rows = pq.read_table(frontier / "summary.parquet").to_pylist()
    for metric in ("recall_at_k", "recall_current_at_k"):
        paired = [r for r in rows if r["metric"] == metric and r["policy"] != "oracle"]
        assert len(paired) == 9
        for r in paired:
            assert r["baseline"] == "oracle"
            assert json.loads(r["baseline_params"]) == json.loads(r["params"])
            # nobody beats the oracle's current recall; on the seeds' recall, without a
            # budget a hoarder can (an old entry whose value came back: docs/metrics.md)
            if metric == "recall_current_at_k" or r["params"] != "{}":
                assert r["delta_mean"] <= 0.0, r


def test_report_states_frontier_and_least_regret(frontier: Path) -> None:
    """Prevents a frontier report without its findings: the three-axis frontier and the least
    regret against the oracle at every budget, with its interval and verdict."""
    text = (frontier / "RESULTS.md").read_text()
    findings = text.split("## Findings", 1)[1].split("\n## ", 1)[0]
    assert "Frontier of (contradiction ↓, current recall ↑, size ↓)" in text
    regret = next(line for line in findings.splitlines()
                  if "least current-recall regret against the oracle" in line)
    for budget in ("store.budget=20", "store.budget=60", "no budget"):
        assert re.search(re.escape(budget) + r": \S+ Δ [+-]\d\.\d{3} \[[+-]\d\.\d{3}, "
                         r"[+-]\d\.\d{3}\] \((better|worse|equivalent|inconclusive)\)", regret)


def test_a_baseline_outside_the_sweep_is_a_one_line_error(tmp_path: Path) -> None:
    """Prevents a sweep whose report could never pair its cells."""
    result = CliRunner().invoke(app, ["sweep", "--policies", "fifo", "--baseline", "oracle",
                                      "--out", str(tmp_path / "o"), "--dry-run"])
    assert result.exit_code == 2 and "baseline 'oracle' is not a policy" in result.output
