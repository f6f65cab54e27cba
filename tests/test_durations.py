"""Durations with a unit (``tau=30d``, ``tau=150t``) convert on the workload's clock, and a
duration's default is the first of its defaults that clock can express."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from fbench.clock import Clock, clock_of, default_on, parse
from fbench.errors import FbenchError
from runner.cli import app
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import make_spec, materialize
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


def _field(cls: type, name: str) -> dataclasses.Field[Any]:
    return next(f for f in dataclasses.fields(cls) if f.name == name)


@pytest.mark.parametrize(("policy", "name", "clock", "value"), [
    ("ebbinghaus", "tau", Clock("turns", 1), 150.0),   # the Forgetting-Bench seed's
    ("ebbinghaus", "tau", Clock("days"), 18.0),
    ("window", "window", Clock("turns", 1), 1650.0),
    ("window", "window", Clock("days"), 200.0),
    ("ttl", "max_age", Clock("turns", 1), 7.0),
    ("ttl", "max_age", Clock("days"), 7.0),
    ("lethe", "half_life", Clock("turns", 1), 7.0),
    ("lethe", "half_life", Clock("turns", 4), 28.0),   # a day of the clock's
    ("lethe", "half_life", Clock("turns"), 7.0),       # no days: seven turns
    ("lethe", "half_life", Clock("days"), 7.0),
    ("lethe", "cold_grace", Clock("turns", 4), 4.0),
    ("ebbinghaus", "tau", Clock("the trace's"), 150.0),  # neither: the field's own
])
def test_a_durations_default_follows_the_clock(policy: str, name: str, clock: Clock,
                                               value: float) -> None:
    """Prevents a time constant calibrated on turns read as days (ebbinghaus's 150 over a
    365-day stream deletes nothing), and the seed's turn defaults moving."""
    from memcore.policies import POLICIES

    assert default_on(_field(POLICIES[policy].Params, name), clock) == value


def test_clock_defaults_are_in_the_id_not_the_params() -> None:
    """Prevents a moved default reusing the old default's shards (the same id), turning
    the default cell into a variant (params that are not overrides) or the old default,
    given explicitly, into the new one; and contradiction's ids changing at all."""
    day = make_spec("lifecycle", "ebbinghaus", 0)
    assert day.params == () and day.defaults == (("policy.tau", 18.0),)
    old = dataclasses.replace(day, defaults=())
    assert day.job_id != old.job_id and day.without_code() == old.without_code()
    assert JobSpec.from_dict(day.to_dict()) == day
    turn = make_spec("contradiction", "ebbinghaus", 0)
    assert turn.defaults == () and "defaults" not in turn.to_dict()
    assert make_spec("lifecycle", "ebbinghaus", 0, params=[("tau", 18)]) == day  # the default
    old_default = make_spec("lifecycle", "ebbinghaus", 0, params=[("tau", 150)])
    assert old_default.params == (("policy.tau", 150.0),) and old_default.defaults == ()
    assert materialize(day).policy_params.tau == 18.0


def test_a_sweep_reruns_jobs_whose_default_moved(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents shards of a policy's old default being resumed as its new default's: the
    same sweep in the same folder reruns them and sets the old shards aside."""
    import runner.spec.resolve as resolve

    out = tmp_path / "o"
    args = ["sweep", "--policies", "ebbinghaus", "--workloads", "lifecycle", "--seeds", "2",
            "--horizons", "30", "--executor", "inline", "--out", str(out), "--no-report"]
    runner = CliRunner()
    with monkeypatch.context() as m:
        m.setattr(resolve, "clock_defaults", lambda *a: {})  # as before the default moved
        assert runner.invoke(app, args).exit_code == 0
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "set aside 2 shard(s)" in res.output
    shards = [pq.read_table(p) for p in (out / "shards").rglob("*.parquet")]
    assert len(shards) == 2
    assert {json.loads(t.column("params_full")[0].as_py())["policy.tau"] for t in shards} == {
        18.0}


def test_the_policies_page_gives_each_durations_defaults() -> None:
    """Prevents docs/policies.md's table of defaults by clock drifting from the fields'
    declarations: each row's list and its number on contradiction's, the lifecycle
    family's and StateBench's clocks."""
    from fbench.clock import DURATION
    from memcore.policies import POLICIES

    page = (Path(__file__).resolve().parent.parent / "docs" / "policies.md").read_text()
    clocks = (Clock("turns", 1), Clock("days"), Clock("turns"))
    rows = 0
    for policy in ("ebbinghaus", "window", "ttl", "lethe"):
        for f in dataclasses.fields(POLICIES[policy].Params):
            texts = f.metadata.get(DURATION)
            if not texts:
                continue
            line = next(ln for ln in page.splitlines()
                        if ln.startswith(f"| {policy} `{f.name}` | {' or '.join(texts)} |"))
            cells = line.strip("| ").split(" | ")[2:]
            assert [float(c.split()[0].replace(",", "")) for c in cells] == [
                default_on(f, c) for c in clocks], line
            assert [c.split()[1].rstrip("s") for c in cells] == [
                c.unit.rstrip("s") for c in clocks], line
            rows += 1
    assert rows == 5
