"""``fbench sweep --samples`` and ``fbench explain``: the evidence a sweep keeps, and the
story told from it or from a job run here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.analysis.explain import against, failed
from runner.cli import app
from runner.results.samples import DELETIONS_FILE, QUERIES_FILE, SAMPLES
from tests.test_samples import _same

SWEEP = ["sweep", "--workloads", "contradiction,lifecycle", "--policies",
         "keep_all,lethe", "--seeds", "2", "--horizons", "0.1x", "--no-report", "--quiet"]


def _invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def _samples(out: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted((out / SAMPLES).rglob("*.parquet"))}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explain") / "out"
    code, _, err = _invoke(*SWEEP, "--executor", "inline", "--samples", "--out", str(out))
    assert code == 0, err
    return out


def test_a_sweep_with_samples_keeps_both_tables_of_every_job(swept: Path) -> None:
    """Prevents a job without its evidence: every shard has its queries and deletions
    tables beside it, in the partition folder of its workload and policy."""
    shards = sorted((swept / "shards").rglob("*.parquet"))
    files = _samples(swept)
    assert len(shards) == 8 and len(files) == 16
    for shard in shards:
        folder = swept / SAMPLES / shard.parent.relative_to(swept / "shards")
        for kind in (QUERIES_FILE, DELETIONS_FILE):
            assert (folder / f"{shard.stem}.{kind}").is_file()


def test_resume_with_samples_reruns_only_the_jobs_lacking_them(swept: Path,
                                                              tmp_path: Path) -> None:
    """Prevents a resumed ``--samples`` sweep that skips jobs whose evidence is missing
    (or reruns those that have it), and evidence that changes between runs."""
    out = tmp_path / "out"
    shutil.copytree(swept, out)
    gone = sorted((out / SAMPLES).rglob(f"*.{QUERIES_FILE}"))[0]
    gone.unlink()
    code, _, err = _invoke(*SWEEP, "--executor", "inline", "--samples", "--out", str(out))
    assert code == 0 and "1 run, 7 skipped" in err, err
    assert pq.read_table(gone).equals(pq.read_table(swept / gone.relative_to(out)))
    code, _, err = _invoke(*SWEEP, "--executor", "inline", "--out", str(out))
    assert code == 0 and "0 run, 8 skipped" in err, err


def test_explain_from_a_sweep_tells_the_jobs_story(swept: Path) -> None:
    """Prevents a story that does not match the job: ``--json`` gives the job's final
    metrics, its failed questions' count from its queries table, deletions by reason
    that add up to ``n_forgotten``, and ``--against`` splits the questions exactly."""
    code, out, err = _invoke("explain", str(swept), "--policy", "lethe", "--workload",
                             "lifecycle", "--seed", "1", "--against", "keep_all", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["job"]["policy"], doc["job"]["seed"]) == ("lethe", 1)
    files = _samples(swept)
    queries = pq.read_table(files[f"{doc['job']['job_id']}.{QUERIES_FILE}"])
    assert doc["queries"] == queries.num_rows and doc["failed"] == int(failed(queries).sum())
    removed = sum(c["removed"] for c in doc["deleted_by_reason"].values())
    assert removed == doc["metrics"]["n_forgotten"] > 0
    assert sum(sum(s["removed"].values()) for s in doc["deleted_over_time"]) == removed
    other = pq.read_table(files[f"{doc['against']['job']['job_id']}.{QUERIES_FILE}"])
    vs = against(queries, other)
    assert (doc["against"]["only_this_fails_count"], doc["against"]["only_other_fails_count"],
            doc["against"]["both_fail"], doc["against"]["neither_fails"]) == (
        len(vs.only_first_fails), len(vs.only_second_fails), vs.both_fail, vs.neither_fails)
    assert sum((len(vs.only_first_fails), len(vs.only_second_fails), vs.both_fail,
                vs.neither_fails)) == queries.num_rows
    code, text, err = _invoke("explain", str(swept), "--policy", "lethe", "--workload",
                              "lifecycle", "--seed", "1")
    assert code == 0 and "worst queries" in text and "deleted, by reason" in text, err


def test_explain_here_equals_explain_from_the_sweep(swept: Path) -> None:
    """Prevents two stories of one job: run here with the sweep's coordinates, the job
    gives the same JSON as its samples in OUT (timings aside)."""
    args = ["--policy", "lethe", "--workload", "contradiction", "--seed", "0", "--json"]
    code, there, err = _invoke("explain", str(swept), *args)
    assert code == 0, err
    horizon = json.loads(there)["job"]["horizon"]
    code, here, err = _invoke("explain", *args, "--horizon", str(horizon))
    assert code == 0, err
    a, b = json.loads(there), json.loads(here)
    for doc in (a, b):
        doc["metrics"] = {k: v for k, v in doc["metrics"].items()}
    assert a["job"] == b["job"] and a["worst_queries"] == b["worst_queries"]
    assert a["deleted_by_reason"] == b["deleted_by_reason"]
    assert all(_same(a["metrics"][k], b["metrics"][k]) for k in a["metrics"])


@pytest.mark.parametrize(("args", "needle"), [
    (["--policy", "nope"], "no policy 'nope'"),
    (["--policy", "lethe", "--seed", "9"], "no seed 9"),
    (["--policy", "lethe"], "several workload values"),
    (["--policy", "lethe", "--workload", "nope"], "no workload nope"),
    (["--policy", "lethe", "--workload", "lifecycle", "--top", "0"], "--top must be"),
    ([], "give --policy"),
])
def test_explain_refuses_bad_input_in_one_line(swept: Path, args: list[str],
                                               needle: str) -> None:
    """Prevents a traceback or a guess on bad input: one line naming the problem and the
    fix, exit 2."""
    code, _, err = _invoke("explain", str(swept), *args)
    assert code == 2 and needle in err and err.count("\n") == 1, err


def test_explain_on_a_sweep_without_samples_says_what_to_run(tmp_path: Path) -> None:
    """Prevents a silent empty story: a sweep run without ``--samples`` gets one line
    saying to rerun it with them, exit 2."""
    out = tmp_path / "out"
    code, _, err = _invoke("sweep", "--workloads", "contradiction", "--policies", "lru",
                           "--seeds", "1", "--horizons", "300", "--no-report", "--quiet",
                           "--executor", "inline", "--out", str(out))
    assert code == 0, err
    code, _, err = _invoke("explain", str(out), "--policy", "lru")
    assert code == 2 and "--samples" in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_samples_are_the_same_inline_and_on_ray(swept: Path, tmp_path: Path,
                                                ray_local: None) -> None:
    """Prevents evidence that depends on where a job ran: the embedded Ray's workers write
    the same tables, byte for byte in content, as the inline executor."""
    out = tmp_path / "ray"
    code, _, err = _invoke(*SWEEP, "--executor", "ray", "--samples", "--out", str(out))
    assert code == 0, err
    inline, ray = _samples(swept), _samples(out)
    assert sorted(inline) == sorted(ray)
    for name, path in inline.items():
        assert pq.read_table(ray[name]).equals(pq.read_table(path), check_metadata=True), name


def _story(workload: str) -> dict[str, Any]:
    code, out, err = _invoke("explain", "--workload", workload, "--policy", "lethe",
                             "--seed", "0", "--against", "keep_all", "--json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.mark.slow
def test_the_worked_example_quotes_what_explain_says() -> None:
    """Prevents docs/explain.md's worked example from drifting from what ``fbench
    explain`` prints: each figure it quotes, on both workloads, is recomputed here."""
    from memcore.policies.lethe import LetheParams

    text = " ".join((Path(__file__).parent.parent / "docs" / "explain.md").read_text().split())
    c, life = _story("contradiction"), _story("lifecycle")
    cold, merged = (c["deleted_by_reason"][r] for r in ("cold", "merged"))
    vs = c["against"]
    first = c["false_forgets"][0]
    for quote in (
        f"false-forget rate is {c['metrics']['false_forget_rate']:.3f}",
        f"It removed {cold['removed']} entries as `cold`, {cold['still_current']} of them",
        f"go {first['age']} turns after",
        f"half-life is {LetheParams().half_life:.0f} days",
        f"{vs['only_this_fails_count']} questions fail only with lethe, "
        f"{vs['only_other_fails_count']} only with keep_all, {vs['both_fail']} with both",
    ):
        assert quote in text, quote
    assert merged["still_current"] == 0
    cold, merged = (life["deleted_by_reason"][r] for r in ("cold", "merged"))
    vs = life["against"]
    for quote in (
        f"lethe removed {cold['removed']} entries as `cold` ({cold['still_current']} of "
        f"them current) and merged {merged['removed']}",
        f"{vs['only_this_fails_count']} questions fail only with lethe and "
        f"{vs['only_other_fails_count']} only with keep_all",
    ):
        assert quote in text, quote
    assert vs["only_this_fails_count"] < vs["only_other_fails_count"]
    worst = life["worst_queries"][:2]
    assert [w["stale_above"] for w in worst] == [5, 5]
    assert "oncall" in worst[0]["text"] and "wifi" in worst[1]["text"]
    assert all(w["category"] == "recent" for w in worst)


def test_a_sweep_config_takes_samples_as_true_or_false(tmp_path: Path) -> None:
    """Prevents a config's ``samples`` being refused as an unknown key, or a string such
    as "yes" read as true: true records samples, anything but a boolean is one line."""
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    base = 'workloads = ["contradiction"]\npolicies = ["lru"]\nseeds = 1\nhorizons = [300]\n'
    good.write_text(base + "samples = true\n")
    bad.write_text(base + 'samples = "yes"\n')
    out = tmp_path / "out"
    code, _, err = _invoke("sweep", "--config", str(good), "--executor", "inline",
                           "--no-report", "--quiet", "--out", str(out))
    assert code == 0 and len(_samples(out)) == 2, err
    code, _, err = _invoke("sweep", "--config", str(bad), "--out", str(tmp_path / "o2"))
    assert code == 2 and "samples must be true or false" in err and err.count("\n") == 1


def test_the_cost_quoted_is_the_benchmarks() -> None:
    """Prevents docs/explain.md quoting a cost of ``--samples`` that the benchmark did not
    measure (``benchmarks/results.json``, part ``samples``)."""
    root = Path(__file__).parent.parent
    r = json.loads((root / "benchmarks" / "results.json").read_text())["samples"]["result"]
    text = " ".join((root / "docs" / "explain.md").read_text().split())
    assert (f"make the jobs {r['jobs_seconds_ratio_on_off']:.1f} times as long and take "
            f"{r['sample_kb_per_job']:.0f} KB a job: {r['sample_mb_at_50_seeds']:.0f} MB for "
            "the 50-seed default sweep") in text
