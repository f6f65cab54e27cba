"""The trace format and the ``trace`` workload: any workload exported and replayed gives
the same numbers, a malformed trace is one line naming its line, and a trace's content
is part of a job's identity."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fbench.plugins import file_origin
from runner.cli import app
from runner.job.run import run_job
from runner.metrics import METRICS
from runner.spec.resolve import make_spec
from workloads import (
    WORKLOADS,
    Event,
    Observe,
    ObserveTruth,
    Query,
    QueryTruth,
    Tick,
    Vocabulary,
    current_builtin_names,
)

SHORT = {"turns": 400, "days": 30}  # a short horizon per unit: the round trip is exact
POLICIES = ("keep_all", "last_write_wins", "lethe", "ttl", "lru", "oracle")


def export(tmp: Path, workload: str, seed: int, horizon: int, name: str = "t.jsonl") -> Path:
    out = tmp / name
    res = CliRunner().invoke(app, ["trace", "export", workload, "--seed", str(seed),
                                   "--horizon", str(horizon), "--output", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_export_makes_the_trace_folder(tmp_path: Path) -> None:
    """Prevents a traceback when ``--output`` names a folder that does not exist yet."""
    out = export(tmp_path, "contradiction", 0, 100, name="traces/new/t.jsonl")
    assert out.is_file() and out.read_text().count("\n") > 100


def deterministic(metrics: dict[str, float]) -> str:
    return json.dumps({k: v for k, v in metrics.items() if not METRICS[k].timing},
                      sort_keys=True)


@pytest.mark.slow
@pytest.mark.parametrize("workload", current_builtin_names())
def test_an_exported_trace_replays_to_the_same_numbers(workload: str, tmp_path: Path) -> None:
    """Prevents a trace format that loses anything a memory or the scorer uses (text, time,
    meta and tags, ticks, truth, categories, the vocabulary an extractor is given): each
    policy on the exported trace scores exactly as on the workload, metric for metric."""
    from workloads import WORKLOADS

    horizon = SHORT[WORKLOADS[workload].horizon_unit]
    path = export(tmp_path, workload, 2, horizon)
    for policy in POLICIES:
        want = run_job(make_spec(workload, policy, 2, horizon)).metrics()
        got = run_job(make_spec("trace", policy, 2, params=[("workload.path", str(path))]))
        assert deterministic(got.metrics()) == deterministic(want), policy


def test_the_trace_horizon_and_seed_paths(tmp_path: Path) -> None:
    """Prevents a trace job that ignores the file's horizon or cannot pick a file per seed:
    the default horizon is the header's, and {seed} in the path names each seed's file."""
    for seed in (0, 1):
        export(tmp_path, "contradiction", seed, 200 + seed, f"s{seed}.jsonl")
    pattern = str(tmp_path / "s{seed}.jsonl")
    for seed in (0, 1):
        spec = make_spec("trace", "keep_all", seed, params=[("workload.path", pattern)])
        assert spec.horizon == 200 + seed


def test_an_edited_trace_is_another_job(tmp_path: Path) -> None:
    """Prevents reusing results of a trace that has since changed: the file's SHA-256 is
    in the job's identity, and a job planned before the edit refuses to run after it."""
    from fbench.registry import RegistryError
    from runner.spec.resolve import materialize

    path = export(tmp_path, "contradiction", 0, 200)
    before = make_spec("trace", "keep_all", 0, params=[("workload.path", str(path))])
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-5]) + "\n")
    after = make_spec("trace", "keep_all", 0, params=[("workload.path", str(path))])
    assert before.job_id != after.job_id
    assert dict(before.code)["data"].startswith("sha256:")
    with pytest.raises(RegistryError, match="changed since the job was planned"):
        materialize(before)


HEADER = {"format": "fbench-trace", "version": 1, "horizon": 10, "horizon_unit": "turns",
          "categories": {"fact": "facts"}, "update_kinds": {},
          "vocabulary": {"entities": ["ann"], "phrases": [["home city", "home_city"]]},
          "distinct_facts": 1}
OBS = {"type": "observe", "t": 0, "text": "Ann's home city is oslo.", "meta": {},
       "truth": {"slot": "ann.home_city", "value": "oslo", "kind": "fact"}}
QUERY = {"type": "query", "t": 1, "text": "Where does Ann live?",
         "truth": {"slot": "ann.home_city", "value": "oslo", "stale": [], "category": "fact"}}

BAD = [  # (lines after the header, or a whole file; the line and field the error names)
    ("{not json", ":2: line: is not JSON"),
    (json.dumps({**OBS, "text": None}), ":2: text: must be a non-empty string"),
    (json.dumps({k: v for k, v in OBS.items() if k != "truth"}), ":2: truth: must be an"),
    (json.dumps(OBS) + "\n" + json.dumps({**QUERY, "t": 0}) + "\n" + json.dumps(
        {"type": "tick", "t": -1}), ":4: t: must be an integer >= 0"),
    (json.dumps({**OBS, "t": 3}) + "\n" + json.dumps({**QUERY, "t": 2}),
     ":3: t: 2 comes after 3"),
    (json.dumps(OBS) + "\n" + json.dumps(
        {**QUERY, "truth": {**QUERY["truth"], "category": "gossip"}}),
     ":3: truth.category: 'gossip' is not one of the header's categories"),
    (json.dumps(QUERY), ":2: type: a query before any observation"),
    (json.dumps({**OBS, "t": 10}), ":2: t: 10 is not before the header's horizon 10"),
    (json.dumps({**OBS, "type": "remember"}), ":2: type: 'remember' is not observe"),
    (json.dumps({**OBS, "truth": {**OBS["truth"], "value": None}}),
     ":2: truth.value: slot and value are both set or both null"),
    (json.dumps(OBS) + "\n\n" + json.dumps(QUERY), ":3: line: is empty"),
    ("HEADER:" + json.dumps({**HEADER, "version": 2}), ":1: version: is 2"),
    ("HEADER:" + json.dumps({**HEADER, "format": "jsonl"}), ":1: format: must be"),
    ("HEADER:" + json.dumps({**HEADER, "horizon_unit": "hours"}), ":1: horizon_unit: must be"),
    ("HEADER:" + json.dumps({**HEADER, "update_kinds": {"x": "odd"}}),
     ":1: update_kinds.x: must be one of canonical, hard"),
    ("HEADER:" + json.dumps({**HEADER, "categories": {"Knowledge-Update": "x"}}),
     ":1: categories.Knowledge-Update: must be lower-case letters, digits and _"),
]


def _write(tmp: Path, body: str) -> Path:
    path = tmp / "bad.jsonl"
    if body.startswith("HEADER:"):
        path.write_text(body.removeprefix("HEADER:") + "\n" + json.dumps(OBS) + "\n")
    else:
        path.write_text(json.dumps(HEADER) + "\n" + body + "\n")
    return path


@pytest.mark.parametrize(("body", "message"), BAD)
def test_a_malformed_trace_is_one_line_naming_its_line(body: str, message: str,
                                                        tmp_path: Path) -> None:
    """Prevents a traceback, a vague error or a half-written result for a bad trace: the
    validator and a job on it each stop with one line naming the file, line and field,
    exit code 2, and the job writes nothing."""
    path = _write(tmp_path, body)
    runner = CliRunner()
    res = runner.invoke(app, ["trace", "validate", str(path)])
    assert res.exit_code == 2, res.output
    assert f"{path}{message}" in res.output and res.output.strip().count("\n") == 0, res.output
    out = tmp_path / "out"
    res = runner.invoke(app, ["sweep", "--workloads", "trace", "--policies", "keep_all",
                              "--param", f"workload.path={path}", "--seeds", "1",
                              "--executor", "inline", "--out", str(out), "--no-report"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert not list(out.rglob("*.parquet"))


def test_a_valid_trace_validates(tmp_path: Path) -> None:
    """Prevents a validator that rejects the format's own example."""
    path = tmp_path / "ok.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (HEADER, OBS, QUERY,
                                                       {"type": "tick", "t": 1})) + "\n")
    res = CliRunner().invoke(app, ["trace", "validate", str(path)])
    assert res.exit_code == 0, res.output
    assert "1 observations, 1 queries, 1 ticks" in res.output


@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
def test_the_parquet_twin_holds_the_same_stream(workload: str, tmp_path: Path) -> None:
    """Prevents the Parquet twin losing or reordering anything: its events equal the JSON
    lines', and a policy replaying it scores as on the workload."""
    from workloads import WORKLOADS
    from workloads.trace.format import parse

    horizon = SHORT[WORKLOADS[workload].horizon_unit]
    lines = export(tmp_path, workload, 1, horizon, "t.jsonl")
    table = export(tmp_path, workload, 1, horizon, "t.parquet")
    (h1, e1), (h2, e2) = parse(lines), parse(table)
    assert h1 == h2 and list(e1) == list(e2)
    want = run_job(make_spec(workload, "lethe", 1, horizon)).metrics()
    got = run_job(make_spec("trace", "lethe", 1, params=[("workload.path", str(table))]))
    assert deterministic(got.metrics()) == deterministic(want)


def test_a_malformed_parquet_trace_is_one_line(tmp_path: Path) -> None:
    """Prevents a Parquet file without the trace header, or with a bad row, passing or
    crashing: one line naming the file and the row (numbered like lines), exit 2."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from workloads.trace.columnar import META_KEY, SCHEMA

    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": [1]}), plain)
    bad = tmp_path / "bad.parquet"
    rows = [{"type": "observe", "t": 3, "text": "Ann's home city is oslo.", "meta": "{}",
             "slot": "ann.home_city", "value": "oslo", "kind": "fact", "stale": None,
             "category": None},
            {"type": "tick", "t": 1, "text": None, "meta": None, "slot": None, "value": None,
             "kind": None, "stale": None, "category": None}]
    schema = SCHEMA.with_metadata({META_KEY: json.dumps(HEADER)})
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), bad)
    runner = CliRunner()
    for path, message in ((plain, ":1: header: the file has no 'fbench-trace' metadata"),
                          (bad, ":3: t: 1 comes after 3")):
        res = runner.invoke(app, ["trace", "validate", str(path)])
        assert res.exit_code == 2 and f"{path}{message}" in res.output, res.output


def test_aggregate_never_drops_a_column_silently(tmp_path: Path) -> None:
    """Prevents the summary quietly losing metrics (a category or plugin metric whose
    declaration is not installed where aggregate runs): a shard column no installed metric
    declares stops aggregate with one line naming the file and the column, and the old
    summary stays."""
    import pyarrow as pa

    from runner.job.execute import execute
    from runner.results.atomic import write_parquet
    from runner.results.shard import shard_path

    out = tmp_path / "o"
    spec = make_spec("contradiction", "keep_all", 0, 100)
    table = execute(spec.canonical_json(), "test").table
    path = shard_path(out, spec)
    path.parent.mkdir(parents=True)
    write_parquet(path, table)
    runner = CliRunner()
    assert runner.invoke(app, ["aggregate", str(out)]).exit_code == 0
    before = (out / "summary.parquet").read_bytes()
    extra = table.append_column("gossip_score", pa.array([0.5] * table.num_rows))
    write_parquet(path, extra)
    res = runner.invoke(app, ["aggregate", str(out)])
    assert res.exit_code == 2, res.output
    assert "no installed metric declares (gossip_score)" in res.output
    assert res.output.strip().count("\n") == 0
    assert (out / "summary.parquet").read_bytes() == before


def _gossip_trace(tmp: Path) -> Path:
    """A trace with a category of its own: two queries of ``gossip`` (one answered, one
    not: its slot was never observed... by value) and one of ``fact``."""
    header = {**HEADER, "categories": {"fact": "facts", "gossip": "hearsay"}}
    lines = [header, OBS,
             {**OBS, "t": 1, "text": "Bo's home city is rome.",
              "truth": {"slot": "bo.home_city", "value": "rome", "kind": "fact"}},
             {**QUERY, "t": 2},
             {**QUERY, "t": 3, "truth": {**QUERY["truth"], "category": "gossip"}},
             {**QUERY, "t": 4, "text": "Where does Bo live?",
              "truth": {"slot": "bo.home_city", "value": "paris", "stale": ["rome"],
                        "category": "gossip"}}]
    path = tmp / "gossip.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_traces_own_categories_are_metric_columns_aggregate_keeps(tmp_path: Path) -> None:
    """Prevents a trace's query categories counting only in the overall metrics, or being
    dropped where shards of different categories meet: a category fbench's workloads do
    not have gets its split columns in the trace's shards (exact values), the shard
    validates, compaction keeps them, and the summary has them, with nan for a workload
    without that category."""
    import shutil

    import pyarrow.parquet as pq

    from runner.results.aggregate import aggregate
    from runner.results.compact import compact
    from runner.results.validate import shard_problem

    trace = _gossip_trace(tmp_path)
    out = tmp_path / "o"
    for name, argv in (("o", ["--workloads", "trace", "--param", f"workload.path={trace}"]),
                       ("c", ["--workloads", "contradiction", "--horizons", "100"])):
        res = CliRunner().invoke(app, ["sweep", *argv, "--policies", "keep_all", "--seeds",
                                       "1", "--executor", "inline", "--out",
                                       str(tmp_path / name), "--no-report"])
        assert res.exit_code == 0, res.output
    shutil.copytree(tmp_path / "c" / "shards", out / "shards", dirs_exist_ok=True)
    shards = sorted((out / "shards").rglob("*.parquet"))
    final = {p.parent.parent.name: pq.read_table(p).to_pylist()[-1] for p in shards}
    got = final["workload=trace"]
    assert (got["n_queries"], got["n_queries_fact"], got["n_queries_gossip"]) == (3, 1, 2)
    assert (got["recall_at_k_gossip"], got["contradiction_rate_gossip"]) == (0.5, 0.5)
    assert "n_queries_gossip" not in final["workload=contradiction"]
    assert all(shard_problem(p) == "" for p in shards)
    for step in ("raw", "compacted"):
        summary = aggregate(out).to_pylist()
        rows = {(r["workload"], r["metric"]): r for r in summary}
        assert rows[("trace", "recall_at_k_gossip")]["mean"] == 0.5, step
        assert rows[("trace", "n_queries_gossip")]["mean"] == 2.0, step
        none = rows[("contradiction", "recall_at_k_gossip")]
        assert (none["n"], none["n_missing"]) == (0, 1), step
        compact(out)


LONGMEMEVAL = Path(__file__).parent / "fixtures" / "longmemeval_ku.json"


def test_longmemeval_knowledge_updates_become_exact_events(tmp_path: Path) -> None:
    """Prevents a LongMemEval import that guesses: knowledge-update questions only (not
    abstention, not other types), evidence turns as observations of the question's slot
    valued by their session, the latest-dated session current and the earlier ones
    stale, questions whose old and new cannot be told apart left out, one question after
    another on one day clock with a tick closing each day."""
    from workloads import Observe as O
    from workloads import ObserveTruth as OT
    from workloads import Query as Q
    from workloads import QueryTruth as QT
    from workloads import Tick as T
    from workloads.trace.format import parse

    out = tmp_path / "lme.jsonl"
    res = CliRunner().invoke(app, ["trace", "import", "longmemeval", str(LONGMEMEVAL),
                                   "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert "2 knowledge-update questions; left out 2 " in res.output
    assert "(ku3, ku4)" in res.output
    header, events = parse(out)
    u = {"tags": "user"}
    # ku1: days 0 (2023/05/01) and 40 (2023/06/10), asked on day 42; ku5 starts on day 43
    assert list(events) == [
        O(0, "I live in Boston, near the river.", OT("qku1.fact", "sa1", "fact"),
          {**u, "session": "a1"}), T(0),
        O(40, "I just moved to Denver last week.", OT("qku1.fact", "sa3", "update"),
          {**u, "session": "a3"}), T(40),
        Q(42, "Where do I live now?", QT("qku1.fact", "sa3", frozenset({"sa1"}),
                                          "knowledge_update")), T(42),
        O(43, "My 5k best is 27 minutes.", OT("qku5.fact", "sf1", "fact"),
          {**u, "session": "f1"}), T(43),
        O(46, "Ran 25:30 for the 5k, a new best.", OT("qku5.fact", "sf2", "update"),
          {**u, "session": "f2"}), T(46),
        O(50, "New 5k best today: 24 minutes!", OT("qku5.fact", "sf3", "update"),
          {**u, "session": "f3"}), T(50),
        Q(51, "What is my running personal best?",
          QT("qku5.fact", "sf3", frozenset({"sf1", "sf2"}), "knowledge_update")), T(51),
    ]
    assert (header.horizon, header.horizon_unit, header.distinct_facts) == (52, "days", 2)
    assert list(header.categories) == ["knowledge_update"]
    got = run_job(make_spec("trace", "keep_all", 0, params=[("workload.path", str(out))]))
    assert got.metrics()["n_queries"] == 2


def test_longmemeval_haystack_turns_are_noise(tmp_path: Path) -> None:
    """Prevents --haystack adding turns with a slot (they are distractors) or losing the
    evidence: every non-evidence turn becomes an observation without a slot."""
    from workloads import Observe
    from workloads.trace.format import parse

    out = tmp_path / "lme.jsonl"
    res = CliRunner().invoke(app, ["trace", "import", "longmemeval", str(LONGMEMEVAL),
                                   "--output", str(out), "--haystack"])
    assert res.exit_code == 0, res.output
    obs = [e for e in parse(out)[1] if isinstance(e, Observe)]
    noise = [e for e in obs if e.truth.slot is None]
    assert [e.text for e in noise] == ["Boston is lovely in spring.",
                                       "Can you suggest a pasta recipe?", "Try cacio e pepe."]
    assert len(obs) - len(noise) == 5


def test_a_bad_longmemeval_file_is_one_line(tmp_path: Path) -> None:
    """Prevents a traceback on a file that is not LongMemEval's, or writing a trace of
    nothing: one line, exit 2, no output file."""
    bad = tmp_path / "x.json"
    out = tmp_path / "t.jsonl"
    runner = CliRunner()
    for text, words in (("{", "not a LongMemEval JSON file"),
                        ('[{"question_id": "k", "question_type": "knowledge-update"}]',
                         "question k: haystack_dates is missing"),
                        ("[]", "no knowledge-update question")):
        bad.write_text(text)
        res = runner.invoke(app, ["trace", "import", "longmemeval", str(bad), "--output",
                                  str(out)])
        assert res.exit_code == 2 and words in res.output, res.output
        assert res.output.strip().count("\n") == 0 and not out.exists()
    res = runner.invoke(app, ["trace", "import", "locomo", str(bad), "--output", str(out)])
    assert res.exit_code == 2 and "unknown trace source 'locomo'" in res.output


class _AtHorizon:
    """A plugin-style workload whose one query comes at t == horizon."""

    name, version, horizon_unit, default_horizon = "test.at_horizon", "1", "turns", 10
    description, categories, update_kinds = "a query at the horizon", {"fact": "f"}, {}

    @dataclass(frozen=True)
    class Params:
        late: int = 0  # how far past the horizon the query comes
        tick: int = 0  # how far past the horizon a last tick comes (0: none)

    def events(self, seed: int, horizon: int, params: Any) -> Iterator[Event]:
        yield Observe(0, "Ann's home city is oslo.", ObserveTruth("ann.home_city", "oslo",
                                                                  "fact"))
        yield Query(horizon + params.late, "What is Ann's home city?",
                    QueryTruth("ann.home_city", "oslo", frozenset(), "fact"))
        if params.tick:
            yield Tick(horizon + params.tick)

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(("ann",), (("home city", "home_city"),))

    def distinct_facts(self, params: Any) -> int:
        return 1


def test_a_query_at_the_horizon_is_scored_and_one_past_it_is_an_error() -> None:
    """Prevents the silent loss a user met writing a trace workload: a query at
    t == horizon used to fall after the final checkpoint (nan metrics); it is scored, and
    an event past the horizon stops the job with a message naming the workload (a tick
    too, for a memory whose ticks change nothing: the harness skips those)."""
    if _AtHorizon.name not in WORKLOADS:  # as a file plugin: not one of fbench's own
        WORKLOADS.add(_AtHorizon.name, _AtHorizon(),  # (listed by later tests' lists)
                      file_origin(sys.modules[__name__], f"{__name__}:_AtHorizon"))
    got = run_job(make_spec(_AtHorizon.name, "keep_all", 0)).metrics()
    assert got["n_queries"] == 1 and got["recall_at_k"] == 1.0
    with pytest.raises(ValueError, match="yielded an event at t=11, past the horizon 10"):
        run_job(make_spec(_AtHorizon.name, "keep_all", 0, params=[("workload.late", 1)]))
    with pytest.raises(ValueError, match="yielded an event at t=12, past the horizon 10"):
        run_job(make_spec(_AtHorizon.name, "keep_all", 0, params=[("workload.tick", 2)]))


@pytest.mark.slow
def test_a_relative_trace_path_runs_on_the_embedded_ray(tmp_path: Path) -> None:
    """Prevents a trace sweep that works inline but not on Ray (a relative path resolved
    in a worker's own folder, or the file's identity computed differently there): the
    same sweep on the embedded Ray gives the inline sweep's shards, metric for metric."""
    import subprocess
    import sys

    import pyarrow.parquet as pq

    export(tmp_path, "contradiction", 0, 200)
    finals = {}
    for executor in ("inline", "ray"):
        res = subprocess.run(
            [sys.executable, "-m", "runner.cli", "sweep", "--workloads", "trace",
             "--policies", "keep_all,lethe", "--param", "workload.path=t.jsonl", "--seeds",
             "2", "--executor", executor, "--out", executor, "--no-report"],
            cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
        assert res.returncode == 0, res.stderr
        tables = [pq.read_table(p) for p in sorted((tmp_path / executor).rglob("*.parquet"))]
        finals[executor] = sorted(
            deterministic({k: v for k, v in t.to_pylist()[-1].items() if k in METRICS})
            for t in tables)
    assert len(finals["ray"]) == 4 and finals["ray"] == finals["inline"]
