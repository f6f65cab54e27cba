"""The headroom notes (`fbench list workloads`, RESULTS.md) say what the committed
calibrations say: a reason for every criterion a default workload does not meet, and none
for one it meets."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from runner.cli import app
from workloads import current_builtin_names
from workloads.headroom import CRITERIA, UNMET, notes

CALIBRATION = Path(__file__).resolve().parent.parent / "published" / "calibration"


def test_every_default_workload_has_notes_matching_its_calibration() -> None:
    """Prevents a note explaining a criterion the workload meets (stale after a redesign),
    or a criterion not met that nothing explains: the notes' unmet criteria are exactly
    those of calibration/<workload>.json (20 seeds, `make results`)."""
    assert set(UNMET) == set(current_builtin_names())
    for name in current_builtin_names():
        doc = json.loads((CALIBRATION / f"{name}.json").read_text())
        assert len(doc["seeds"]) == 20, name
        unmet = {c["name"][0] for c in doc["criteria"] if not c["met"]}
        assert set(UNMET[name]) == unmet, name
        assert set(UNMET[name]) <= set(CRITERIA)


def test_list_workloads_shows_the_headroom_notes() -> None:
    """Prevents notes that exist but never reach a user: `fbench list workloads` prints
    each default workload's headroom line, and none for a retired version."""
    out = CliRunner().invoke(app, ["list", "workloads"], env={"COLUMNS": "400"}).output
    for name in current_builtin_names():
        line = notes(name)
        assert line is not None
        assert line[:60] in " ".join(out.split()), name
    assert notes("lifecycle@1") is None


def test_windows_default_on_the_day_clock_tells_it_from_last_write_wins() -> None:
    """Prevents window being last_write_wins again on the lifecycle family (its default
    once expired nothing within a 365-day stream): at its default on the day clock, over
    the default horizon, its quality metrics differ from last_write_wins'."""
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    def quality(policy: str) -> dict[str, float]:
        m = run_job(make_spec("lifecycle", policy, 0, 365)).metrics()
        return {k: m[k] for k in ("recall_current_at_k", "contradiction_rate",
                                  "false_forget_rate", "accuracy_at_1")}

    assert quality("window") != quality("last_write_wins")
