"""`fbench calibrate`: the headroom check of a workload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from runner.calibrate.analyze import analyze
from runner.cli import app
from runner.job.run import run_job
from runner.spec.resolve import make_spec


def test_recording_answers_changes_no_metric() -> None:
    """Prevents the calibration's per-query record from perturbing a job: the same final
    metrics with and without it, one answer per query, their mean the current recall."""
    spec = make_spec("contradiction", "last_write_wins", 1, 400)
    plain, recorded = run_job(spec), run_job(spec, record_queries=True)
    assert plain.answered is None and recorded.answered is not None
    a, b = plain.metrics(), recorded.metrics()
    for name in a:
        if not name.startswith(("query_ms", "wall_s")):
            assert a[name] == b[name] or (np.isnan(a[name]) and np.isnan(b[name])), name
    assert len(recorded.answered) == a["n_queries"]
    assert np.mean(recorded.answered) == pytest.approx(a["recall_current_at_k"], rel=1e-12)


def _row(policy: str, seed: int, answered: list[int], params: str = "{}",
         **metrics: float) -> dict[str, Any]:
    from runner.calibrate.task import columns

    base = dict.fromkeys(columns(), 0.0) | {"recall_current_at_k": float(np.mean(answered))}
    return {"policy": policy, "params": params, "seed": seed, "answered": answered} | base | (
        metrics)


def test_analysis_finds_twins_shares_gaps_and_criteria() -> None:
    """Prevents a headroom check that misses bit-identical policies, miscounts saturated
    or impossible queries, or misstates the gap to the oracle."""
    rows = []
    for seed in (0, 1):
        rows += [_row("a", seed, [1, 1, 0, 0]), _row("b", seed, [1, 1, 0, 0]),
                 _row("c", seed, [1, 0, 1, 0], false_forget_rate=0.2),
                 _row("oracle", seed, [1, 1, 1, 0])]
    cal = analyze("w", rows)
    assert cal.identical == [("a", "b")]
    assert cal.saturated == pytest.approx(0.25) and cal.impossible == pytest.approx(0.25)
    (gap,) = cal.gaps
    assert gap.best_recall == 0.5 and gap.oracle_recall == 0.75 and gap.gap == 0.25
    met = {c.name[0]: c.met for c in cal.criteria}
    assert met == {"a": False, "b": True, "c": False, "d": True}  # impossible 25% > 20%


def test_calibrate_command_prints_and_writes_json(tmp_path: Path) -> None:
    """Prevents a calibrate command that does not run end to end: a small grid on the
    seed's stream, its table and criteria printed, its JSON written; lethe equals
    keep_all on version 1 (no day ticks), which criterion (a) reports."""
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(app, [
        "calibrate", "contradiction@1", "--seeds", "2", "--horizon", "300", "--budgets", "30",
        "--policies", "keep_all,lethe,last_write_wins,oracle", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "a: no two rules bit-identical" in res.output
    doc = json.loads(out.read_text())
    assert doc["seeds"] == [0, 1] and len(doc["cells"]) == 8 and len(doc["criteria"]) == 4
    assert ["keep_all", "lethe"] in doc["identical"]


def test_calibrate_bad_input_is_one_line() -> None:
    """Prevents a traceback for a bad budget list or seed count."""
    for args in (["--budgets", "x"], ["--seeds", "0"], ["--budgets", "-5"]):
        res = CliRunner().invoke(app, ["calibrate", "contradiction", *args])
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output and res.output.strip().count("\n") == 0, res.output


def test_report_shows_the_headroom_of_each_calibrated_workload(tmp_path: Path) -> None:
    """Prevents calibrations that never reach the report: `fbench report --calibration DIR`
    adds a Headroom section with each workload's criteria; a missing folder is one line."""
    cal = tmp_path / "calibration"
    cal.mkdir()
    runner = CliRunner()
    res = runner.invoke(app, ["calibrate", "contradiction@1", "--seeds", "2", "--horizon", "200",
                              "--budgets", "30", "--policies", "keep_all,lethe,oracle",
                              "--json", str(cal / "contradiction.json")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["sweep", "--policies", "keep_all,last_write_wins", "--workloads",
                              "contradiction", "--seeds", "2", "--horizons", "200",
                              "--executor", "inline", "--out", str(tmp_path / "o"),
                              "--no-report"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(tmp_path / "o"), "--calibration", str(cal)])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "o" / "RESULTS.md").read_text()
    section = text.split("## Headroom", 1)[1].split("\n## ", 1)[0]
    assert "| `contradiction@1` | 2 | **not met** |" in section  # keep_all = lethe there
    res = runner.invoke(app, ["report", str(tmp_path / "o"), "--calibration",
                              str(tmp_path / "nope")])
    assert res.exit_code == 2 and "is not a folder" in res.output
