"""README.md stays true: its fbench examples run, and it defines every metric."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.metrics import CATEGORIES, METRICS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def fbench_examples() -> list[str]:
    out = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            cmd = line.split("#")[0].strip()
            for part in cmd.split("&&"):
                part = part.strip()
                # (the "Benchmark your own memory" block runs whole, in its own test)
                if part.startswith("fbench ") and " train" not in part and "mymem" not in part:
                    out.append(part)
    return out


ROOT = Path(__file__).resolve().parent.parent


def runnable(cmd: str) -> list[str]:
    """The example's argv; sweeps are checked end to end with --dry-run (no Ray needed),
    repository files named by absolute path."""
    argv = [str(ROOT / a) if (ROOT / a).is_file() else a for a in shlex.split(cmd)[1:]]
    return [*argv, "--dry-run"] if argv[0] == "sweep" else argv


# aggregate, report and compact need a sweep's folder (tests/test_compact.py runs the
# compact examples on one).
@pytest.mark.parametrize(
    "cmd",
    [c for c in fbench_examples()
     if not c.startswith(("fbench aggregate", "fbench report", "fbench compact"))
     and "--address" not in c and "s3://" not in c],  # (s3: tests/test_object_store.py)
)
def test_readme_example_runs(cmd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents README examples that no longer work (renamed flags, policies, params)."""
    monkeypatch.chdir(tmp_path)  # relative --out folders land here, not in the checkout
    result = CliRunner().invoke(app, runnable(cmd))
    assert result.exit_code == 0, result.output


def test_readme_defines_every_metric() -> None:
    """Prevents a metric that README does not define (or a README naming a dead metric)."""
    base = {n for n in METRICS if not any(n.endswith(f"_{c}") for c in CATEGORIES)
            or n.startswith("extract_link")}
    for name in base:
        assert f"`{name}`" in README, name
    section = README.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    for name in re.findall(r"^\| `([a-z0-9_]+)` \|", section, flags=re.M):
        assert name in METRICS, name


def test_readme_names_the_test_command_ci_runs() -> None:
    """Prevents CI and README disagreeing on how the tests are run."""
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "make install && make test" in README
    assert "\nmake test\n" in ci


def own_memory_section() -> tuple[str, str]:
    """The "Benchmark your own memory" section, and the shell script of its code block."""
    section = README.split("## Benchmark your own memory", 1)[1].split("\n## ", 1)[0]
    script = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(script) == 1
    return section, script[0]


def test_own_memory_section_is_short() -> None:
    """Prevents the plugin quick start from growing past what a reader takes in at once
    (at most 25 lines, heading included)."""
    section, _ = own_memory_section()
    assert len(("## Benchmark your own memory" + section).strip().splitlines()) <= 25


@pytest.mark.slow
def test_own_memory_section_works_in_a_fresh_folder(tmp_path: Path) -> None:
    """Prevents the README's plugin quick start from rotting: pasted into an empty folder,
    it checks the memory (every rule holds) and sweeps it next to keep_all; editing the
    file and rerunning reruns only its jobs."""
    _, script = own_memory_section()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "mymem:RecencyMem: 9 of 9 rules hold" in res.stdout
    assert "10 jobs: 10 run" in res.stderr
    assert (tmp_path / "mine" / "RESULTS.md").is_file()
    with (tmp_path / "mymem.py").open("a") as f:
        f.write("# edited\n")
    sweep = next(line for line in script.splitlines() if line.startswith("fbench sweep"))
    again = subprocess.run(["bash", "-c", sweep], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
    assert "10 jobs: 5 run, 5 skipped" in again.stderr, again.stderr


def readers_section() -> list[str]:
    section = README.split("## Reading results elsewhere", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_reading_results_with_pandas_polars_and_duckdb(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents README's pandas, polars and duckdb snippets from rotting (a renamed column,
    hive partitions read with clashing types): each runs on a real sweep's folder and
    prints the sweep's policies."""
    blocks = readers_section()
    assert [("pandas" in b, "polars" in b, "duckdb" in b) for b in blocks] == [
        (True, False, False), (False, True, False), (False, False, True)]
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["sweep", "--policies", "keep_all,last_write_wins",
                                   "--workloads", "contradiction", "--seeds", "2", "--horizons",
                                   "150", "--executor", "inline", "--out", "tour", "--no-report"])
    assert res.exit_code == 0, res.output
    from runner.results.aggregate import aggregate

    aggregate(tmp_path / "tour")
    for block in blocks:
        out = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stderr
        assert "keep_all" in out.stdout and "last_write_wins" in out.stdout, out.stdout


def test_readme_share_of_hard_updates_found_is_computed() -> None:
    """Prevents README's "finds the hard-updated value in N% of those queries" from being a
    typed-in number: the share is recomputed (seeds 0–2, oracle extractor,
    last_write_wins on contradiction.retrievable: its current recall on hard-updated
    slots), and on the seed's own stream it is 0."""
    import numpy as np

    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    m = re.search(r"finds the hard-updated value in (\d+)% of\s+those queries here "
                  r"\(seeds 0–2\) and never on the seed's stream", README)
    assert m is not None
    oracle = [("store.extractor", "oracle")]
    share = np.mean([run_job(make_spec("contradiction.retrievable", "last_write_wins", s,
                                       params=oracle)).final["recall_current_at_k_hard"]
                     for s in range(3)])
    assert round(100 * share) == int(m.group(1))
    seed_stream = run_job(make_spec("contradiction", "last_write_wins", 0, params=oracle))
    assert seed_stream.final["recall_current_at_k_hard"] == 0.0


# README's incumbent numbers, each tied to the summary cell it quotes (incumbents/, the
# committed summary of sweeps/incumbents.toml): (quoted text, workload, policy, params,
# metric). A regenerated summary that moves a number fails here until README follows.
E_MINI = {"store.embedder": "minilm"}
P_MINI = {"policy.embedder": "minilm"}
SQLITE = {"policy.backend": "sqlite"}
TTL7, TTL30 = {"policy.ttl_days": 7.0}, {"policy.ttl_days": 30.0}
INCUMBENT_QUOTES = [
    ("contradiction 0.076", "contradiction", "lethe_agent", {}, "contradiction_rate"),
    ("recall 0.240", "contradiction", "lethe_agent", {}, "recall_at_k"),
    ("false-forget 0.471", "contradiction", "lethe_agent", {}, "false_forget_rate"),
    ("holding 2,069 entries", "contradiction", "lethe_agent", {}, "final_size"),
    ("it has recall 0.488", "lifecycle", "lethe_agent", {}, "recall_at_k"),
    ("false-forget 0.271", "lifecycle", "lethe_agent", {}, "false_forget_rate"),
    ("at 1,665 entries", "lifecycle", "lethe_agent", {}, "final_size"),
    ("`lethe` at 0.764", "lifecycle", "lethe", {}, "recall_at_k"),
    ("0.142 /", "lifecycle", "lethe", {}, "false_forget_rate"),
    ("202 entries", "lifecycle", "lethe", {}, "final_size"),
    ("recall 0.202", "contradiction", "lethe_agent", {"policy.retention": "fifo"},
     "recall_at_k"),
    ("/ 0.379", "lifecycle", "lethe_agent", {"policy.retention": "fifo"},
     "recall_at_k"),
    ("contradiction 0.874", "contradiction", "mem0", {}, "contradiction_rate"),
    ("recall 0.867", "contradiction", "mem0", {}, "recall_at_k"),
    ("0.651 /", "lifecycle", "mem0", {}, "contradiction_rate"),
    ("/ 0.852", "lifecycle", "mem0", {}, "recall_at_k"),
    ("(2,645 and", "contradiction", "mem0", {}, "final_size"),
    ("and 2,372 entries", "lifecycle", "mem0", {}, "final_size"),
    ("keeps 7 entries", "contradiction", "mem0", {"policy.expire_days": 7.0}, "final_size"),
    ("false-forget 0.981", "contradiction", "mem0", {"policy.expire_days": 7.0},
     "false_forget_rate"),
    ("all 2,645 entries at", "contradiction", "langgraph_store", SQLITE, "final_size"),
    ("contradiction 0.861", "contradiction", "langgraph_store", SQLITE, "contradiction_rate"),
    ("falls to 0.001", "contradiction", "langgraph_store", SQLITE | TTL7,
     "contradiction_rate"),
    ("recall to 0.038", "contradiction", "langgraph_store", SQLITE | TTL7, "recall_at_k"),
    ("false-forget 0.962", "contradiction", "langgraph_store", SQLITE | TTL7,
     "false_forget_rate"),
    ("holds 340 entries", "lifecycle", "langgraph_store", SQLITE | TTL30, "final_size"),
    ("false-forget 0.170", "lifecycle", "langgraph_store", SQLITE | TTL30,
     "false_forget_rate"),
    ("keeps all 2,372 entries", "lifecycle", "yantrikdb", {}, "final_size"),
    ("recall is 0.970", "lifecycle", "yantrikdb", P_MINI, "recall_at_k"),
    ("(keep_all's 0.887)", "lifecycle", "keep_all", E_MINI, "recall_at_k"),
    ("contradiction 0.669.", "lifecycle", "yantrikdb", P_MINI, "contradiction_rate"),
    ("contradiction 0.319", "contradiction", "ebbinghaus", {}, "contradiction_rate"),
    ("recall 0.669", "contradiction", "ebbinghaus", {}, "recall_at_k"),
    ("to 0.552", "contradiction", "ebbinghaus", E_MINI, "contradiction_rate"),
    ("/ 0.931", "contradiction", "ebbinghaus", E_MINI, "recall_at_k"),
    ("(1,361 entries", "contradiction", "ebbinghaus", {}, "final_size"),
    ("keep_all's 2,645", "contradiction", "keep_all", {}, "final_size"),
    ("(0.774", "lifecycle", "keep_all", {}, "recall_at_k"),
    ("to 0.887", "lifecycle", "keep_all", E_MINI, "recall_at_k"),
]


# (the same, from incumbents-bounded/, the committed summary of sweeps/incumbents-bounded.toml)
FIFO60 = {"policy.capacity": 60, "policy.retention": "fifo"}
EVICT60 = {"policy.max_active": 60}
BOUNDED_QUOTES = [
    ("FIFO is at contradiction 0.011", "contradiction", "lethe_agent", FIFO60,
     "contradiction_rate"),
    ("current recall 0.131", "contradiction", "lethe_agent", FIFO60, "recall_current_at_k"),
    ("false-forget 0.810", "contradiction", "lethe_agent", FIFO60, "false_forget_rate"),
    ("entries (61)", "contradiction", "yantrikdb", EVICT60, "final_size"),
    ("contradiction 0.439", "contradiction", "yantrikdb", EVICT60, "contradiction_rate"),
    ("current recall 0.130", "contradiction", "yantrikdb", EVICT60, "recall_current_at_k"),
    ("false-forget 0.845", "contradiction", "yantrikdb", EVICT60, "false_forget_rate"),
    ("is 0.361 and", "lifecycle", "lethe_agent", FIFO60, "recall_current_at_k"),
    ("and 0.387.", "lifecycle", "yantrikdb", EVICT60, "recall_current_at_k"),
]


@pytest.mark.parametrize("quote, workload, policy, params, metric, folder",
                         [(*q, "incumbents") for q in INCUMBENT_QUOTES]
                         + [(*q, "incumbents-bounded") for q in BOUNDED_QUOTES])
def test_readme_incumbent_numbers_are_the_committed_summary(
        quote: str, workload: str, policy: str, params: dict[str, object], metric: str,
        folder: str) -> None:
    """Prevents a number README quotes from RESULTS.md (the incumbents' sections) from
    being typed in or going stale: each equals its cell's mean in its sweep's committed
    summary.parquet, to the digits shown (the first number of the quoted text)."""
    import json

    import pyarrow.parquet as pq

    assert quote in " ".join(README.split()), quote
    shown = re.findall(r"\d[\d,]*(?:\.\d+)?", quote)[0]
    rows = [r for r in pq.read_table(ROOT / "published" / folder / "summary.parquet").to_pylist()
            if (r["workload"], r["policy"], r["metric"]) == (workload, policy, metric)
            and json.loads(r["params"]) == params]
    assert len(rows) == 1, (quote, len(rows))
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    assert f"{rows[0]['mean']:,.{decimals}f}" == shown, (quote, rows[0]["mean"])


def test_readme_timing_is_the_benchmarks() -> None:
    """Prevents a stale timing claim: README's sentence on how long its first command
    takes is the one benchmarks/bench_sweep.py makes from its last figures."""
    import json

    from benchmarks.bench_sweep import readme_sentence

    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    assert readme_sentence(results["sweep"]["result"]) in " ".join(README.split())


def test_readme_driver_scale_is_the_benchmarks() -> None:
    """Prevents a stale scale claim: README's sentence on how far one driver goes is the
    one benchmarks/bench_driver.py makes from its last figures."""
    import json

    from benchmarks.bench_driver import readme_sentence

    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    assert readme_sentence(results["driver"]["result"]) in " ".join(README.split())
