"""Outside plugins: `module:attr` memories from a file, installed entry points (the
example package in examples/fbench-example), `fbench check` on them and on broken
adapters, provenance that follows code, and plugins on every executor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.results.aggregate import aggregate

ROOT = Path(__file__).resolve().parent.parent
FBENCH = [sys.executable, "-m", "runner.cli"]
BROKEN = {"ForeignIds": "given_ids", "ReturnsForgotten": "holds_hits",
          "HoldsAfterDelete": "holds_is_size", "GrowsPastObservations": "size_bounded"}


def fbench(*args: str, cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess started in ``cwd`` (so a file there is "outside")."""
    env = {**(kw.pop("env", None) or os.environ), "COLUMNS": "250"}  # tables unwrapped
    return subprocess.run([*FBENCH, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env, check=False)  # type: ignore[call-overload]


@pytest.fixture
def mymem(tmp_path: Path) -> Path:
    """A folder outside the repository with a memory of its own in ``mymem.py``."""
    source = (ROOT / "tests" / "broken_adapters.py").read_text()
    (tmp_path / "mymem.py").write_text(source + "\n\nRecencyMem = Good\n")
    return tmp_path


def shards(out: Path) -> dict[str, str]:
    """job id -> policy of every shard in OUT/shards."""
    return {p.stem: pq.read_table(p, columns=["policy"]).column(0)[0].as_py()
            for p in out.glob("shards/*/*/*.parquet")}


def test_check_passes_a_good_memory_and_names_each_broken_rule() -> None:
    """Prevents `fbench check` from passing a broken adapter or failing silently: a
    correct memory passes every rule (exit 0); each deliberately broken one fails
    (exit 1) with its rule named and what to fix."""
    runner = CliRunner()
    good = runner.invoke(app, ["check", "tests.broken_adapters:Good"])
    assert good.exit_code == 0, good.output
    assert "9 of 9 rules hold" in good.stdout
    for cls, rule in BROKEN.items():
        res = runner.invoke(app, ["check", f"tests.broken_adapters:{cls}"])
        assert res.exit_code == 1, (cls, res.output)
        assert f"FAIL          {rule}:" in res.stdout, (cls, res.stdout)
        assert "fix: " in res.stdout


def test_check_fails_a_memory_that_leaks_only_after_it_starts_deleting() -> None:
    """Prevents `fbench check` passing a memory that returns what it deleted because its
    streams never made it delete: one that deletes from step 400 on fails holds_hits
    under the default check; under --fast, which never gets there, holds_hits is "not
    exercised" with what to rerun, never "pass"."""
    runner = CliRunner()
    res = runner.invoke(app, ["check", "tests.broken_adapters:ReturnsForgottenLate"])
    assert res.exit_code == 1, res.output
    assert "FAIL          holds_hits:" in res.stdout
    fast = runner.invoke(app, ["check", "tests.broken_adapters:ReturnsForgottenLate",
                               "--fast"])
    assert fast.exit_code == 0, fast.output
    assert "not exercised holds_hits:" in fast.stdout
    assert "rerun without --fast" in fast.stdout
    assert "pass          holds_hits" not in fast.stdout
    assert "forgot nothing on these streams" in fast.stdout
    assert fast.stdout.rstrip().endswith("6 of 9 rules hold, 3 not exercised")


def test_check_says_what_the_memory_did() -> None:
    """Prevents a check that passes a memory whose retrieval is useless: besides the
    rules it prints each stream's length, what the memory forgot by reason and its
    current recall next to keep_all's and a random top-k's, and warns when the memory
    ranks no better than random (it keeps every rule, so it still exits 0)."""
    runner = CliRunner()
    res = runner.invoke(app, ["check", "tests.broken_adapters:RanksAtRandom"])
    assert res.exit_code == 0, res.output
    assert "contradiction: 3,000 turns, 5,666 events (2,667 observations, 333 questions)" \
        in res.stdout
    assert "lifecycle: 365 days" in res.stdout and "capacity" in res.stdout
    assert res.stdout.count("warning: its retrieval looks random") == 2
    good = runner.invoke(app, ["check", "tests.broken_adapters:Good"])
    assert "looks random" not in good.stdout and "keep_all's 0.643" in good.stdout


def test_a_memory_that_cannot_build_runs_no_other_rule() -> None:
    """Prevents "pass" for rules never run, and a hint at the constructor when a system
    library is missing: builds fails with the innermost cause, every other rule is "not
    run"."""
    res = CliRunner().invoke(app, ["check", "tests.broken_adapters:NeedsASystemLibrary"])
    assert res.exit_code == 1, res.output
    assert "fix the build: OSError: libfbenchmissing.so.1" in res.stdout
    assert res.stdout.count("not run ") == 8
    assert res.stdout.rstrip().endswith("0 of 9 rules hold, 1 fail, 8 not run")


def test_check_horizons_must_be_a_multiple() -> None:
    """Prevents a traceback (or a silent default) for a malformed --horizons."""
    res = CliRunner().invoke(app, ["check", "keep_all", "--horizons", "300"])
    assert res.exit_code == 2
    assert "--horizons '300' is not a multiple of the default horizon" in res.output


def test_a_file_plugin_is_listed_with_its_file_and_digest(mymem: Path) -> None:
    """Prevents a plugin whose origin is hidden: `fbench list policies mymem:RecencyMem`
    shows it with its source file's SHA-256."""
    res = fbench("list", "policies", "mymem:RecencyMem", cwd=mymem)
    assert res.returncode == 0, res.stderr
    assert "mymem:RecencyMem" in res.stdout and "sha256:" in res.stdout


def test_an_unknown_plugin_is_one_line(mymem: Path) -> None:
    """Prevents a traceback for a plugin that does not import or does not exist."""
    (mymem / "badmem.py").write_text("import nosuchthing_at_all\n")
    (mymem / "oddmem.py").write_text("Memory = 1 / 0\n")
    for name, needle in (("nosuch:Thing", "cannot import plugin module 'nosuch'"),
                         ("badmem:Thing", "No module named 'nosuchthing_at_all'"),
                         ("oddmem:Memory", "ZeroDivisionError"),
                         ("mymem:Nothing", "has no attribute 'Nothing'"),
                         ("mymem:BROKEN_NOT_THERE", "has no attribute"),
                         ("mymem:Params", "cannot be used")):
        res = fbench("sweep", "--policies", name, "--seeds", "1", "--dry-run", cwd=mymem)
        assert res.returncode == 2, (name, res.stderr)
        assert res.stderr.count("\n") == 1 and needle in res.stderr, res.stderr
        assert "Traceback" not in res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_a_file_plugin_reruns_only_when_its_code_changes(mymem: Path, executor: str) -> None:
    """Prevents stale shards after a plugin's code changed (or reruns when nothing did):
    on either executor, editing the file reruns exactly its jobs, the old shards go to
    OUT/superseded and are not aggregated; editing nothing reruns nothing."""
    grid = ["sweep", "--policies", "mymem:RecencyMem,keep_all", "--workloads", "contradiction",
            "--seeds", "2", "--horizons", "300", "--executor", executor, "--out", "out",
            "--no-report"]
    first = fbench(*grid, cwd=mymem)
    assert first.returncode == 0, first.stderr
    before = shards(mymem / "out")
    assert sorted(before.values()) == ["keep_all", "keep_all", "mymem:RecencyMem",
                                       "mymem:RecencyMem"]
    manifest = json.loads((mymem / "out" / "manifest.json").read_text())
    assert manifest["plugins"]["mymem:RecencyMem"].startswith("mymem@sha256:")

    same = fbench(*grid, cwd=mymem)
    assert "0 run, 4 skipped" in same.stderr, same.stderr

    with (mymem / "mymem.py").open("a") as f:
        f.write("\n# a change\n")
    changed = fbench(*grid, cwd=mymem)
    assert changed.returncode == 0, changed.stderr
    assert "2 run, 2 skipped" in changed.stderr, changed.stderr
    after = shards(mymem / "out")
    assert {j for j, p in after.items() if p == "keep_all"} == \
        {j for j, p in before.items() if p == "keep_all"}
    old = {j for j, p in before.items() if p != "keep_all"}
    new = {j for j, p in after.items() if p != "keep_all"}
    assert len(new) == 2 and not old & new
    assert {p.stem for p in (mymem / "out" / "superseded").rglob("*.parquet")} == old
    summary = aggregate(mymem / "out").to_pylist()
    assert sorted((r["policy"], r["n"]) for r in summary if r["metric"] == "recall_at_k") == \
        [("keep_all", 2), ("mymem:RecencyMem", 2)]  # the superseded seeds are not counted


@pytest.mark.example
def test_the_example_package_passes_check_sweeps_and_reports(tmp_path: Path) -> None:
    """Prevents the entry-point path from breaking for an outside package: its memory
    passes `fbench check`, is listed with its distribution and version, and a sweep of it
    on its own workload and on fbench's runs inline, aggregates and reports."""
    listed = fbench("list", "policies", cwd=tmp_path)
    assert "recency" in listed.stdout and "fbench-example 0.1.0" in listed.stdout
    check = fbench("check", "recency", "--param", "policy.capacity=50", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    sweep = fbench("sweep", "--policies", "recency,keep_all", "--workloads",
                   "example.moves,contradiction", "--seeds", "2", "--horizons", "1x",
                   "--executor", "inline", "--out", "ex", cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    assert "8 run" in sweep.stderr
    spec = json.loads(pq.read_table(next((tmp_path / "ex").glob(
        "shards/workload=example.moves/policy=recency/*.parquet")), columns=["spec"])
        .column(0)[0].as_py())
    assert spec["code"] == {"memory": "fbench-example==0.1.0",
                            "workload": "fbench-example==0.1.0"}
    report = (tmp_path / "ex" / "RESULTS.md").read_text()
    assert "recency" in report and "example.moves" in report


@pytest.mark.cluster
@pytest.mark.example
def test_plugins_run_on_a_two_node_cluster(mymem: Path) -> None:
    """Prevents plugins that work only on the driver: a file plugin (shipped to the
    workers as py_modules) and the installed example's memory run on both nodes of a
    real loopback cluster, equal to inline."""
    from tests.ray_cluster_util import start_two_node_cluster

    policies = "mymem:RecencyMem,keep_all,recency"
    grid = ["sweep", "--policies", policies, "--workloads", "contradiction", "--seeds", "3",
            "--horizons", "600", "--no-report"]
    inline = fbench(*grid, "--executor", "inline", "--out", "inline", cwd=mymem)
    assert inline.returncode == 0, inline.stderr
    with start_two_node_cluster() as cluster:
        res = fbench(*grid, "--address", cluster.address, "--out", "cluster", cwd=mymem,
                     env=cluster.env)
    assert res.returncode == 0, res.stderr[-3000:]
    tables = {p.stem: pq.read_table(p) for p in (mymem / "cluster").glob("shards/*/*/*.parquet")}
    assert len({t.column("node")[0].as_py() for t in tables.values()}) == 2
    for p in (mymem / "inline").glob("shards/*/*/*.parquet"):
        ref = pq.read_table(p).drop_columns(["node", "wall_s", "query_ms_mean", "query_ms_p95"])
        got = tables[p.stem].drop_columns(["node", "wall_s", "query_ms_mean", "query_ms_p95"])
        differing = [c for c in ref.column_names  # JSON: NaN equals NaN
                     if json.dumps(ref.column(c).to_pylist()) != json.dumps(
                         got.column(c).to_pylist())]
        assert differing == [], (p.stem, differing)
    shutil.rmtree(mymem / "cluster")


@pytest.mark.slow
def test_a_plugin_no_worker_can_import_stops_the_sweep_in_one_line(tmp_path: Path) -> None:
    """Prevents a plugin missing on the workers from costing 3 runs and a traceback per
    job: the sweep stops at the first such job, with one line naming the plugin and the
    fix, exit 2."""
    (tmp_path / "refuses.py").write_text(
        "from pathlib import Path\n"
        "if any(a.startswith('ray::') for a in "
        "Path('/proc/self/cmdline').read_text().split('\\0')):\n"
        "    raise ImportError('not installed on this worker')\n"
        "from tests.broken_adapters import Good\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = fbench("sweep", "--policies", "refuses:Good", "--workloads", "contradiction",
                 "--seeds", "2", "--horizons", "200", "--executor", "ray", "--out", "o",
                 "--no-report", cwd=tmp_path, env=env)
    assert res.returncode == 2, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in res.stderr
    assert "plugin module 'refuses'" in errors[0] and "install it there" in errors[0]
    assert "on node " in errors[0]
    assert not list((tmp_path / "o").glob("shards/*/*/*.parquet"))


@pytest.mark.incumbents
def test_a_plugin_declares_its_library_and_its_forgetting_rule() -> None:
    """Prevents a plugin memory losing what the incumbents' own adapters can declare:
    the distributions it drives (their versions go into every shard) and its rule in
    words (the report's incumbents table), through the same MemoryFactory path."""
    from runner.adapters.base import as_memory
    from runner.job.provenance import versions
    from runner.spec.resolve import make_spec
    from runner.sweep.memories import describe, memory_libraries

    source = (ROOT / "tests" / "broken_adapters.py").read_text()
    scope: dict[str, object] = {}
    exec(compile(source, "broken_adapters.py", "exec"), scope)
    good = scope["Good"]
    declared = type("Declared", (good,), {"library": ("numpy",), "family": "incumbent",
                                          "forgetting": "drops the oldest"})
    kind = as_memory(declared, "declared")
    assert kind.library == ("numpy",) and kind.family == "incumbent"
    assert kind.forgets(kind.Params()) == "drops the oldest"
    assert as_memory(good, "plain").library == () and as_memory(good, "plain").forgets(None) == ""
    jobs = [make_spec("contradiction", p, 0, horizon=50, params=params) for p, params in (
        ("mem0", [("expire_days", 7.0)]), ("yantrikdb", []), ("keep_all", []))]
    assert memory_libraries(jobs) == ("mem0ai", "qdrant-client", "yantrikdb")
    assert versions(memory_libraries(jobs))["yantrikdb"] == metadata.version("yantrikdb")
    assert describe(jobs[:1]) == {"mem0": {"family": "incumbent",
                                           "library": ["mem0ai", "qdrant-client"], "rules": {
        '{"policy.expire_days": 7.0}': "expiration_date 7 days after capture"}}}
