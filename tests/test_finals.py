"""A published folder (``runner.results.finals``): every job's final row with its whole
identity and the plots' checkpoint series, from which a folder without shards gives the
same summary, comparisons and report as the shards."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.job.execute import execute
from runner.report.markdown import write_report
from runner.results.layout import CHECKPOINTS, FINALS
from runner.results.shard import shard_path, write_shard
from runner.spec.resolve import make_spec
from tests.report_cases import untimed

IDENTITY = ("job_id", "workload", "workload_version", "policy", "seed", "horizon", "k",
            "params", "params_full", "embedder", "spec", "versions", "fbench_version")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """keep_all and ebbinghaus (tau 60) on contradiction, 3 seeds at horizon 200."""
    out = tmp_path_factory.mktemp("sweep")
    for seed in range(3):
        for policy, params in (("keep_all", []), ("ebbinghaus", [("policy.tau", "60")])):
            spec = make_spec("contradiction", policy, seed, horizon=200, params=params)
            o = execute(spec.canonical_json(), "inline")
            assert o.table is not None, o.error
            write_shard(shard_path(out, spec), o.table)
    return out


def _rows(path: Path) -> list[str]:
    """A table's rows as sorted JSON, nan written as null (so equal rows compare equal)."""
    return sorted(json.dumps(r, sort_keys=True, default=str).replace("NaN", "null")
                  for r in pq.read_table(path).to_pylist())


def test_finals_hold_each_jobs_final_row_and_identity(sweep: Path) -> None:
    """Prevents a published sweep keeping less than a pairing needs: one row per job,
    the final one, with every column that makes up the job's identity."""
    res = CliRunner().invoke(app, ["aggregate", str(sweep), "--finals"])
    assert res.exit_code == 0, res.output
    finals = pq.read_table(sweep / FINALS)
    assert finals.num_rows == 6
    assert set(IDENTITY) <= set(finals.column_names)
    assert all(finals.column("is_final").to_pylist())
    assert sorted(finals.column("seed").to_pylist()) == [0, 0, 1, 1, 2, 2]


def published_copy(sweep: Path, root: Path) -> Path:
    """The published files of ``sweep`` alone, in a folder of the same name."""
    CliRunner().invoke(app, ["aggregate", str(sweep), "--finals"])
    alone = root / sweep.name
    alone.mkdir(parents=True)
    for name in (FINALS, CHECKPOINTS):
        shutil.copy(sweep / name, alone / name)
    return alone


def test_a_published_folder_gives_the_same_summary(sweep: Path, tmp_path: Path) -> None:
    """Prevents a published sweep (its rows, no shards) being reduced differently from
    the shards it came from: the summary and comparisons are the same row for row."""
    alone = published_copy(sweep, tmp_path)
    res = CliRunner().invoke(app, ["aggregate", str(alone)])
    assert res.exit_code == 0, res.output
    for name in ("summary.parquet", "comparisons.parquet"):
        assert _rows(alone / name) == _rows(sweep / name)


def test_a_published_folder_gives_the_same_report(sweep: Path, tmp_path: Path) -> None:
    """Prevents RESULTS.md depending on whether the shards are still there: the report
    and every plot of a published folder are byte for byte the shards'."""
    alone = published_copy(sweep, tmp_path / "published")
    shards = tmp_path / "shards" / sweep.name
    shutil.copytree(sweep, shards)
    for folder in (shards, alone):
        write_report(folder)
    made = sorted(p.relative_to(shards) for p in shards.rglob("*") if p.suffix in
                  (".md", ".png"))
    assert made and any(p.suffix == ".png" for p in made)
    for path in made:
        assert (alone / path).read_bytes() == (shards / path).read_bytes(), path


def test_a_changed_published_folder_is_reduced_again(sweep: Path, tmp_path: Path) -> None:
    """Prevents a stale summary surviving new final rows in a published folder: its
    fingerprint is the finals' content."""
    import pyarrow.compute as pc

    alone = published_copy(sweep, tmp_path)
    CliRunner().invoke(app, ["aggregate", str(alone)])
    finals = pq.read_table(alone / FINALS)
    pq.write_table(finals.filter(pc.equal(finals["policy"], "keep_all")), alone / FINALS)
    from runner.results.aggregate import read_summary

    assert set(read_summary(alone).column("policy").to_pylist()) == {"keep_all"}


def test_no_shards_and_no_finals_is_one_line(tmp_path: Path) -> None:
    """Prevents a traceback when a folder holds neither shards nor finals."""
    res = CliRunner().invoke(app, ["aggregate", str(tmp_path)])
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and "no shards" in res.output


def _sweep(out: Path, seeds: int) -> str:
    res = CliRunner().invoke(app, [
        "sweep", "--workloads", "contradiction", "--policies", "keep_all,ebbinghaus",
        "--horizons", "150", "--seeds", str(seeds), "--executor", "inline", "--out",
        str(out), "--no-report", "--quiet"])
    assert res.exit_code == 0, res.output
    return res.output


def test_a_sweep_resumed_in_a_published_folder_runs_only_what_it_lacks(
        tmp_path: Path) -> None:
    """Prevents a published sweep being rerun whole to grow it (another seed, another
    memory), or its published rows being lost or counted twice when it is: the grown
    folder runs only the new jobs, and its summary and report (timing aside) equal a
    sweep run whole."""
    first, whole = tmp_path / "first", tmp_path / "whole"
    _sweep(first, 2)
    CliRunner().invoke(app, ["aggregate", str(first), "--finals"])
    grown = tmp_path / "grown" / "main"
    grown.mkdir(parents=True)
    for name in (FINALS, CHECKPOINTS, "sweep.json", "memories.json"):
        shutil.copy(first / name, grown / name)
    assert "2 run, 4 skipped" in _sweep(grown, 3)
    whole_main = whole / "main"
    _sweep(whole_main, 3)
    for folder in (grown, whole_main):
        write_report(folder)
    for name in ("summary.parquet", "comparisons.parquet"):
        assert _rows(grown / name) == _rows(whole_main / name)
    assert untimed(grown / "RESULTS.md") == untimed(whole_main / "RESULTS.md")
    CliRunner().invoke(app, ["aggregate", str(grown), "--finals"])
    assert pq.read_table(grown / FINALS).num_rows == 6


def test_aggregate_keeps_the_sweeps_own_baseline(tmp_path: Path) -> None:
    """Prevents `fbench aggregate OUT` (as `make results` runs it on a published folder)
    pairing every cell with keep_all when the sweep named another baseline: without
    --baseline it takes the one the sweep's sweep.json records."""
    out = tmp_path / "o"
    res = CliRunner().invoke(app, [
        "sweep", "--workloads", "contradiction", "--policies", "keep_all,oracle",
        "--baseline", "oracle", "--horizons", "150", "--seeds", "2", "--executor", "inline",
        "--out", str(out), "--no-report", "--quiet"])
    assert res.exit_code == 0, res.output
    assert CliRunner().invoke(app, ["aggregate", str(out), "--finals"]).exit_code == 0
    meta = pq.read_schema(out / "summary.parquet").metadata
    assert meta[b"fbench.baseline"] == b"oracle"
    rows = pq.read_table(out / "summary.parquet").to_pylist()
    assert {r["baseline"] for r in rows if r["policy"] == "keep_all"} == {"oracle"}
