"""The ``statebench`` workload: StateBench's timelines replayed as one fbench stream, its
phrases as ground truth, its tracks as query categories, its version in each job."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from runner.cli import app
from workloads import Observe, ObserveTruth, Query, QueryTruth, Tick

pytestmark = [pytest.mark.statebench]

TIMELINE: dict[str, Any] = {
    "id": "S1-000042", "domain": "sales", "track": "supersession",
    "actors": {"user": {"id": "u1", "role": "VP Sales", "org": "Acme"}},
    "initial_state": {
        "identity_role": {"user_name": "Ann", "authority": "VP Sales", "department": "Sales",
                          "organization": "Acme"},
        "persistent_facts": [{"id": "F-P", "key": "policy", "value": "Max 10% discount",
                              "source": {"type": "policy", "authority": "policy"},
                              "ts": "2025-06-01T10:00:00"}],
        "environment": {"now": "2025-12-01T10:00:00", "system": "Quarter closes Friday"}},
    "events": [
        {"ts": "2025-12-01T10:03:00", "type": "state_write", "writes": [
            {"id": "F-1", "layer": "persistent_facts", "key": "globex_discount",
             "value": "25% discount approved for Globex"}]},
        {"ts": "2025-12-01T10:02:00", "type": "conversation_turn", "speaker": "user",
         "text": "Globex wants a 25% discount; the VP approved it."},
        {"ts": "2025-12-01T10:30:00", "type": "supersession", "writes": [
            {"id": "F-2", "layer": "persistent_facts", "key": "globex_discount_v2",
             "value": "discount for Globex revoked", "supersedes": "globex_discount"}]},
        {"ts": "2025-12-01T10:40:00", "type": "query",
         "prompt": "Can I offer Globex the discount?",
         "ground_truth": {"decision": "no", "must_mention": ["revoked"],
                          "must_not_mention": ["25%", "approved"]}},
    ],
}


def test_a_timeline_becomes_exact_events() -> None:
    """Prevents a mapping that guesses or drifts: initial facts and environment ("now"
    aside), then events in time order, one observation a turn, a tick first; an
    observation holding a must_not_mention phrase is stale, one holding a must_mention
    phrase current, the rest noise; two filler facts sit before the query, which is asked
    at the turn before it and never stored."""
    from statebench.schema.timeline import Timeline

    from outside.statebench import timeline_events

    got = timeline_events(Timeline.model_validate(TIMELINE), 7, 2, 11)
    slot = "S1-000042.q0"
    fillers = [ev for ev in got if isinstance(ev, Observe) and ev.truth.kind == "filler"]
    assert [ev.t for ev in fillers] == [12, 13]
    assert all(ev.truth == ObserveTruth(None, None, "filler") for ev in fillers)
    assert [ev for ev in got if not (isinstance(ev, Observe) and ev.truth.kind == "filler")] == [
        Tick(7),
        Observe(7, "Max 10% discount", ObserveTruth(None, None, "initial"),
                {"tags": "initial_state,persistent_facts"}),
        Observe(8, "Quarter closes Friday", ObserveTruth(None, None, "initial"),
                {"tags": "initial_state,environment"}),
        Observe(9, "Globex wants a 25% discount; the VP approved it.",
                ObserveTruth(slot, "stale", "turn"), {"tags": "turn", "speaker": "user"}),
        Observe(10, "25% discount approved for Globex", ObserveTruth(slot, "stale", "state_write"),
                {"tags": "state_write,persistent_facts", "key": "globex_discount"}),
        Observe(11, "discount for Globex revoked", ObserveTruth(slot, "current", "supersession"),
                {"tags": "supersession,persistent_facts", "key": "globex_discount_v2",
                 "supersedes": "globex_discount"}),
        Query(13, "Can I offer Globex the discount?",
              QueryTruth(slot, "current", frozenset({"stale"}), "supersession")),
    ]


def _stream_digest(hash_seed: str) -> str:
    code = ("import hashlib;from outside.statebench import WORKLOAD as W, StateBenchParams as P;"
            "p=P(distance=3);print(hashlib.sha256(repr(list(W.bind(p,4).events(4,600,p)))"
            ".encode()).hexdigest())")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin:/bin"},
                         timeout=120, check=True)
    return res.stdout.strip()


@pytest.mark.slow
def test_the_stream_is_the_same_whatever_the_hash_seed() -> None:
    """Prevents a stream that changes between processes (StateBench dedupes phrases
    through a set, whose order follows Python's string hash): the same seed and
    parameters give the same events under two hash seeds."""
    assert _stream_digest("1") == _stream_digest("2")


def test_tracks_are_categories_and_the_version_is_in_the_job() -> None:
    """Prevents a StateBench job whose stream can change unnoticed: the installed
    StateBench's version is part of the job's identity and of its shard's provenance;
    each track named is a query category."""
    from runner.job.provenance import versions
    from runner.spec.resolve import make_spec, materialize

    spec = make_spec("statebench", "keep_all", 0, 100,
                     params=[("workload.tracks", "supersession,environmental_freshness")])
    version = metadata.version("statebench")
    assert dict(spec.code)["data"] == f"statebench=={version}"
    assert versions()["statebench"] == version
    assert set(materialize(spec).workload.categories) == {"supersession",
                                                          "environmental_freshness"}


@pytest.mark.parametrize(("param", "message"), [
    ("workload.tracks=nope", "unknown StateBench track 'nope'; known: supersession"),
    ("workload.distance=-1", "distance must be >= 0, got -1"),
    ("workload.tracks=supersession,supersession", "tracks names a track twice"),
])
def test_bad_statebench_parameters_are_one_line(param: str, message: str) -> None:
    """Prevents a traceback (or a silently empty stream) for a mistyped track or a
    negative distance: one line naming the problem, exit code 2."""
    res = CliRunner().invoke(app, ["run", "--workload", "statebench", "--policy", "keep_all",
                                   "--horizon", "50", "--param", param])
    assert res.exit_code == 2 and message in res.output, res.output
    assert res.output.strip().count("\n") == 0


@pytest.mark.slow
@pytest.mark.cluster
def test_a_statebench_sweep_runs_inline_and_on_ray_with_per_track_metrics(tmp_path: Path
                                                                          ) -> None:
    """Prevents a StateBench sweep that runs one way only, loses its tracks, or differs by
    executor: `fbench sweep --workloads statebench --seeds 5` inline and on the embedded
    Ray give the same shards (timing aside), each names StateBench's version, and the
    report has a per-track table (in a report including the other sweep, only its own)."""
    import pyarrow.parquet as pq

    from runner.metrics import METRICS

    finals = {}
    for executor in ("inline", "ray"):
        out = tmp_path / executor
        res = subprocess.run(
            [sys.executable, "-m", "runner.cli", "sweep", "--workloads", "statebench",
             "--seeds", "5", "--policies", "keep_all,ttl,lru", "--horizons", "300",
             "--executor", executor, "--out", str(out)],
            capture_output=True, text=True, timeout=900, check=False)
        assert res.returncode == 0, res.stderr
        rows = [pq.read_table(p).to_pylist()[-1] for p in sorted(out.rglob("shards/**/*.parquet"))]
        assert len(rows) == 15
        assert {json.loads(r["versions"])["statebench"] for r in rows} == {
            metadata.version("statebench")}
        finals[executor] = sorted(json.dumps(
            {k: v for k, v in r.items() if k in METRICS and not METRICS[k].timing},
            sort_keys=True) for r in rows)
        assert all(r["n_queries_supersession_maintain"] > 0 for r in rows)
        report = (out / "RESULTS.md").read_text()
        assert "### By query category" in report
        assert "| policy | environmental_freshness | supersession | supersession_detection " \
               "| supersession_maintain |" in report
    assert finals["ray"] == finals["inline"]
    # included in another sweep's report, a sweep's per-track tables stay in its own
    from runner.report.markdown import write_report

    combined = write_report(tmp_path / "inline", tmp_path / "combined.md",
                            include=[tmp_path / "ray"]).read_text()
    own, other = combined.split("## Included sweep: `ray/`")
    assert "### By query category" in own and "By query category" not in other
    assert "the per-category tables (environmental_freshness, supersession, " \
           "supersession_detection, supersession_maintain): in [`ray/RESULTS.md`]" in other


def test_scans_of_other_categories_read_as_one_table(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a read that fails when the files of one scan have query categories of
    their own (StateBench's tracks) and another scan's have none: a sweep of both
    workloads, read a file at a time, gives every row, the tracks' columns null for the
    lifecycle job, and ``fbench aggregate`` gives a summary."""
    import runner.results.load as load
    from runner.job.execute import execute
    from runner.results.aggregate import aggregate
    from runner.results.shard import shard_path, write_shard
    from runner.spec.resolve import make_spec

    out = tmp_path / "mixed"
    for workload in ("lifecycle", "statebench", "lifecycle.bursty"):
        spec = make_spec(workload, "keep_all", 0, horizon=30)
        done = execute(spec.canonical_json(), "inline")
        assert done.table is not None, done.error
        write_shard(shard_path(out, spec), done.table)
    monkeypatch.setattr(load, "FILES_PER_SCAN", 1)
    final = load.load_shards(out, final_only=True)
    column = "n_queries_supersession_maintain"
    assert final.column("workload").to_pylist() == ["lifecycle", "lifecycle.bursty",
                                                    "statebench"]
    assert [v is None for v in final.column(column).to_pylist()] == [True, True, False]
    assert aggregate(out).num_rows > 0


@pytest.mark.slow
def test_workloads_page_states_what_one_stream_holds() -> None:
    """Prevents the StateBench counts of the Workloads page drifting from the stream: its
    table is recomputed from seed 0's default stream, row for row."""
    from outside.statebench import StateBenchParams, track_counts

    page = (Path(__file__).parent.parent / "docs" / "workloads.md").read_text()
    counts = track_counts(0, 2000, StateBenchParams())
    for track, c in counts.items():
        row = f"| {track} | " + " | ".join(str(c[k]) for k in (
            "timelines", "observations", "current", "stale", "queries", "answerable")) + " |"
        assert row in page, row
