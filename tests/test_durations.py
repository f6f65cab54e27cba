"""Durations with a unit (``tau=30d``, ``tau=150t``) convert on the workload's clock."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fbench.clock import Clock, clock_of, parse
from fbench.errors import FbenchError
from runner.cli import app
from runner.spec.resolve import make_spec
from runner.sweep.expand import SweepSpec, expand
from workloads import WORKLOADS


def test_tau_in_days_on_lifecycle_is_the_same_job_as_the_bare_number() -> None:
    """Prevents `tau=30d` on a day stream running another job than `tau=30` (a second
    id for one cell, or a value scaled by a day length the stream does not have)."""
    days = make_spec("lifecycle", "ebbinghaus", 0, params=[("tau", "30d")])
    bare = make_spec("lifecycle", "ebbinghaus", 0, params=[("policy.tau", 30)])
    assert days == bare and days.job_id == bare.job_id
    assert dict(days.params) == {"policy.tau": 30.0}


def test_days_convert_by_turns_per_day_on_contradiction() -> None:
    """Prevents a day on a turn stream being read as one turn whatever its day length:
    `tau=30d` is 30 × turns_per_day turns, and `150t` (the default) is no override."""
    one = make_spec("contradiction", "ebbinghaus", 0, params=[("tau", "30d")])
    assert dict(one.params) == {"policy.tau": 30.0}
    four = make_spec("contradiction", "ebbinghaus", 0,
                     params=[("tau", "30d"), ("turns_per_day", 4)])
    assert dict(four.params) == {"policy.tau": 120.0, "workload.turns_per_day": 4}
    assert make_spec("contradiction", "ebbinghaus", 0, params=[("tau", "150t")]) == \
        make_spec("contradiction", "ebbinghaus", 0)


@pytest.mark.parametrize(("workload", "param", "needles"), [
    ("lifecycle", ("tau", "150t"), ["'lifecycle' counts days and has no turns",
                                    "policy.tau=Nd"]),
    ("contradiction", ("half_life", "7d"), ["'contradiction' counts turns and has no days",
                                            "policy.half_life=Nt"]),
])
def test_a_duration_the_clock_cannot_express_is_refused(
        workload: str, param: tuple[str, str], needles: list[str]) -> None:
    """Prevents a duration in days on a stream without days (or turns on a day stream)
    running as some guessed number: one line naming the fix."""
    policy = "ebbinghaus" if param[0] == "tau" else "lethe"
    params = [param] + ([("turns_per_day", 0)] if workload == "contradiction" else [])
    with pytest.raises(FbenchError) as err:
        make_spec(workload, policy, 0, params=params)
    for needle in needles:
        assert needle in str(err.value)


def test_the_cli_refuses_it_in_one_line_exit_2() -> None:
    """Prevents a traceback or a half-run job for an inconvertible duration."""
    result = CliRunner().invoke(app, ["run", "--workload", "lifecycle", "--policy",
                                      "ebbinghaus", "--param", "tau=150t"])
    assert result.exit_code == 2
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "error: parameter policy.tau='150t': workload 'lifecycle' counts days and has no "
        "turns; give policy.tau in days (policy.tau=Nd, or a bare N)"]


def test_a_sweep_converts_per_workload() -> None:
    """Prevents a sweep axis in days converted on one workload's clock for all: each
    workload's jobs hold its own number of its own units."""
    grid = expand(SweepSpec(seeds=(0,), policies=("ebbinghaus",),
                            workloads=("contradiction", "lifecycle"),
                            params=(("ebbinghaus.tau", ("30d",)), ("workload.turns_per_day",
                                                                   (2,)))))
    taus = {job.workload: dict(job.params)["policy.tau"] for job in grid}
    assert taus == {"contradiction": 60.0, "lifecycle": 30.0}


def test_clocks_of_the_default_workloads() -> None:
    """Prevents a workload's clock drifting from its stream: contradiction counts turns,
    one a day by default; the lifecycle family counts days; StateBench turns, no days."""
    c = WORKLOADS["contradiction"]
    assert clock_of(c, c.Params()) == Clock("turns", 1)
    assert clock_of(c, c.Params(turns_per_day=0)) == Clock("turns")
    for name in ("lifecycle", "lifecycle.bursty", "lifecycle.durable_heavy"):
        w = WORKLOADS[name]
        assert clock_of(w, w.Params()) == Clock("days")
    if "statebench" in WORKLOADS:  # (the statebench extra)
        s = WORKLOADS["statebench"]
        assert clock_of(s, s.Params()) == Clock("turns")


@pytest.mark.parametrize(("text", "parsed"), [
    ("30d", (30.0, "days")), (" 150t ", (150.0, "turns")), ("7", (7.0, None)),
    ("0.5D", (0.5, "days")), ("1e2t", (100.0, "turns")), ("3x", None), ("d", None),
    ("-5d", None),
])
def test_parse(text: str, parsed: tuple[float, str | None] | None) -> None:
    """Prevents a malformed duration parsing as some number (or a valid one failing)."""
    assert parse(text) == parsed
