"""The commit log (``runner.results.commits``): resume trusts a shard whose size and
mtime are the ones its writer stamped, and reads the footer of every other one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import runner.results.commits as commits
import runner.results.layout as layout
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
    real = layout.shard_is_valid

    def counted(path: object, job_id: str) -> bool:
        reads.append(job_id)
        return real(path, job_id)  # type: ignore[arg-type]

    monkeypatch.setattr(layout, "shard_is_valid", counted)
    return reads


def _listed(out: Path) -> dict[str, tuple[int, int]]:
    return {job: (p.stat().st_size, p.stat().st_mtime_ns)
            for job, p in existing_shards(out).items()}


def test_a_sweep_stamps_every_shard_and_resume_reads_none(tmp_path: Path,
                                                          footer_reads: list[str]) -> None:
    """Prevents a resume that reopens every shard (at 100,000 shards, minutes), or a log
    whose stamps are not the shards' as they lie on disk."""
    _run(tmp_path)
    assert read_commits(tmp_path) == _listed(tmp_path)
    p = plan(expand(TINY), tmp_path, "failed")
    assert (p.skipped, list(p.to_run), footer_reads) == (4, [], [])


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
    assert read_commits(tmp_path) == _listed(tmp_path)


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
    assert read_commits(tmp_path) == _listed(tmp_path)


def test_the_log_is_flushed_in_segments_and_later_stamps_win(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a killed driver from losing every stamp (they are flushed as it goes), or
    an old stamp of a rerun job hiding its new one."""
    monkeypatch.setattr(commits, "FLUSH_STAMPS", 2)
    log = CommitLog(tmp_path)
    log.add("a", (10, 1))
    assert read_commits(tmp_path) == {}
    log.add("b", (20, 2))
    assert read_commits(tmp_path) == {"a": (10, 1), "b": (20, 2)}
    log.add("a", (11, 3))  # pending: a killed driver would lose only this one
    assert read_commits(tmp_path) == {"a": (10, 1), "b": (20, 2)}
    log.flush()
    assert read_commits(tmp_path) == {"a": (11, 3), "b": (20, 2)}
    assert len(list((tmp_path / COMMITS).iterdir())) == 2


def test_overwrite_always_starts_a_new_log(tmp_path: Path) -> None:
    """Prevents stamps of removed shards from outliving --overwrite always."""
    _run(tmp_path)
    before = read_commits(tmp_path)
    _run(tmp_path, overwrite="always")
    after = read_commits(tmp_path)
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
