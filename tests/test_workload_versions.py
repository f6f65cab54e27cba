"""Workload versions: a changed stream is a new version, the old one stays reproducible
under ``name@version``, jobs and shards record the version they ran, and contradiction's
version 2 (day boundaries) changes lethe only."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from fbench.registry import RegistryError
from memcore import POLICIES
from runner.errors import FbenchError
from runner.job.execute import execute
from runner.job.run import run_job
from runner.metrics import METRICS
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import make_spec, materialize
from runner.sweep.expand import SweepSpec, workload_names
from workloads import WORKLOADS, Observe, Tick, current_builtin_names
from workloads.contradiction_days import with_days

TURN_STREAMS = ("contradiction", "contradiction.retrievable")
# the policies whose rule runs at a Tick and acts on what a query sees: lethe consolidates
TICKED = {"lethe", "pinned.lethe"}


def test_current_and_retired_names_resolve() -> None:
    """Prevents a retired stream that cannot be asked for, an unpinned name that is not
    the current version, or a version that does not exist resolving to something."""
    for name in (*TURN_STREAMS, "lifecycle"):
        w = WORKLOADS[name]
        assert w.version == "2" and WORKLOADS[f"{name}@2"] is w
        old = WORKLOADS[f"{name}@1"]
        assert (old.name, old.version) == (name, "1") and old is not w
    assert "lifecycle@3" not in WORKLOADS
    with pytest.raises(RegistryError, match="unknown workload 'lifecycle@3'"):
        WORKLOADS.lookup("lifecycle@3")


def test_default_sweeps_run_current_versions_only() -> None:
    """Prevents a default sweep that also runs every retired stream (twice the jobs, and
    two settings of one workload in every table)."""
    names = workload_names(SweepSpec())
    assert names == current_builtin_names()
    assert "lifecycle" in names and not [n for n in names if "@" in n]


def test_the_version_is_in_the_job_id_and_the_shard() -> None:
    """Prevents resuming a sweep from shards of a retired stream (the id must change with
    the version) and shards that do not say which stream they measured; version 1 writes
    nothing, so the ids of unchanged streams stay as they were."""
    new = make_spec("contradiction", "keep_all", 0, 200)
    old = make_spec("contradiction@1", "keep_all", 0, 200)
    assert new.workload_version == "2" and old.workload_version == "1"
    assert new.to_dict()["workload_version"] == "2" and "workload_version" not in old.to_dict()
    assert JobSpec.from_dict(json.loads(new.canonical_json())) == new
    assert new.without_code() == dataclasses.replace(new, workload_version="1")
    out = execute(new.canonical_json(), "test")
    assert out.error is None
    assert set(out.table.column("workload_version").to_pylist()) == {"2"}


def test_a_job_of_another_version_does_not_run_silently() -> None:
    """Prevents a job recorded for one version of a stream running another (a cluster
    node with other code, or an old sweep record): a one-line error naming the fix."""
    spec = dataclasses.replace(make_spec("lifecycle", "keep_all", 0, 10), workload_version="1")
    with pytest.raises(RegistryError, match="ask for lifecycle@1"):
        materialize(spec)


@pytest.mark.parametrize("name", TURN_STREAMS)
@pytest.mark.parametrize("seed", range(4))
def test_version_2_is_version_1_with_day_boundaries(name: str, seed: int) -> None:
    """Prevents version 2 drawing anything differently from the seed's stream: without
    its Ticks it is version 1 event for event, and each Tick sits right before the first
    capture of a new day, at that capture's turn."""
    v2, v1 = WORKLOADS[name], WORKLOADS[f"{name}@1"]
    for days in (1, 7):
        evs = list(v2.events(seed, 800, v2.Params(turns_per_day=days)))  # type: ignore[call-arg]
        assert [e for e in evs if not isinstance(e, Tick)] == list(
            v1.events(seed, 800, v1.Params()))
        seen_day = 0
        for i, e in enumerate(evs):
            if isinstance(e, Tick):
                nxt = evs[i + 1]
                assert isinstance(nxt, Observe) and nxt.t == e.t
                assert e.t // days > seen_day
                seen_day = e.t // days
            elif isinstance(e, Observe):
                assert e.t // days == seen_day  # its day was ticked before it
    assert not [e for e in v2.events(seed, 300, v2.Params(turns_per_day=0))  # type: ignore[call-arg]
                if isinstance(e, Tick)]


def test_with_days_collapses_days_without_a_capture() -> None:
    """Prevents a Tick for a day that had no capture (a query-only day) piling up."""
    from workloads import Query, QueryTruth

    q = QueryTruth("a.b", "v", frozenset(), "fact")
    evs = [Query(0, "q", q), Query(1, "q", q), Query(2, "q", q),
           Observe(3, "x", None)]  # type: ignore[arg-type]
    assert [type(e).__name__ for e in with_days(iter(evs), 1)] == [
        "Query", "Query", "Query", "Tick", "Observe"]


@pytest.mark.parametrize("days", [1, 2, 7, 1000])
@pytest.mark.parametrize("name", TURN_STREAMS)
def test_a_stream_with_its_ticks_is_with_days_of_the_stream_without(name: str,
                                                                    days: int) -> None:
    """Prevents the generator's own day boundaries (made inline, not by ``with_days``)
    drifting from ``with_days``'s definition at a day length the goldens do not run."""
    from workloads.contradiction import stream

    params = WORKLOADS[name].Params()
    for seed in (0, 3):
        assert (list(stream(seed, 400, params, days))
                == list(with_days(stream(seed, 400, params, 0), days)))


def test_the_chooser_draws_what_random_choice_draws() -> None:
    """Prevents the generator's one-call ``choice`` drawing other bits than CPython's
    ``random.Random.choice`` (the seed's generator's), at every length the streams use
    and at lengths whose rejection sampling redraws."""
    import random

    from workloads.contradiction import chooser

    for seed in range(5):
        ours, theirs = random.Random(seed), random.Random(seed)
        below = chooser(ours)
        for n in [1, 2, 3, 5, 6, 7, 8, 10, 60, 65, 1000] * 50:
            seq = range(n)
            assert seq[below(n)] == theirs.choice(seq)
        assert ours.random() == theirs.random()


def test_events_made_fast_are_the_events_their_class_makes() -> None:
    """Prevents ``make_observe`` and ``tick_at`` (a stream's fast constructors) from
    making an event that differs from, or is less frozen than, the class's own: every
    field set (a field added to ``Observe`` must be added there too), ``meta`` a dict of
    each event's own, and a tick of any time, kept or not."""
    from workloads.events import TICKS_KEPT, ObserveTruth, make_observe, tick_at

    truth = ObserveTruth("alice.city", "paris", "fact")
    fast, made = make_observe(7, "Alice lives in Paris.", truth), Observe(
        7, "Alice lives in Paris.", truth)
    assert fast == made and type(fast) is Observe and hash(fast.truth) == hash(made.truth)
    assert [getattr(fast, f.name) for f in dataclasses.fields(Observe)] == [
        getattr(made, f.name) for f in dataclasses.fields(Observe)]
    assert make_observe(1, "x", truth, {"tags": "a"}).meta == {"tags": "a"}
    assert make_observe(1, "x", truth).meta is not make_observe(1, "x", truth).meta
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.t = 8  # type: ignore[misc]
    for t in (0, 1, 5, 3000, TICKS_KEPT - 1, TICKS_KEPT, -1):
        assert tick_at(t) == Tick(t) and tick_at(t).t == t
    assert tick_at(5) is tick_at(5)


def test_bad_day_length_is_rejected() -> None:
    """Prevents a negative day length being read as "no ticks" silently."""
    with pytest.raises(FbenchError, match="turns_per_day must be >= 0"):
        make_spec("contradiction", "lethe", 0, params=[("workload.turns_per_day", -1)])


def _deterministic(spec: JobSpec) -> dict[str, float]:
    m = run_job(spec).metrics()
    return {k: v for k, v in m.items() if k in METRICS and not METRICS[k].timing}


@pytest.mark.slow
@pytest.mark.parametrize("name", TURN_STREAMS)
def test_day_boundaries_change_no_policy_but_lethe(name: str) -> None:
    """Prevents version 2 moving any policy's numbers but lethe's: every other reference
    policy (ttl and window expire at Ticks too) scores on version 2 exactly as on
    version 1, on every deterministic metric, on two seeds."""
    for policy in sorted(set(POLICIES) - TICKED):
        for seed in (0, 1):
            got = _deterministic(make_spec(name, policy, seed, 1500))
            want = _deterministic(make_spec(f"{name}@1", policy, seed, 1500))
            assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True), policy


@pytest.mark.parametrize("seed", range(3))
def test_lethe_consolidates_on_turn_streams(seed: int) -> None:
    """Prevents the namesake policy being keep_all on turn streams again (no Tick, no
    consolidation): on version 2 lethe forgets and keeps fewer entries than keep_all, and
    on version 1 it still equals keep_all."""
    def final(workload: str, policy: str) -> dict[str, float]:
        return _deterministic(make_spec(workload, policy, seed, 1500))

    lethe, keep = final("contradiction", "lethe"), final("contradiction", "keep_all")
    assert lethe["n_forgotten"] > 0 and lethe["final_size"] < keep["final_size"] / 2
    assert lethe["contradiction_rate"] < keep["contradiction_rate"]
    assert (json.dumps(final("contradiction@1", "lethe"), sort_keys=True)
            == json.dumps(final("contradiction@1", "keep_all"), sort_keys=True))


RETIRED_NUMBERS = Path(__file__).parent / "golden" / "retired_streams.json"


@pytest.mark.slow
def test_retired_streams_give_their_old_numbers_exactly() -> None:
    """Prevents a retired version drifting (the promise of `lifecycle@1` and
    `contradiction@1`): final metrics of full-horizon jobs, copied from the shards of the
    RESULTS.md sweep that ran before version 2 existed (commit eb049e5, under the
    unversioned names), are reproduced exactly under the versioned names. Those jobs ran
    every duration at its field's own number, before defaults followed the clock
    (docs/policies.md), so the cases give it explicitly."""
    import dataclasses

    from fbench.clock import is_duration
    from runner.adapters import MEMORIES

    cases = json.loads(RETIRED_NUMBERS.read_text())
    assert {c["workload"] for c in cases} == {"lifecycle@1", "lifecycle.bursty@1",
                                              "contradiction@1", "contradiction.retrievable@1"}
    for c in cases:
        params = MEMORIES[c["policy"]].Params
        then = [(f"policy.{f.name}", f.default) for f in dataclasses.fields(params)
                if is_duration(params, f.name)]
        got = run_job(make_spec(c["workload"], c["policy"], c["seed"], c["horizon"],
                                params=then)).metrics()
        assert {k: got[k] for k in c["metrics"]} == c["metrics"], (c["workload"], c["policy"])


def test_a_sweep_resumed_after_a_version_change_reruns_and_sets_old_shards_aside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents old-stream shards being resumed as if current, or aggregated with the new
    (one cell counting a seed twice): after the workload's version changes, the same sweep
    in the same folder reruns its jobs, moves the old shards to OUT/superseded, and the
    summary has each seed once."""
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from runner.cli import app

    out = tmp_path / "o"
    args = ["sweep", "--policies", "keep_all", "--workloads", "contradiction", "--seeds", "2",
            "--horizons", "120", "--executor", "inline", "--out", str(out), "--no-report"]
    runner = CliRunner()
    assert runner.invoke(app, args).exit_code == 0
    monkeypatch.setattr(WORKLOADS["contradiction"], "version", "9")
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "set aside 2 shard(s)" in res.output
    assert len(list((out / "superseded").rglob("*.parquet"))) == 2
    shards = [pq.read_table(p) for p in (out / "shards").rglob("*.parquet")]
    assert sorted(set(t.column("workload_version").to_pylist()) for t in shards) == [
        {"9"}, {"9"}]
    res = runner.invoke(app, ["aggregate", str(out)])
    assert res.exit_code == 0, res.output
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    assert {r["n"] for r in summary if r["metric"] == "recall_at_k"} == {2}


def test_aggregate_refuses_two_jobs_for_one_seed_of_a_cell(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a summary that counts a seed twice when a folder holds shards of two
    versions of a stream for one cell (copied in by hand): one line naming both jobs."""
    from typer.testing import CliRunner

    from runner.cli import app
    from runner.results.shard import shard_path, write_shard

    out = tmp_path / "o"
    for version in ("2", "9"):
        monkeypatch.setattr(WORKLOADS["contradiction"], "version", version)
        spec = make_spec("contradiction", "keep_all", 0, 120)
        write_shard(shard_path(out, spec), execute(spec.canonical_json(), "test").table)
    res = CliRunner().invoke(app, ["aggregate", str(out)])
    assert res.exit_code == 2
    assert "has two jobs for seed 0" in res.output and "Traceback" not in res.output
