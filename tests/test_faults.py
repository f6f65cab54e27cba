"""Faults a sweep must survive, each inflicted for real: bad files in the shard folder,
a folder written by another sweep, jobs that fail, and a disk that fills up.

(The killed driver is in test_sweep_cli.py, a killed SQLite store in test_backends.py,
a killed Ray worker and a lost Ray node in test_ray_faults.py.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.errors import FbenchError
from runner.results.aggregate import aggregate
from runner.results.validate import shard_is_valid
from runner.sweep.plan import existing_shards
from runner.sweep.run import JOB_ATTEMPTS
from tests.test_sweep_cli import deterministic, nan_safe

GRID = ["--seeds", "3", "--policies", "keep_all,last_write_wins", "--workloads",
        "contradiction", "--horizons", "600", "--executor", "inline", "--no-report"]
N_JOBS = 6


def cli(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv))
    return result.exit_code, result.output


def sweep(out: Path, *extra: str) -> tuple[int, str]:
    return cli("sweep", *GRID, "--out", str(out), *extra)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "clean"
    code, output = sweep(out)
    assert code == 0, output
    return out


def one_line_error(code: int, output: str, needle: str) -> None:
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert needle in lines[0], output
    assert "Traceback" not in output


# ------------------------------------------------------------------ bad shard files

def _garbage(path: Path, other: Path) -> None:
    path.write_bytes(b"PAR1 this is not parquet PAR1")


def _truncated(path: Path, other: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _zero_bytes(path: Path, other: Path) -> None:
    path.write_bytes(b"")


def _foreign_parquet(path: Path, other: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2, 3]}), path)


def _another_jobs_rows(path: Path, other: Path) -> None:
    shutil.copyfile(other, path)


def _missing_checkpoints(path: Path, other: Path) -> None:
    table = pq.read_table(path)
    pq.write_table(table.slice(0, table.num_rows - 5).replace_schema_metadata(None), path)


BAD_SHARDS: dict[str, Callable[[Path, Path], None]] = {
    "garbage": _garbage, "truncated": _truncated, "zero-byte": _zero_bytes,
    "foreign parquet": _foreign_parquet, "another job's rows": _another_jobs_rows,
    "missing checkpoints": _missing_checkpoints,
}


@pytest.mark.parametrize("kind", sorted(BAD_SHARDS))
def test_a_bad_shard_is_refused_quarantined_and_rerun(kind: str, clean: Path,
                                                     tmp_path: Path) -> None:
    """Prevents a corrupt, truncated, empty, foreign or incomplete shard from entering a
    summary, or being deleted: aggregate refuses it naming the file (one line, exit 2);
    the resumed sweep moves it to OUT/quarantine byte for byte, reruns its job, and ends
    equal to an uninterrupted sweep."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    (out / "summary.parquet").unlink(missing_ok=True)  # left by another test's aggregate
    shards = sorted(existing_shards(out).values())
    victim, other = shards[0], shards[1]
    BAD_SHARDS[kind](victim, other)
    damaged = victim.read_bytes()
    assert not shard_is_valid(victim, victim.stem)

    with pytest.raises(FbenchError):
        aggregate(out)
    one_line_error(*cli("aggregate", str(out)), victim.name)
    assert not (out / "summary.parquet").exists()

    code, output = sweep(out, "--dry-run")
    assert code == 0 and "1 shard(s) that do not validate to quarantine" in output, output
    assert victim.read_bytes() == damaged  # a dry run moves nothing
    code, output = sweep(out)
    assert code == 0, output
    assert "quarantined 1 shard(s)" in output
    assert f"1 run, {N_JOBS - 1} skipped" in output
    kept = out / "quarantine" / victim.relative_to(out)
    assert kept.read_bytes() == damaged
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["quarantined"] == [kept.relative_to(out).as_posix()]
    assert deterministic(out) == deterministic(clean)
    assert nan_safe(aggregate(out).to_pylist()) == nan_safe(aggregate(clean).to_pylist())


def test_a_stray_file_in_the_shard_folder_is_quarantined(clean: Path, tmp_path: Path) -> None:
    """Prevents a stray non-shard file (not named after any job) from blocking the sweep as
    "another sweep" or being read by aggregate: it is quarantined and nothing reruns."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    stray = next(iter(existing_shards(out).values())).with_name("notes.parquet")
    stray.write_bytes(b"scribbles")
    one_line_error(*cli("aggregate", str(out)), stray.name)
    code, output = sweep(out)
    assert code == 0, output
    assert f"0 run, {N_JOBS} skipped" in output
    assert (out / "quarantine" / stray.relative_to(out)).read_bytes() == b"scribbles"
    assert not stray.exists()


def test_never_overwrite_refuses_bad_shards_and_moves_nothing(clean: Path,
                                                             tmp_path: Path) -> None:
    """Prevents --overwrite never from touching a folder with a bad shard."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    victim = next(iter(existing_shards(out).values()))
    victim.write_bytes(b"")
    code, output = sweep(out, "--overwrite", "never")
    one_line_error(code, output, "do not validate")
    assert victim.exists() and not (out / "quarantine").exists()


# ------------------------------------------------------------------ another sweep's folder

def test_a_folder_of_another_sweep_is_refused_unless_overwrite(clean: Path,
                                                               tmp_path: Path) -> None:
    """Prevents one folder from mixing two sweeps: a spec whose jobs are not a superset of
    sweep.json's is one line (exit 2) naming the difference, with nothing written; with
    --overwrite always it replaces the old sweep."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    args = ["sweep", *GRID[:-1], "--out", str(out)]  # GRID minus --no-report, plus k
    result = CliRunner().invoke(app, [*args, "--k", "3", "--no-report"])
    one_line_error(result.exit_code, result.output, "holds another sweep (k: 5 there, 3 now)")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    result = CliRunner().invoke(app, [*args, "--k", "3", "--no-report", "--overwrite", "always"])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "sweep.json").read_text())["spec"]["k"] == 3


def test_a_grown_sweep_resumes_in_its_folder(clean: Path, tmp_path: Path) -> None:
    """Prevents the spec check from refusing a sweep that only adds jobs (more seeds):
    it resumes, running only the new ones."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    grown = [a if a != "3" else "4" for a in GRID]
    result = CliRunner().invoke(app, ["sweep", *grown, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"2 run, {N_JOBS} skipped" in result.output


@pytest.mark.parametrize(("doc", "needle"), [
    ("{not json", "is not a sweep record fbench can read"),
    ('{"jobs": []}', "is not a sweep record fbench can read"),
    ('{"format": 99, "spec": {}, "jobs": []}', "sweep format 99"),
])
def test_an_unreadable_or_older_sweep_json_is_refused(doc: str, needle: str, clean: Path,
                                                      tmp_path: Path) -> None:
    """Prevents resuming into a folder whose sweep record fbench cannot read or that
    another fbench wrote."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    (out / "sweep.json").write_text(doc)
    code, output = sweep(out)
    one_line_error(code, output, needle)
    assert (out / "sweep.json").read_text() == doc


# ------------------------------------------------------------------ failing jobs

def failing_grid(tmp_path: Path) -> list[str]:
    """A sweep where one cell's jobs fail deterministically: their SQLite store path
    exists already (a one-line error inside the job, on any executor)."""
    taken = tmp_path / "taken.db"
    taken.write_text("occupied")
    return ["--seeds", "2", "--policies", "keep_all,last_write_wins", "--workloads",
            "contradiction", "--horizons", "300", "--no-report",
            "--param", "store.backend=sqlite", "--param", f"store.path={taken}"]


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_failing_jobs_are_retried_a_bounded_number_of_times_and_listed(
        executor: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Prevents a deterministic failure from stopping the sweep, being retried forever
    or passing unnoticed: everything else finishes, each failing job runs exactly
    JOB_ATTEMPTS times, its traceback is in the manifest, and the sweep exits 1 listing
    every failed id."""
    if executor == "ray":
        request.getfixturevalue("ray_local")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["sweep", *failing_grid(tmp_path), "--out", str(out),
                                      "--executor", executor])
    assert result.exit_code == 1, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    failures = manifest["failures"]
    assert len(failures) == 4  # every job: each one's store path is taken
    assert manifest["counts"] == {"total": 4, "done": 0, "skipped": 0, "failed": 4}
    assert manifest["retried"] == 4 * (JOB_ATTEMPTS - 1)
    for f in failures:
        assert f["attempts"] == JOB_ATTEMPTS
        assert "Traceback" in f["error"] and "already exists" in f["error"]
        assert f"failed {f['job_id']} ({JOB_ATTEMPTS} runs)" in result.output
    assert "Traceback" not in result.output


def test_a_transient_failure_is_retried_and_recovers(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a job that failed once (a flaky node, a transient error) from being
    reported failed when its rerun succeeds, or from being run before the others are."""
    import runner.job.run as job_mod

    real = job_mod.run_job
    calls: list[tuple[str, int]] = []

    def flaky_once(spec):  # type: ignore[no-untyped-def]
        calls.append((spec.policy, spec.seed))
        if spec.policy == "keep_all" and spec.seed == 0 and calls.count(("keep_all", 0)) == 1:
            raise RuntimeError("transient")
        return real(spec)

    monkeypatch.setattr("runner.job.execute.run_job", flaky_once)
    code, output = sweep(tmp_path / "out")
    assert code == 0, output
    assert f"{N_JOBS} run, 0 skipped" in output
    assert "0 failed, 1 rerun after failing" in output
    assert calls[-1] == ("keep_all", 0) and len(calls) == N_JOBS + 1


# ------------------------------------------------------------------ disk full

INSIDE = """
import json, os, subprocess, sys
from pathlib import Path
mount, copy, size, grid = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mount], check=True)
proc = subprocess.run([sys.executable, "-m", "runner.cli", "sweep", *grid, "--out",
                       str(Path(mount) / "out")], capture_output=True, text=True)
subprocess.run(["cp", "-a", str(Path(mount) / "out"), copy], check=True)
print(json.dumps({"code": proc.returncode, "stderr": proc.stderr}))
"""


def test_disk_full_is_one_line_and_the_written_shards_stay_valid(clean: Path,
                                                                 tmp_path: Path) -> None:
    """Prevents a full disk from crashing the sweep with a traceback or leaving a torn
    shard: on a tmpfs with room for about three shards the sweep stops with one line
    (exit 2); every shard written validates, no temporary is left, and a rerun with room
    completes the sweep equal to an uninterrupted one."""
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -rm (user and mount namespaces) to mount a small tmpfs")
    sizes = [p.stat().st_size for p in existing_shards(clean).values()]
    room = (3 * max(sizes) + 12 * 1024) // 4096 * 4096 + 4096  # + sweep.json, manifest
    mount, copy = tmp_path / "disk", tmp_path / "copy"
    mount.mkdir()
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, "-c", INSIDE, str(mount), str(copy), str(room),
         json.dumps(GRID)], capture_output=True, text=True, timeout=300,
        cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 0, proc.stderr
    inside = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = inside["stderr"].strip().splitlines()
    assert inside["code"] == 2, inside["stderr"]
    assert lines[-1].startswith("error: cannot write to") or "cannot write" in lines[-1]
    assert "No space left on device" in lines[-1] and "stay valid" in lines[-1]
    assert "Traceback" not in inside["stderr"]
    written = existing_shards(copy)
    assert 1 <= len(written) < N_JOBS
    assert all(shard_is_valid(p, j) for j, p in written.items())
    assert not [p for p in copy.rglob("*") if p.name.endswith(".tmp")]
    code, output = sweep(copy)
    assert code == 0, output
    assert f"{N_JOBS - len(written)} run, {len(written)} skipped" in output
    assert deterministic(copy) == deterministic(clean)
