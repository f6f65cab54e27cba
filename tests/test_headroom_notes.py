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


def test_a_window_inside_the_horizon_tells_window_from_last_write_wins() -> None:
    """Prevents the lifecycle notes' remedy being false: at its default (1,650) window is
    last_write_wins on a day stream, bit for bit, and at policy.window=30 it is not."""
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    def quality(policy: str, params: list[tuple[str, object]]) -> dict[str, float]:
        m = run_job(make_spec("lifecycle", policy, 0, 120, params=params)).metrics()  # type: ignore[arg-type]
        return {k: m[k] for k in ("recall_current_at_k", "contradiction_rate",
                                  "false_forget_rate", "accuracy_at_1")}

    lww = quality("last_write_wins", [])
    assert quality("window", []) == lww
    assert quality("window", [("policy.window", 30)]) != lww
