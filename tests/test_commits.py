"""The commit log (``runner.results.commits``): resume trusts a shard whose size and
mtime are the ones its writer stamped, and reads the footer of every other one."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import runner.results.commits as commits
import runner.sweep.scan as scan
from runner.errors import FbenchError
from runner.results.commits import COMMITS, CommitLog, read_commits, same_stamp
from runner.sweep.expand import SweepSpec, expand
from runner.sweep.plan import existing_shards, plan
from runner.sweep.run import prepare, run_sweep

TINY = SweepSpec(seeds=(0, 1), policies=("keep_all", "ebbinghaus"),
                 workloads=("contradiction",), horizons=("120",))


def _run(out: Path, overwrite: str = "failed") -> None:
    run_sweep(prepare(TINY, expand(TINY), out, executor="inline", overwrite=overwrite))


@pytest.fixture
def footer_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The job ids whose shard footers the resume planner reads."""
    reads: list[str] = []
    real = scan.shard_is_valid

    def counted(path: object, job_id: str) -> bool:
        reads.append(job_id)
        return real(path, job_id)  # type: ignore[arg-type]

    monkeypatch.setattr(scan, "shard_is_valid", counted)
    return reads


def _listed(out: Path) -> dict[str, tuple[int, int]]:
    return {job: (p.stat().st_size, p.stat().st_mtime_ns)
            for job, p in existing_shards(out).items()}


def test_a_sweep_stamps_every_shard_and_resume_reads_none(tmp_path: Path,
                                                          footer_reads: list[str]) -> None:
    """Prevents a resume that reopens every shard (at 100,000 shards, minutes), or a log
    whose stamps are not the shards' as they lie on disk."""
    _run(tmp_path)
    assert read_commits(tmp_path).as_dict() == _listed(tmp_path)
    p = plan(expand(TINY), tmp_path, "failed")
    assert (p.skipped, list(p.to_run), footer_reads) == (4, [], [])


def test_resume_reads_out_one_partition_at_a_time(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a resume scan that lists every shard of OUT at once (at a million shards,
    gigabytes of listing held together): each listing is of one workload × policy
    folder, and a folder of a policy this sweep does not run is still seen (refused)."""
    _run(tmp_path)
    listed: list[str] = []
    real = scan.files_stat

    def recorded(root: Path, recursive: bool = True) -> Iterator[tuple[Path, Any]]:
        if recursive:
            listed.append(root.relative_to(tmp_path / "shards").as_posix())
        return real(root, recursive)  # type: ignore[return-value]

    monkeypatch.setattr(scan, "files_stat", recorded)
    assert len(plan(expand(TINY), tmp_path, "failed").to_run) == 0
    assert listed == ["workload=contradiction/policy=ebbinghaus",
                      "workload=contradiction/policy=keep_all"]
    smaller = SweepSpec(seeds=(0, 1), policies=("keep_all",), workloads=("contradiction",),
                        horizons=("120",))
    with pytest.raises(FbenchError, match="holds 2 shard"):
        plan(expand(smaller), tmp_path, "failed")


def test_a_shard_changed_after_its_stamp_is_read_again(tmp_path: Path,
                                                       footer_reads: list[str]) -> None:
    """Prevents the log from vouching for a file changed since: a later mtime (same size)
    sends it to the footer check; a corrupt one is rerun, and its new shard stamped."""
    _run(tmp_path)
    shards = sorted(existing_shards(tmp_path).values())
    touched, corrupt = shards[0], shards[1]
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    corrupt.write_bytes(b"PAR1 not parquet PAR1")
    p = plan(expand(TINY), tmp_path, "failed")
    assert sorted(footer_reads) == sorted([touched.stem, corrupt.stem])
    assert (p.skipped, [j.job_id for j in p.to_run]) == (3, [corrupt.stem])
    _run(tmp_path)
    assert read_commits(tmp_path).as_dict() == _listed(tmp_path)


@pytest.mark.parametrize("damage", ["garbage", "removed", "another format"])
def test_a_lost_or_unreadable_log_costs_footer_reads_not_answers(
        damage: str, tmp_path: Path, footer_reads: list[str]) -> None:
    """Prevents a damaged log from failing a resume or changing what it skips: every shard
    is read from its footer instead, and the next sweep writes the log whole again."""
    _run(tmp_path)
    (segment,) = (tmp_path / COMMITS).iterdir()
    if damage == "garbage":
        segment.write_text("{not json")
    elif damage == "removed":
        segment.unlink()
    else:
        segment.write_text(json.dumps({"format": 99, "shards": {}}))
    p = plan(expand(TINY), tmp_path, "failed")
    assert (p.skipped, len(footer_reads)) == (4, 4)
    _run(tmp_path)
    assert len(list((tmp_path / COMMITS).iterdir())) == 1
    assert read_commits(tmp_path).as_dict() == _listed(tmp_path)


def test_the_log_is_flushed_in_segments_and_later_stamps_win(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a killed driver from losing every stamp (they are flushed as it goes), or
    an old stamp of a rerun job hiding its new one."""
    monkeypatch.setattr(commits, "FLUSH_STAMPS", 2)
    log = CommitLog(tmp_path)
    log.add("a", (10, 1))
    assert read_commits(tmp_path).as_dict() == {}
    log.add("b", (20, 2))
    assert read_commits(tmp_path).as_dict() == {"a": (10, 1), "b": (20, 2)}
    log.add("a", (11, 3))  # pending: a killed driver would lose only this one
    assert read_commits(tmp_path).as_dict() == {"a": (10, 1), "b": (20, 2)}
    log.flush()
    assert read_commits(tmp_path).as_dict() == {"a": (11, 3), "b": (20, 2)}
    assert len(list((tmp_path / COMMITS).iterdir())) == 2


def test_a_segment_reads_line_by_line_or_whole_and_a_broken_one_counts_for_nothing(
        tmp_path: Path) -> None:
    """Prevents a log that only reads in the layout this fbench writes (a segment of the
    same format in any JSON layout counts), and a segment cut short or with a foreign
    line vouching for some of its shards (it is skipped whole)."""
    folder = tmp_path / COMMITS
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps({"format": 1, "shards": {"a": [1, 2]}}))
    (folder / "2.json").write_text('{"format": 1, "shards": {\n"b": [3, 4],\n"c": [5, 6]\n')
    (folder / "3.json").write_text('{"format": 1, "shards": {\n"d": [3, 4],\nd: 5\n}}\n')
    (folder / "4.json").write_text('{"format": 1, "shards": {\n"e": [7, 8],\n"a": [9, 10]\n}}\n')
    assert read_commits(tmp_path).as_dict() == {"a": (9, 10), "e": (7, 8)}


def test_overwrite_always_starts_a_new_log(tmp_path: Path) -> None:
    """Prevents stamps of removed shards from outliving --overwrite always."""
    _run(tmp_path)
    before = read_commits(tmp_path).as_dict()
    _run(tmp_path, overwrite="always")
    after = read_commits(tmp_path).as_dict()
    assert after == _listed(tmp_path) and set(after) == set(before) and after != before


def test_an_object_store_stamp_matches_to_the_second() -> None:
    """Prevents a remote shard from never matching its stamp (a HEAD request reports
    whole seconds; a listing may report milliseconds) or a local one from matching a
    different mtime."""
    assert same_stamp((5, 7_000_000_000), (5, 7_123_000_000), remote=True)
    assert not same_stamp((5, 7_000_000_000), (5, 8_000_000_000), remote=True)
    assert not same_stamp((5, 7_000_000_000), (5, 7_000_000_001), remote=False)
    assert not same_stamp((5, 7), (6, 7), remote=False)
    assert not same_stamp(None, (6, 7), remote=False)
