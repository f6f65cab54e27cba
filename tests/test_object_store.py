"""Results in object storage (#20): ``--out s3://bucket/prefix`` against a real
S3-compatible server on loopback (moto's standalone server, ``tests/s3_server.py``).
A sweep, a resume after a killed driver, compaction and aggregate, all on ``s3://``,
each checked against the same sweep in a local folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs as pafs
from typer.testing import CliRunner

import runner.sweep.scan as scan
from runner.cli import app
from runner.results.aggregate import aggregate
from runner.results.load import load_shards
from runner.results.shard import NONDETERMINISTIC
from runner.results.where import ArrowPath, Loc, arrow_source, location
from runner.sweep.plan import existing_shards
from tests.s3_server import make_bucket, s3_env, s3_server
from tests.test_sweep_cli import nan_safe

pytestmark = pytest.mark.slow

GRID = ["--seeds", "3", "--policies", "keep_all,ebbinghaus", "--workloads", "contradiction",
        "--horizons", "1500", "--executor", "inline"]
N_JOBS = 6
BUCKET = "fbench-results"


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """A moto server with one bucket; the process environment pointed at it."""
    with s3_server() as endpoint, s3_env(endpoint) as env:
        make_bucket(endpoint, BUCKET)
        yield env


def cli(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv))
    return result.exit_code, result.output


def deterministic(out: str | Path) -> dict[str, list[dict[str, object]]]:
    """Each job's rows without the timing/node columns (NaN spelled as a string)."""
    return {job: nan_safe(pq.read_table(arrow_source(path)).drop(sorted(NONDETERMINISTIC))
                          .to_pylist())
            for job, path in sorted(existing_shards(location(out)).items())}


def summary_bytes(out: Loc) -> bytes:
    """OUT's summary.parquet, its rows and their schema, written again without the
    metadata (which holds the shards' fingerprint: their paths and mtimes)."""
    table = pq.read_table(arrow_source(out / "summary.parquet"))
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"fbench.shards"}
    buf = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), buf)
    return bytes(buf.getvalue().to_pybytes())


def keys(prefix: str) -> list[str]:
    """Every object under ``s3://BUCKET/prefix``, relative to it."""
    out = location(f"s3://{BUCKET}/{prefix}")
    assert isinstance(out, ArrowPath)
    infos = out.fs.get_file_info(pafs.FileSelector(out.path, recursive=True,
                                                   allow_not_found=True))
    return sorted(i.path.removeprefix(out.path + "/") for i in infos
                  if i.type == pafs.FileType.File)


@pytest.fixture(scope="module")
def local(s3: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same sweep in a local folder: what every remote result must equal."""
    out = tmp_path_factory.mktemp("local") / "out"
    code, output = cli("sweep", *GRID, "--no-report", "--out", str(out))
    assert code == 0, output
    return out


def test_a_sweep_on_s3_equals_the_local_one_and_reports_locally(
        s3: dict[str, str], local: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prevents a remote OUT from losing, changing or misplacing anything: every shard,
    sweep.json, manifest, summary and comparisons land under the prefix, the rows equal
    the local sweep's, and RESULTS.md and its plots go to --report-dir; the resume trusts
    the commit log's stamps (a listing's mtime against a HEAD's) and opens no shard."""
    uri = f"s3://{BUCKET}/plain"
    code, output = cli("sweep", *GRID, "--out", uri, "--report-dir", str(tmp_path / "rep"))
    assert code == 0, output
    assert f"{N_JOBS} jobs: {N_JOBS} run, 0 skipped" in output
    names = keys("plain")
    assert {"sweep.json", "manifest.json", "memories.json", "summary.parquet",
            "comparisons.parquet", "comparisons.csv"} <= set(names)
    assert len([n for n in names if n.startswith("shards/")]) == N_JOBS
    assert not [n for n in names if "plots" in n or n.endswith(".md")]
    assert deterministic(uri) == deterministic(local)
    assert nan_safe(aggregate(uri).to_pylist()) == nan_safe(aggregate(local).to_pylist())
    # byte for byte, but for the metadata's shard fingerprint (paths and mtimes differ)
    assert summary_bytes(location(uri)) == summary_bytes(local)
    assert (tmp_path / "rep" / "RESULTS.md").is_file()
    assert list((tmp_path / "rep" / "plots").glob("*.png"))
    assert f"fbench report {uri} --report-dir" in (tmp_path / "rep" / "RESULTS.md").read_text()
    assert '"shards_written_by": "workers"' in (location(uri) / "manifest.json").read_text()
    assert '"shards_written_by": "driver"' in (local / "manifest.json").read_text()  # inline

    footer_reads: list[str] = []
    monkeypatch.setattr(scan, "shard_is_valid", lambda p, j: footer_reads.append(j))
    code, output = cli("sweep", *GRID, "--no-report", "--out", uri)  # resume: all done
    assert code == 0, output
    assert f"0 run, {N_JOBS} skipped" in output
    assert footer_reads == []


def test_resume_after_a_killed_driver_on_s3(s3: dict[str, str], local: Path) -> None:
    """Prevents a driver killed mid-upload from leaving an object that counts as done:
    what it left loads and aggregates (every shard whole), and the rerun runs exactly the
    missing jobs and ends equal to the local sweep."""
    uri = f"s3://{BUCKET}/killed"
    grid = [*GRID[:1], "6", *GRID[2:]]  # 12 jobs: time to kill it part-way
    proc = subprocess.Popen([sys.executable, "-m", "runner.cli", "sweep", *grid, "--no-report",
                             "--out", uri], env=s3, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    while len(existing_shards(location(uri))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(existing_shards(location(uri)))
    assert 3 <= partial < 12, "the sweep finished before it could be killed"
    assert load_shards(uri, final_only=True).num_rows == partial  # all whole
    assert {r["n_jobs"] for r in aggregate(uri).to_pylist()} <= set(range(1, 7))

    code, output = cli("sweep", *grid, "--no-report", "--out", uri)
    assert code == 0, output
    assert f"{12 - partial} run, {partial} skipped" in output
    done = deterministic(uri)
    assert len(done) == 12
    mine = {j: rows for j, rows in done.items() if j in deterministic(local)}
    assert mine == deterministic(local)  # the 6 jobs both sweeps ran


def test_compaction_and_aggregate_on_s3(s3: dict[str, str], local: Path) -> None:
    """Prevents compaction from losing or doubling rows in an object store: after
    `fbench compact` the shards are gone, one part and its index hold them, the summary
    equals the local sweep's, and a resume still finds every job done."""
    uri = f"s3://{BUCKET}/compacted"
    code, output = cli("sweep", *GRID, "--no-report", "--out", uri)
    assert code == 0, output
    before = nan_safe(aggregate(uri).to_pylist())
    code, output = cli("compact", uri)
    assert code == 0, output
    assert f"merged {N_JOBS} shards" in output
    names = keys("compacted")
    assert not [n for n in names if n.startswith("shards/") and n.endswith(".parquet")]
    assert {"compacted/index.parquet", "compacted/part-000001.parquet"} <= set(names)
    assert nan_safe(aggregate(uri).to_pylist()) == before == nan_safe(
        aggregate(local).to_pylist())
    code, output = cli("aggregate", uri)
    assert code == 0, output
    code, output = cli("sweep", *GRID, "--no-report", "--out", uri)
    assert code == 0, output
    assert f"0 run, {N_JOBS} skipped" in output


@pytest.mark.parametrize(("argv", "needle"), [
    (["sweep", "--out", "s3://no-such-bucket/x", "--no-report"], "cannot be written"),
    (["sweep", "--out", f"s3://{BUCKET}/report-nowhere"], "give --report-dir"),
    (["sweep", "--out", "nosuchfs://x/y", "--no-report"], "cannot open 'nosuchfs://x/y'"),
    (["report", f"s3://{BUCKET}/plain"], "give --report-dir"),
    (["compact", f"s3://{BUCKET}/never-written"], "does not exist"),
])
def test_bad_remote_out_is_one_line_and_writes_nothing(
        s3: dict[str, str], argv: list[str], needle: str) -> None:
    """Prevents a missing bucket, an unknown scheme or a remote OUT with nowhere to put
    the report from failing with a traceback or after writing: one line, exit 2, and no
    object under the prefix."""
    before = keys("report-nowhere")
    code, output = cli(*argv, *(GRID if argv[0] == "sweep" else []))
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], output
    assert keys("report-nowhere") == before == []


def _driver_must_not_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the driver's own shard writer fail: only a worker can have written a shard."""
    def refuse(*_: object) -> None:
        raise AssertionError("the driver wrote a shard")
    monkeypatch.setattr("runner.sweep.run.write_shard", refuse)


@pytest.mark.parametrize("where", ["s3", "shared-out", "embedded"])
def test_ray_workers_write_their_own_shards(
        where: str, s3: dict[str, str], local: Path, ray_local: None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents every result from funnelling through the driver when OUT is shared: on
    the Ray executor the workers write the shards (to s3:// with the endpoint and
    credentials in the URI, to a --shared-out folder, or to any local folder on the
    embedded Ray, whose workers share this machine), the driver writes none, and the
    shards equal the local sweep's."""
    _driver_must_not_write(monkeypatch)
    if where == "s3":
        endpoint = s3["AWS_ENDPOINT_URL"].removeprefix("http://")
        out = (f"s3://fbench:fbench@{BUCKET}/by-workers?endpoint_override={endpoint}"
               "&scheme=http")
        extra: list[str] = []
    else:
        out = str(tmp_path / where)
        extra = ["--shared-out"] if where == "shared-out" else []
    grid = [a if a != "inline" else "ray" for a in GRID]
    code, output = cli("sweep", *grid, "--no-report", "--out", out, *extra)
    assert code == 0, output
    assert f"{N_JOBS} run" in output
    assert deterministic(out) == deterministic(local)
    manifest = (location(out) / "manifest.json").read_text()
    assert '"shards_written_by": "workers"' in manifest


def test_a_worker_that_cannot_write_stops_the_sweep_in_one_line(
        s3: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a storage failure on a worker from being retried as a job failure or
    surfacing as a traceback: one line naming OUT and the node, exit 2."""
    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("runner.job.execute.write_shard", full)
    code, output = cli("sweep", *GRID, "--no-report", "--out", f"s3://{BUCKET}/full")
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in output, output  # (beside the progress bar)
    assert f"cannot write to s3://{BUCKET}/full on node" in errors[0]
    assert "No space left on device" in errors[0] and "rerun the same command" in errors[0]


def test_docs_object_storage_commands_run(s3: dict[str, str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the docs' object-storage section (docs/cluster.md) from going stale: each
    of its fbench commands runs as written against the server (its bucket is this test's),
    and the report lands in the local --report-dir."""
    from tests.test_docs_examples import page

    block = page("cluster.md").split("## Results in object storage", 1)[1].split("```bash\n", 1)[1]
    commands = [line.split("#")[0].strip() for line in block.split("```", 1)[0].splitlines()]
    commands = [c for c in commands if c.startswith("fbench ")]
    assert len(commands) == 4 and all(f"s3://{BUCKET}/" in c for c in commands)
    monkeypatch.chdir(tmp_path)
    for command in commands:
        code, output = cli(*command.split()[1:])
        assert code == 0, f"{command}\n{output}"
    assert (tmp_path / "report" / "RESULTS.md").is_file()


def test_an_unreachable_store_is_one_line(s3: dict[str, str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents an object store nobody answers at from hanging the sweep or ending in a
    traceback: one line naming OUT and the connection failure, exit 2, within pyarrow's
    retries (seconds)."""
    from tests.s3_server import free_port

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    code, output = cli("sweep", *GRID, "--no-report", "--out", f"s3://{BUCKET}/nowhere")
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and "cannot be written" in lines[0], output
    assert "connect" in lines[0].lower(), output
