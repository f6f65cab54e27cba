"""A sweep's per-seed finals (``OUT/finals.parquet``): every job's final row with its
whole identity, from which a folder without shards is reduced to the same summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.job.execute import execute
from runner.results.finals import FINALS
from runner.results.shard import shard_path, write_shard
from runner.spec.resolve import make_spec

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


def test_a_folder_of_finals_alone_gives_the_same_summary(sweep: Path, tmp_path: Path) -> None:
    """Prevents a published sweep (finals, no shards) being reduced differently from the
    shards it came from: the summary and comparisons are the same row for row."""
    CliRunner().invoke(app, ["aggregate", str(sweep), "--finals"])
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(sweep / FINALS, alone / FINALS)
    res = CliRunner().invoke(app, ["aggregate", str(alone)])
    assert res.exit_code == 0, res.output
    for name in ("summary.parquet", "comparisons.parquet"):
        assert _rows(alone / name) == _rows(sweep / name)


def test_no_shards_and_no_finals_is_one_line(tmp_path: Path) -> None:
    """Prevents a traceback when a folder holds neither shards nor finals."""
    res = CliRunner().invoke(app, ["aggregate", str(tmp_path)])
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and "no shards" in res.output
