"""`fbench sweep` end to end through the CLI: resume after a killed process, bad input."""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.results.aggregate import aggregate
from runner.results.shard import NONDETERMINISTIC
from runner.sweep.plan import existing_shards
from tests.report_cases import untimed

GRID = ["--seeds", "6", "--policies", "keep_all,ebbinghaus", "--workloads", "contradiction",
        "--horizons", "3000",
        "--executor", "inline", "--no-report"]


def nan_safe(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Rows with NaN spelled as a string, so that equal tables compare equal."""
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
            for row in rows]


def deterministic(out: Path) -> dict[str, list[dict[str, object]]]:
    """Each shard's rows without the timing/node columns, NaN spelled as a string so
    that equal shards compare equal."""
    return {
        job_id: nan_safe(pq.read_table(path).drop(sorted(NONDETERMINISTIC)).to_pylist())
        for job_id, path in sorted(existing_shards(out).items())
    }


# Where the driver is killed: after this many shards (seeded "random" points over the
# sweep's 12 jobs, so the test is the same on every run).
KILL_POINTS = sorted(random.Random(8).sample(range(1, 11), 3))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clean = tmp_path_factory.mktemp("uninterrupted") / "clean"
    assert CliRunner().invoke(app, ["sweep", *GRID, "--out", str(clean)]).exit_code == 0
    return clean


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", KILL_POINTS)
def test_resume_after_a_killed_process(kill_after: int, uninterrupted: Path,
                                       tmp_path: Path) -> None:
    """Prevents a killed sweep from leaving partial shards or losing/duplicating jobs: at
    each of several kill points, what the killed driver left aggregates (no partial
    shard is visible), and the rerun ends with every shard present once, identical to an
    uninterrupted sweep."""
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.cli", "sweep", *GRID, "--out", str(killed)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(existing_shards(killed)) < kill_after and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(existing_shards(killed))
    assert kill_after <= partial < 12, "the sweep finished before it could be killed"
    assert {r["n_jobs"] for r in aggregate(killed).to_pylist()} <= set(range(1, 7))
    (killed / "summary.parquet").unlink()
    result = CliRunner().invoke(app, ["sweep", *GRID, "--out", str(killed)])
    assert result.exit_code == 0, result.output
    assert f"{12 - partial} run, {partial} skipped" in result.output

    a, b = deterministic(killed), deterministic(uninterrupted)
    assert len(a) == 12
    assert a.keys() == b.keys()
    assert a == b
    assert nan_safe(aggregate(killed).to_pylist()) == nan_safe(
        aggregate(uninterrupted).to_pylist())
    assert not list(killed.rglob("*.tmp"))


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--policies", "nope"], "unknown policy 'nope'"),
        (["--workloads", "contradictio"], "did you mean 'contradiction'"),
        (["--param", "ebbinghaus.tau"], "not key=v1,v2"),
        (["--param", "ebbinghaus.tau=abc"], "not a valid float"),
        (["--horizons", "12y"], "neither a number nor Nx"),
        (["--seeds", "0"], "--seeds must be positive"),
        (["--seeds", "2", "--seed-list", "1"], "not both"),
        (["--overwrite", "sometimes"], "--overwrite 'sometimes'"),
        (["--executor", "spark"], "unknown executor 'spark'"),
        (["--config", "/nonexistent/sweep.toml"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    """Prevents tracebacks, vague messages or half-written folders on bad input."""
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["sweep", "--out", str(out), "--no-report", *args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert needle in lines[0]
    assert "Traceback" not in result.output
    assert not out.exists()


def test_malformed_toml_is_one_line(tmp_path: Path) -> None:
    """Prevents a TOML syntax error from surfacing as a multi-line parser traceback."""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text("seeds = [1,\npolicies = 3")
    result = CliRunner().invoke(app, ["sweep", "--config", str(cfg), "--no-report"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: config") and result.stderr.count("\n") == 1


def test_ray_and_inline_sweeps_give_identical_shards(ray_local: None, tmp_path: Path) -> None:
    """Prevents executor-dependent results: the same sweep through the CLI with the Ray
    executor and inline ends in the same shards (timing and node aside) and the same
    summary and report (its Cost section aside)."""
    grid = ["--seeds", "3", "--policies", "keep_all,ebbinghaus,learned_forget",
            "--workloads", "contradiction,lifecycle",
            "--horizons", "0.2x"]
    outs = {}
    for executor in ("ray", "inline"):
        outs[executor] = tmp_path / executor
        result = CliRunner().invoke(
            app, ["sweep", *grid, "--executor", executor, "--out", str(outs[executor])])
        assert result.exit_code == 0, result.output
        assert f"({executor} executor)" in result.stderr
    assert deterministic(outs["ray"]) == deterministic(outs["inline"])
    assert len(deterministic(outs["ray"])) == 18
    assert untimed(outs["ray"] / "RESULTS.md") == untimed(outs["inline"] / "RESULTS.md")


def test_unreachable_address_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """Prevents a sweep at a dead cluster address from hanging, dumping a traceback, or
    leaving a half-made output folder (sweep.json, manifest) behind."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["sweep", "--seeds", "1", "--address",
                                      f"127.0.0.1:{port}", "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach Ray at"), lines
    assert not out.exists()
