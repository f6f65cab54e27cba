"""`fbench compact`: shards merged into compacted parts without losing, changing or
doubling a row, whatever step a crash interrupts; readers, resume and the summary see
the same sweep in either layout. Sweeps are tiny and inline (6 jobs of 20 rows)."""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.errors import FbenchError
from runner.results.aggregate import SUMMARY, aggregate, summary_is_current
from runner.results.compact import Compaction, compact
from runner.results.layout import COMPACTED, Layout, index_path
from runner.results.load import load_shards
from runner.results.shard import NONDETERMINISTIC, SCHEMA, shard_path, write_shard
from runner.spec.jobspec import JobSpec
from runner.sweep.expand import SweepSpec, expand
from runner.sweep.grid import Grid
from runner.sweep.plan import existing_shards, plan
from runner.sweep.run import prepare, run_sweep

SPEC = SweepSpec(seeds=(0, 1, 2), policies=("keep_all", "ebbinghaus"),
                 workloads=("contradiction",), horizons=("120",))
BIGGER = SweepSpec(seeds=(0, 1, 2, 3), policies=SPEC.policies, workloads=SPEC.workloads,
                   horizons=SPEC.horizons)
ROWS = 50  # rows per part in most tests: two 20-row jobs per part, so 3 parts for 6 jobs


def _sweep(out: Path, spec: SweepSpec = SPEC, overwrite: str = "failed") -> Any:
    return run_sweep(prepare(spec, expand(spec), out, executor="inline", overwrite=overwrite))


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 6-job sweep (raw shards only), plus the two seed-3 jobs of BIGGER beside it."""
    root = tmp_path_factory.mktemp("compact")
    _sweep(root / "sweep")
    _sweep(root / "bigger", BIGGER)
    return root


@pytest.fixture
def out(swept: Path, tmp_path: Path) -> Path:
    """A fresh copy of the 6-job sweep."""
    dst = tmp_path / "sweep"
    shutil.copytree(swept / "sweep", dst)
    return dst


def _copy_seed3(swept: Path, out: Path) -> None:
    """Add BIGGER's seed-3 shards to ``out`` (what a resumed, enlarged sweep writes)."""
    for job in expand(BIGGER):
        if job.seed == 3:
            dst = shard_path(out, job)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(shard_path(swept / "bigger", job), dst)


def _rerun(out: Path, job: JobSpec) -> None:
    """Write the job's shard again, as a rerun would (its rows, with another wall_s)."""
    old = load_shards(out)
    old = old.filter(pc.equal(old["job_id"], job.job_id))
    write_shard(shard_path(out, job), old.set_column(
        old.schema.get_field_index("wall_s"), SCHEMA.field("wall_s"),
        pa.array([99.0] * old.num_rows)))


def _plain(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in rows]


def _table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Every column of every row (timing and node included), in (job, checkpoint) order."""
    return _plain(table.sort_by([("job_id", "ascending"), ("checkpoint", "ascending")])
                  .to_pylist())


def _file_rows(files: list[Path]) -> list[dict[str, Any]]:
    """The rows of these files, read one by one with pyarrow (not through fbench)."""
    return _table_rows(pa.concat_tables([pq.read_table(f).replace_schema_metadata(None)
                                         for f in files]))


def _counted_rows(out: Path) -> list[dict[str, Any]]:
    """The rows every fbench reader sees (``load_shards``)."""
    return _table_rows(load_shards(out))


def _tree(out: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(out).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(out.rglob("*")) if p.is_file()}


def _parts(out: Path) -> list[Path]:
    return sorted((out / COMPACTED).glob("part-*.parquet"))


# ------------------------------------------------------------------------ rows and summary


def test_compaction_preserves_every_row_exactly(out: Path) -> None:
    """Prevents a compaction that drops, duplicates, reorders into the wrong job, or alters
    any value (timing columns and provenance included): the parts hold exactly the shards'
    rows, with exactly the shard schema, and the shards are gone."""
    shards = Layout(out).raw_files
    assert len(shards) == 6
    before = _file_rows(shards)
    assert len(before) == 6 * 20
    result = compact(out, rows_per_part=ROWS)
    assert (result.merged, result.merged_rows, result.written, result.rows) == (6, 120, 3, 120)
    parts = _parts(out)
    assert len(parts) == 3
    assert all(pq.read_schema(p).equals(SCHEMA) for p in parts)
    assert _file_rows(parts) == before
    assert _counted_rows(out) == before
    assert Layout(out).raw_files == []
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]  # no temporaries


def test_parts_hold_whole_jobs_up_to_the_row_limit(out: Path) -> None:
    """Prevents a job split across two parts (a part's jobs must be whole to be replaced)
    and parts far over the limit: a job larger than the limit gets a part of its own."""
    compact(out, rows_per_part=10)
    parts = Layout(out).parts
    assert [p.rows for p in parts] == [20] * 6 and all(len(p.jobs) == 1 for p in parts)
    for p in parts:
        ids = pq.read_table(out / COMPACTED / p.name, columns=["job_id"])["job_id"]
        assert set(ids.to_pylist()) == set(p.jobs)


def test_summary_is_byte_identical_and_stays_current(out: Path) -> None:
    """Prevents compaction from changing the summary (or its fingerprint, which would make
    every report recompute it): aggregate gives the same bytes before and after, the old
    summary still counts as current, and the report is the same."""
    from runner.report.markdown import write_report

    aggregate(out)
    before = (out / SUMMARY).read_bytes()
    report = write_report(out).read_text()
    compact(out, rows_per_part=ROWS)
    assert summary_is_current(out)
    aggregate(out)
    assert (out / SUMMARY).read_bytes() == before
    (out / SUMMARY).unlink()
    assert write_report(out).read_text() == report
    assert (out / SUMMARY).read_bytes() == before


def test_a_mixed_layout_reads_each_job_once(swept: Path, out: Path) -> None:
    """Prevents readers that see only one layout: compacted parts plus new shards give
    every job once, and the summary equals the one from the same shards uncompacted."""
    whole = out.parent / "uncompacted"
    shutil.copytree(out, whole)
    _copy_seed3(swept, whole)
    compact(out)
    _copy_seed3(swept, out)
    lay = Layout(out)
    assert (len(lay.raw_files), len(lay.compacted)) == (2, 6)
    assert len(existing_shards(out)) == 8
    assert _counted_rows(out) == _counted_rows(whole)
    aggregate(out)
    aggregate(whole)
    assert (out / SUMMARY).read_bytes() == (whole / SUMMARY).read_bytes()


# ------------------------------------------------------------------------ idempotence


def test_compacting_twice_changes_nothing_the_second_time(out: Path) -> None:
    """Prevents a second run from rewriting parts (or touching anything) when there is
    nothing new, and a message that does not say so."""
    compact(out, rows_per_part=ROWS)
    tree = _tree(out)
    result = CliRunner().invoke(app, ["compact", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1
    assert "nothing to compact (0 shards merged, 0 files written, 6 jobs in 3 compacted " \
           "files)" in result.stdout
    assert _tree(out) == tree


def test_the_cli_prints_one_summary_line(out: Path) -> None:
    """Prevents a silent or multi-line `fbench compact`: one line with the shards merged,
    files written, rows and seconds."""
    result = CliRunner().invoke(app, ["compact", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{out}: merged 6 shards (120 rows) into 1 file of 120 rows in ")
    assert lines[0].endswith(" s; now 6 jobs in 1 compacted file")


# ------------------------------------------------------------------------ resume


def test_resume_after_compaction_reruns_nothing_and_new_jobs_merge_in(out: Path) -> None:
    """Prevents resume from rerunning compacted jobs (or refusing them as another sweep's),
    and a later compaction from leaving the new jobs out or adding a small file each time."""
    compact(out, rows_per_part=ROWS)
    p = plan(expand(SPEC), out, "failed")
    assert (p.skipped, list(p.to_run), p.invalid) == (6, [], [])
    again = _sweep(out)
    assert (again.done, again.skipped) == (0, 6)
    bigger = _sweep(out, BIGGER)
    assert (bigger.done, bigger.skipped) == (2, 6)
    result = compact(out)  # the default limit: every part under half full is rewritten
    assert (result.merged, result.merged_rows, result.replaced) == (2, 40, 3)
    assert (result.written, result.rows, result.jobs, result.parts) == (1, 160, 8, 1)
    assert set(existing_shards(out)) == {j.job_id for j in expand(BIGGER)}
    assert Layout(out).raw_files == []
    summary = aggregate(out)
    assert set(summary["n_jobs"].to_pylist()) == {4}


def test_a_failed_job_is_rerun_after_compaction(out: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents compaction from hiding a failed job from resume: it has no shard and no
    compacted rows, so `--overwrite failed` reruns it (and only it)."""
    import runner.job.run as job_mod

    real = job_mod.run_job

    def flaky(spec: JobSpec) -> Any:
        if spec.seed == 1 and spec.policy == "keep_all":
            raise RuntimeError("boom")
        return real(spec)

    fresh = tmp_path / "flaky"
    monkeypatch.setattr("runner.job.execute.run_job", flaky)
    assert len(_sweep(fresh).failed) == 1
    assert compact(fresh).jobs == 5
    monkeypatch.setattr("runner.job.execute.run_job", real)
    rerun = _sweep(fresh)
    assert (rerun.done, rerun.skipped, rerun.failed) == (1, 5, [])
    assert compact(fresh).jobs == 6
    timing = sorted(NONDETERMINISTIC)
    assert _table_rows(load_shards(fresh).drop_columns(timing)) == _table_rows(
        load_shards(out).drop_columns(timing))


def test_a_corrupt_shard_is_left_for_resume_to_rerun(out: Path) -> None:
    """Prevents compaction from merging (or deleting) a shard that does not validate: it
    stays, resume reruns its job, and the next compaction merges the new shard."""
    victim = sorted(Layout(out).raw_files)[0]
    victim.write_bytes(b"not parquet")
    result = compact(out)
    assert (result.merged, result.invalid) == (5, 1)
    assert "left 1 shard in place that does not validate" in result.line()
    assert victim.exists()
    assert plan(expand(SPEC), out, "failed").invalid == [victim.stem]
    assert _sweep(out).done == 1
    assert (compact(out).merged, Layout(out).raw_files) == (1, [])
    assert len(existing_shards(out)) == 6


def test_a_shard_rewritten_after_compaction_replaces_the_compacted_rows(out: Path) -> None:
    """Prevents a rerun after compaction from being ignored or counted next to its old
    compacted rows: the shard wins at once, and compaction drops the old rows."""
    compact(out, rows_per_part=ROWS)
    job = expand(SPEC)[0]
    _rerun(out, job)
    rows = _counted_rows(out)
    assert len(rows) == 120
    assert {r["wall_s"] for r in rows if r["job_id"] == job.job_id} == {99.0}
    result = compact(out, rows_per_part=ROWS)
    assert (result.merged, result.replaced) == (1, 1)
    assert _counted_rows(out) == rows
    assert _file_rows(_parts(out)) == rows  # no stale copy left in any part


def test_a_shard_rewritten_during_compaction_is_kept(out: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents compaction from deleting a shard a running sweep rewrote after it was read
    (its new rows would be lost): only the very file that was read is removed."""
    import runner.results.compact as parts_mod

    job = expand(SPEC)[0]
    path = shard_path(out, job)
    real = parts_mod.read_valid_shard

    def read_then_rewrite(p: Path, job_id: str) -> pa.Table | None:
        table = real(p, job_id)
        if p == path:
            _rerun(out, job)
        return table

    monkeypatch.setattr(parts_mod, "read_valid_shard", read_then_rewrite)
    compact(out)
    assert Layout(out).raw_files == [path]
    assert {r["wall_s"] for r in _counted_rows(out) if r["job_id"] == job.job_id} == {99.0}
    assert len(_counted_rows(out)) == 120


def test_an_unreadable_part_is_recovered_by_resume(out: Path) -> None:
    """Prevents a damaged compacted file from blocking a sweep for good: resume reruns its
    jobs, and the next compaction drops it without reading it."""
    compact(out, rows_per_part=ROWS)
    part = Layout(out).parts[0]
    (out / COMPACTED / part.name).write_bytes(b"not parquet")
    with pytest.raises(FbenchError, match=r"compacted part .* cannot be read"):
        load_shards(out)
    assert sorted(plan(expand(SPEC), out, "failed").invalid) == sorted(part.jobs)
    assert _sweep(out).done == 2
    result = compact(out, rows_per_part=ROWS)
    assert (result.merged, result.replaced, result.jobs) == (2, 1, 6)
    assert not (out / COMPACTED / part.name).exists()
    assert len({r["job_id"] for r in _counted_rows(out)}) == 6


def test_a_part_of_an_older_schema_is_not_upgraded_by_a_rewrite(out: Path) -> None:
    """Prevents a rewrite from passing off an older schema's rows (a metric added since) as
    current: the jobs a rerun did not replace stay in a part of their own, old schema, and
    resume still reruns them."""
    compact(out, rows_per_part=ROWS)
    part = Layout(out).parts[0]
    path = out / COMPACTED / part.name
    pq.write_table(pq.read_table(path).drop_columns(["recall_at_5"]), path)
    first, second = sorted(part.jobs)
    assert set(plan(expand(SPEC), out, "failed").invalid) == {first, second}
    _rerun_from(out, path, first)
    result = compact(out, rows_per_part=ROWS)
    assert result.replaced == 1
    lay = Layout(out)
    old = next(p for p in lay.parts if second in p.jobs)
    assert set(old.jobs) == {second}
    assert "recall_at_5" not in pq.read_schema(out / COMPACTED / old.name).names
    assert plan(expand(SPEC), out, "failed").invalid == [second]
    assert {r["recall_at_5"] is None for r in _counted_rows(out) if r["job_id"] == second} \
        == {True}


def _rerun_from(out: Path, part: Path, job_id: str) -> None:
    """A current-schema shard for a job whose rows sit in an older-schema part."""
    table = pq.read_table(part)
    rows = table.filter(pc.equal(table["job_id"], job_id))
    rows = rows.append_column("recall_at_5", pa.array([0.5] * rows.num_rows)).select(
        SCHEMA.names).cast(SCHEMA)
    spec = JobSpec.from_dict(json.loads(rows["spec"][0].as_py()))
    write_shard(shard_path(out, spec), rows)


def test_overwrite_always_after_compaction_starts_over(out: Path) -> None:
    """Prevents `--overwrite always` from keeping compacted rows beside the rerun's shards."""
    compact(out)
    result = _sweep(out, overwrite="always")
    assert result.done == 6
    lay = Layout(out)
    assert (len(lay.raw_files), lay.parts, _parts(out)) == (6, [], [])
    assert not index_path(out).exists()


def test_another_sweep_is_still_refused_after_compaction(out: Path) -> None:
    """Prevents compacted jobs from escaping the check against mixing two sweeps: by
    sweep.json, and by the jobs themselves when sweep.json is gone."""
    compact(out)
    other = SweepSpec(seeds=(7,), policies=("keep_all",), workloads=("contradiction",),
                      horizons=("120",))
    with pytest.raises(FbenchError, match=r"holds another sweep \(policies"):
        prepare(other, expand(other), out)
    (out / "sweep.json").unlink()
    with pytest.raises(FbenchError, match=r"6 shard.*another sweep"):
        prepare(other, expand(other), out)


# ------------------------------------------------------------------------ crashes


class Crash(BaseException):
    """A simulated crash (not an Exception, so that nothing on the way catches it)."""


@pytest.fixture
def crash_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], list[str]]]:
    """``crash_at(k)``: the k-th file rename or removal from now raises ``Crash`` instead
    of happening. Returns the log of the operations done so far."""
    real_replace, real_unlink = os.replace, os.unlink
    state: dict[str, Any] = {"left": -1, "log": []}

    def step(name: str, path: Any) -> None:
        if state["left"] == 0:
            state["left"] = -1
            raise Crash(f"{name} {path}")
        if state["left"] > 0:
            state["left"] -= 1
        state["log"].append(f"{name} {Path(path).name}")

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        step("rename to", dst)
        real_replace(src, dst, **kw)

    def unlink(path: Any, **kw: Any) -> None:
        step("remove", path)
        real_unlink(path, **kw)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "unlink", unlink)

    def arm(k: int) -> list[str]:
        state["left"], state["log"] = k, []
        return state["log"]

    yield arm
    monkeypatch.setattr(os, "replace", real_replace)
    monkeypatch.setattr(os, "unlink", real_unlink)


def _check_crash_everywhere(start: Path, work: Path, crash_at: Callable[[int], list[str]],
                            jobs: Grid) -> list[str]:
    """Crash the compaction of ``start`` at every file operation in turn (on a fresh copy
    each time); after each crash, every reader sees exactly the rows of before, resume
    reruns nothing, and the next compaction finishes the job. Returns the operations of
    the run that did not crash (one crash point each)."""
    expected = _counted_rows(start)
    aggregate(start)
    summary = (start / SUMMARY).read_bytes()
    k = 0
    while True:
        out = work / f"crash-{k}"
        shutil.copytree(start, out)
        log = crash_at(k)
        try:
            compact(out, rows_per_part=ROWS)
        except Crash:
            pass
        else:
            crash_at(-1)
            assert len(log) == k  # every operation was a crash point
            break
        crash_at(-1)
        where = f"crash at operation {k} (after: {log})"
        assert _counted_rows(out) == expected, where
        assert len(existing_shards(out)) == len(jobs), where
        assert len(plan(jobs, out, "never").to_run) == 0, where
        assert summary_is_current(out), where  # same shards, same fingerprint
        (out / SUMMARY).unlink()
        aggregate(out)
        assert (out / SUMMARY).read_bytes() == summary, where
        compact(out, rows_per_part=ROWS)  # the next run finishes the job
        assert _counted_rows(out) == expected, where
        assert Layout(out).raw_files == [], where
        listed = {p.name for p in Layout(out).parts}
        assert {p.name for p in (out / COMPACTED).iterdir()} == listed | {"index.parquet"}, where
        shutil.rmtree(out)
        k += 1
    assert _counted_rows(out) == expected
    return log


def test_a_crash_at_any_step_of_a_first_compaction_loses_and_doubles_nothing(
    out: Path, tmp_path: Path, crash_at: Callable[[int], list[str]]
) -> None:
    """Prevents lost or double-counted rows when compaction dies between (or inside) its
    steps: writing parts, committing the index, removing the merged shards."""
    ops = _check_crash_everywhere(out, tmp_path, crash_at, expand(SPEC))
    renames = [op for op in ops if op.startswith("rename")]
    assert renames == [f"rename to part-00000{i}.parquet" for i in (1, 2, 3)] + [
        "rename to index.parquet"]
    assert sum(op.startswith("remove") and op.endswith(".parquet") and "part" not in op
               for op in ops) == 6  # the merged shards, after the index


def test_a_crash_at_any_step_of_an_incremental_compaction_loses_and_doubles_nothing(
    swept: Path, out: Path, tmp_path: Path, crash_at: Callable[[int], list[str]]
) -> None:
    """Prevents lost or double-counted rows when a compaction that also rewrites existing
    parts (under half full, or holding a rerun job) dies at any step."""
    compact(out, rows_per_part=ROWS)
    _copy_seed3(swept, out)  # two new jobs
    _rerun(out, expand(SPEC)[0])  # and a rerun of a compacted job
    ops = _check_crash_everywhere(out, tmp_path, crash_at, expand(BIGGER))
    assert "rename to index.parquet" in ops
    assert any(op.startswith("remove part-") for op in ops)  # the replaced part, after


def test_a_killed_compaction_leaves_nothing_that_counts(out: Path) -> None:
    """Prevents a compaction killed mid-write (no cleanup runs) from leaving a file that
    readers count: its temporary part is ignored and the next run removes it."""
    expected = _counted_rows(out)
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from runner.results.compact import compact\n"
        "real = os.replace\n"
        "def die(src, dst, **kw):\n"
        "    if Path(dst).name == 'part-000002.parquet':\n"
        "        os._exit(9)\n"
        "    real(src, dst, **kw)\n"
        "os.replace = die\n"
        f"compact(Path(sys.argv[1]), rows_per_part={ROWS})\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 9, proc.stderr
    left = sorted(p.name for p in (out / COMPACTED).iterdir())
    assert left[0].startswith(".part-000002.parquet.") and left[0].endswith(".tmp")
    assert left[1:] == ["part-000001.parquet"]  # written, never committed
    assert _counted_rows(out) == expected
    result = compact(out, rows_per_part=ROWS)
    assert result.unlisted == 2 and "unlisted file" in result.line()
    assert _counted_rows(out) == expected
    assert sorted(p.name for p in (out / COMPACTED).iterdir()) == [
        "index.parquet", "part-000002.parquet", "part-000003.parquet", "part-000004.parquet"]


def test_a_second_compaction_at_once_is_refused(out: Path) -> None:
    """Prevents two compactions of one folder from deleting each other's new parts."""
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(FbenchError, match="another fbench compact is running"):
            compact(out)
    finally:
        os.close(fd)
    assert Layout(out).parts == []


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: d / "missing", "does not exist"),
        (lambda d: (d / "file").write_text("x") and d / "file", "is a file"),
        (lambda d: (d / "empty").mkdir() or d / "empty", "is not a sweep's output folder"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, make: Callable[[Path], Path],
                                      needle: str) -> None:
    """Prevents a traceback or a vague message when OUT is missing or not a sweep folder,
    and writing anything there."""
    target = make(tmp_path)
    before = _tree(tmp_path)
    result = CliRunner().invoke(app, ["compact", str(target)])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], lines
    assert "Traceback" not in result.output
    assert _tree(tmp_path) == before


def _index_with(out: Path, change: str) -> None:
    """Damage the committed index of ``out`` as ``change`` says: a damaged Parquet index,
    or (a JSON text) the index replaced by a damaged one of format 1."""
    path = index_path(out)
    table = pq.read_table(path)
    if change == "format":
        table = table.replace_schema_metadata({"fbench.index_format": "9"})
    elif change == "part name":
        table = table.set_column(0, "part", pa.array(["../../x.parquet"] * table.num_rows))
    elif change == "job twice":
        table = pa.concat_tables([table, table.slice(0, 1)])
    elif change == "column":
        table = table.drop_columns(["shard"])
    elif change == "not parquet":
        path.write_text("x")
        return
    else:
        path.unlink()
        (out / COMPACTED / "index.json").write_text(change)
        return
    pq.write_table(table, path)


@pytest.mark.parametrize("change", [
    "format", "part name", "job twice", "column", "not parquet",
    '{"format": 1, "parts": [{"name": 3}]}',
    '{"format": 1, "parts": [{"name": "../../x.parquet", "rows": 1, "jobs": {}}]}',
    "not json",
])
def test_a_damaged_index_is_one_line_exit_2_and_its_fix_works(out: Path, change: str) -> None:
    """Prevents an Arrow, JSON or key error traceback (or a path outside OUT) from a
    damaged compaction index, of either format, and a suggested fix that does not work."""
    compact(out)
    _index_with(out, change)
    sweep = ["sweep", "--seeds", "3", "--policies", "keep_all,ebbinghaus", "--workloads",
             "contradiction", "--horizons", "120", "--executor", "inline", "--no-report",
             "--out", str(out)]
    for argv in (["compact", str(out)], ["aggregate", str(out)], sweep):
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
        assert "is not a valid compaction index" in result.stderr
        assert f"remove {out / COMPACTED} and resume the sweep" in result.stderr
    shutil.rmtree(out / COMPACTED)
    result = CliRunner().invoke(app, sweep)
    assert result.exit_code == 0, result.output
    assert "6 run, 0 skipped" in result.stderr


def test_docs_compact_examples_are_true(out: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a README or docs `fbench compact` example that does not run on a sweep's
    folder."""
    import shlex

    from tests.test_docs_examples import fbench_examples

    examples = [c for c in fbench_examples() if c.startswith("fbench compact")
                and "s3://" not in c]  # (object storage: tests/test_object_store.py)
    assert examples
    monkeypatch.chdir(tmp_path)
    for cmd in examples:
        argv = shlex.split(cmd)[1:]
        folder = tmp_path / argv[1]
        if not folder.exists():
            shutil.copytree(out, folder)
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 0, result.output
        assert isinstance(compact(folder), Compaction)


def test_an_index_of_format_1_is_read_and_replaced_by_the_next_compaction(
        swept: Path, out: Path) -> None:
    """Prevents a sweep compacted by an earlier fbench (a JSON index of format 1) from
    becoming unreadable, or keeping its JSON index beside the Parquet one."""
    compact(out, rows_per_part=40)
    before = _counted_rows(out)
    parts = Layout(out).parts
    legacy = {"format": 1, "parts": [
        {"name": p.name, "rows": p.rows,
         "jobs": {j: [s.shard, s.size, s.mtime_ns] for j, s in p.jobs.items()}}
        for p in parts]}
    index_path(out).unlink()
    (out / COMPACTED / "index.json").write_text(json.dumps(legacy))
    assert Layout(out).parts == parts
    assert _counted_rows(out) == before
    _copy_seed3(swept, out)
    compact(out, rows_per_part=40)
    assert not (out / COMPACTED / "index.json").exists() and index_path(out).is_file()
    assert sum(len(p.jobs) for p in Layout(out).parts) == 8
