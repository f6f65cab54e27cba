"""The report's incumbents table: each library cell with its recorded version, its
forgetting rule, and its regret against the oracle at the smallest swept budget that
holds it (runner/report/incumbents.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from runner.analysis import stats
from runner.report.incumbents import oracle_budget
from runner.spec.jobspec import JobSpec


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lead") / "o"
    res = subprocess.run(
        [sys.executable, "-m", "runner.cli", "sweep", "--workloads", "contradiction",
         "--horizons", "300", "--policies", "lethe_agent,oracle,keep_all", "--param",
         "lethe_agent.retention=fifo", "--param", "lethe_agent.capacity=20", "--param",
         "oracle.capacity=0,15,30", "--seeds", "3", "--executor", "inline", "--out", str(out)],
        capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    return out


def finals(out: Path, policy: str, params: dict[str, object]) -> dict[int, dict]:
    rows = [pq.read_table(p).to_pylist()[-1] for p in out.rglob("*.parquet")
            if "shards" in p.parts]
    return {r["seed"]: r for r in rows
            if r["policy"] == policy and json.loads(r["params"]) == params}


def test_budget_is_the_smallest_that_holds_the_cell() -> None:
    """Prevents pairing a library with an oracle given less memory than it used (a
    regret that flatters the library) or more than the smallest that holds it."""
    assert oracle_budget(21.0, [0, 15, 30, 60]) == 30
    assert oracle_budget(15.0, [0, 15, 30, 60]) == 15
    assert oracle_budget(61.0, [0, 15, 30, 60]) == 0
    assert oracle_budget(3.0, [0]) == 0


@pytest.mark.incumbents
def test_the_table_leads_with_each_library_cell(sweep: Path) -> None:
    """Prevents a lead table whose numbers are not the shards': the library's row gives
    the version its shards record, its rule, its mean size, the oracle budget that holds
    it and the paired regret (oracle@30 minus lethe-agent, per seed) with its 95% t
    half-width, all recomputed here from the shards."""
    text = (sweep / "RESULTS.md").read_text()
    assert text.index("## The libraries against the oracle") < text.index("## Findings")
    lib = finals(sweep, "lethe_agent", {"policy.capacity": 20, "policy.retention": "fifo"})
    best = finals(sweep, "oracle", {"policy.capacity": 30})
    assert sorted(lib) == sorted(best) == [0, 1, 2]
    d = np.array([best[s]["recall_current_at_k"] - lib[s]["recall_current_at_k"]
                  for s in sorted(lib)])
    lo, hi = stats.interval(d, (-1.0, 1.0))  # a rate's delta: the betting interval
    sizes = np.array([lib[s]["final_size"] for s in sorted(lib)], dtype=float)
    assert 15 < sizes.mean() <= 30
    version = metadata.version("lethe-agent")
    section = text[text.index("## The libraries against the oracle"):]
    row = next(line for line in section.splitlines() if line.startswith("| lethe_agent "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["lethe_agent capacity=20, retention=fifo", f"lethe-agent {version}",
                         "fifo retention, capacity 20"]
    assert cells[6].startswith(f"{sizes.mean():.1f} [")
    assert cells[6].endswith(" †")  # a size's t interval of 3 seeds: too few to inform
    assert cells[7:] == ["30 (hashing)", f"{d.mean():.3f} [{lo:.3f}, {hi:.3f}] †"]
    assert all(json.loads(r["versions"])["lethe-agent"] == version for r in lib.values())


@pytest.mark.incumbents
def test_an_included_sweeps_libraries_say_what_they_are_beside_the_board(
        sweep: Path, tmp_path: Path) -> None:
    """Prevents a report that gives a library's numbers twice, on the board it leads with
    and again in an included sweep's table: included, the sweep's libraries table says
    what each cell is (version, rule) and where its numbers are, and the board holds
    its row."""
    from runner.report.markdown import write_report

    main = tmp_path / "main"
    res = subprocess.run(
        [sys.executable, "-m", "runner.cli", "sweep", "--workloads", "contradiction",
         "--horizons", "300", "--policies", "keep_all", "--seeds", "3", "--executor",
         "inline", "--out", str(main), "--no-report", "--quiet"],
        capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    text = write_report(main, tmp_path / "R.md", include=[sweep]).read_text()
    board = text[text.index("## The board"):text.index("## What ran")]
    assert "| lethe_agent capacity=20, retention=fifo | " in board
    section = text[text.index("## Included sweep"):]
    assert "## The libraries against the oracle" not in section
    assert "### The libraries as they ran" in section
    version = metadata.version("lethe-agent")
    assert (f"| lethe_agent capacity=20, retention=fifo | lethe-agent {version} | "
            "fifo retention, capacity 20 |") in section


def test_no_table_without_a_library(tmp_path: Path) -> None:
    """Prevents an empty incumbents heading in a sweep of fbench's own policies."""
    out = tmp_path / "o"
    res = subprocess.run(
        [sys.executable, "-m", "runner.cli", "sweep", "--workloads", "contradiction",
         "--horizons", "200", "--policies", "oracle,keep_all", "--seeds", "2",
         "--executor", "inline", "--out", str(out)],
        capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    assert "libraries against the oracle" not in (out / "RESULTS.md").read_text()


@pytest.mark.incumbents
def test_a_library_without_the_oracle_says_why_it_has_no_row(tmp_path: Path) -> None:
    """Prevents the libraries' table silently missing when the sweep ran no oracle: the
    report says so, and how to get the row."""
    out = tmp_path / "o"
    res = subprocess.run(
        [sys.executable, "-m", "runner.cli", "sweep", "--workloads", "contradiction",
         "--horizons", "200", "--policies", "lethe_agent,keep_all", "--param",
         "lethe_agent.retention=fifo", "--seeds", "2", "--executor", "inline", "--out",
         str(out)], capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    text = (out / "RESULTS.md").read_text()
    assert "## The libraries against the oracle" in text
    assert ("Not shown for contradiction, horizon 200 turns, k = 5: this sweep ran no "
            "`oracle` there") in text and "`fbench board OUT`" in text


@pytest.mark.incumbents
def test_a_rerun_with_another_grid_keeps_what_memories_json_held(tmp_path: Path) -> None:
    """Prevents a later sweep into the same folder erasing the rules of the cells an
    earlier grid ran (the report would lose their rows' rule): memories.json adds."""
    from runner.spec.resolve import make_spec
    from runner.sweep.memories import record_memories

    def job(retention: str) -> JobSpec:
        return make_spec("contradiction", "lethe_agent", 0, horizon=50,
                         params=[("retention", retention)])

    record_memories(tmp_path, [job("fifo")])
    record_memories(tmp_path, [job("lru")])
    held = json.loads((tmp_path / "memories.json").read_text())["memories"]["lethe_agent"]
    assert held["family"] == "incumbent" and held["library"] == ["lethe-agent"]
    assert held["rules"] == {'{"policy.retention": "fifo"}': "fifo retention, capacity 100",
                             '{"policy.retention": "lru"}': "lru retention, capacity 100"}


BOTH = {"hashing", "minilm"}


@pytest.mark.incumbents
@pytest.mark.statebench
@pytest.mark.parametrize(("name", "n_jobs", "policies", "embedders"), [
    ("incumbents", 1980, {"lethe_agent", "mem0", "langgraph_store", "yantrikdb",
                          "lethe", "ebbinghaus", "keep_all", "oracle"}, BOTH),
    ("incumbents-bounded", 1560, {"lethe_agent", "yantrikdb", "keep_all", "oracle"}, BOTH),
    ("incumbents-more", 1320, {"inspeximus", "memware", "cognitive_memory", "dory",
                               "isotope_zero", "lethe", "ebbinghaus", "keep_all", "oracle"},
     {"hashing"})])
def test_the_incumbent_sweeps_are_the_grids_the_docs_describe(
        name: str, n_jobs: int, policies: set[str], embedders: set[str]) -> None:
    """Prevents the committed incumbents configs drifting from the Incumbents page (the job
    counts it quotes) and from the issue's grid: 20 seeds, three workloads, the oracle at every
    budget sweeps/frontier.toml uses, at the embedders its libraries rank with."""
    from runner.sweep.config import build_spec, load_config
    from runner.sweep.expand import expand

    root = Path(__file__).resolve().parent.parent
    config = load_config(root / "sweeps" / f"{name}.toml")
    spec = build_spec(config, {})
    jobs = expand(spec)
    page = (root / "docs" / "incumbents.md").read_text()
    assert len(jobs) == n_jobs and f"{n_jobs:,} jobs" in page
    assert config["out"] == f"published/{name}" and len(spec.seeds) == 20
    assert {j.policy for j in jobs} == policies
    assert {j.workload for j in jobs} == {"contradiction", "lifecycle", "statebench"}
    frontier = dict(build_spec(load_config(root / "sweeps" / "frontier.toml"), {}).params)
    budgets = {dict(j.params).get("policy.capacity", 0) for j in jobs if j.policy == "oracle"}
    assert budgets == set(frontier["store.budget"])
    assert {dict(j.params).get("store.embedder", "hashing") for j in jobs
            if j.policy == "oracle"} == embedders
