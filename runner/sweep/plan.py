"""Planning a sweep in its folder: what is done (resume), what to set aside (shards
that do not validate; shards of plugin code that has changed), and refusing a folder
that holds another sweep, all before anything is written (how long the rest will take:
``runner.sweep.estimate``)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.commits import Stamps
from runner.results.layout import FINALS, Layout
from runner.results.samples import DELETIONS_FILE, QUERIES_FILE, SAMPLES
from runner.results.sweep_config import read_sweep_record
from runner.results.where import (
    ArrowPath,
    Loc,
    arrow_source,
    check_remote_out,
    files_stat,
    location,
)
from runner.spec.jobspec import JobSpec
from runner.sweep.expand import OVERWRITE, SweepSpec
from runner.sweep.grid import Grid, Subset
from runner.sweep.scan import scan

SWEEP_FORMAT = 1  # sweep.json's layout: {"format", "spec", "jobs"}


def plugins(jobs: Iterable[JobSpec]) -> dict[str, str]:
    """``{name: where its code came from}`` of every plugin the jobs run."""
    out = {}
    for job in jobs:
        roles = dict(job.code)
        if "memory" in roles:
            out[job.policy] = roles["memory"]
        if "workload" in roles:
            out[job.workload] = roles["workload"]
    return dict(sorted(out.items()))


def check_out_dir(out: Loc) -> None:
    """OUT must be a writable folder (created if missing); fail before writing anything."""
    if isinstance(out, ArrowPath):
        return check_remote_out(out)
    if out.exists() and not out.is_dir():
        raise FbenchError(f"--out {str(out)!r} is a file; give a folder")
    probe_parent = out if out.exists() else next(p for p in out.parents if p.exists())
    if not os.access(probe_parent, os.W_OK | os.X_OK):
        raise FbenchError(f"--out {str(out)!r} is not writable; choose another folder")
    try:  # (access() says yes to root on /proc, /sys or a read-only mount: try it)
        probe = tempfile.mkdtemp(prefix=".fbench-probe-", dir=probe_parent)
    except OSError as exc:
        raise FbenchError(f"--out {str(out)!r} is not writable ({exc.strerror}); choose "
                          "another folder") from None
    os.rmdir(probe)


def existing_shards(out: Loc) -> dict[str, Loc]:
    """job_id -> the file holding the job's rows: its shard, or (after ``fbench compact``)
    the compacted part that holds it (``runner.results.layout``)."""
    return Layout(out).sources()


@dataclass
class Plan:
    jobs: Grid
    to_run: Subset
    skipped: int
    invalid: list[str]
    # files in OUT/shards that do not validate (this sweep's or stray): moved aside
    # to OUT/quarantine when the sweep starts, never deleted
    quarantine: list[Loc] = field(default_factory=list)
    # shards of jobs whose plugin code or workload version has changed: moved to
    # OUT/superseded (the new code's jobs run instead; the old rows are never aggregated
    # with the new)
    superseded: list[Loc] = field(default_factory=list)
    # job_id -> (size, mtime_ns) of each shard found whole: the commit log the sweep
    # starts from (``runner.results.commits``; emptied once written)
    whole: Stamps = field(default_factory=Stamps.empty)


def _differs(old: dict[str, object], new: dict[str, object]) -> str:
    """The first field two sweep specs disagree on, shown briefly."""
    def short(v: object) -> str:
        text = json.dumps(v, sort_keys=True)
        return text if len(text) <= 40 else text[:37] + "..."

    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            there, now = (short(d.get(key, "(none)")) for d in (old, new))
            return f"{key}: {there} there, {now} now"
    return "the same spec, expanded to other jobs by another fbench"


def check_same_sweep(out: Loc, spec: SweepSpec, jobs: Grid) -> list[JobSpec]:
    """The jobs of the sweep recorded in OUT (``sweep.json``) that are not among ``jobs``
    (their plugin code or workload version has changed); none if there is no record.

    A folder holding another sweep (an older format, or a spec whose jobs are not all
    among this one's) is refused before anything is written; ``--overwrite always``
    replaces it. A sweep that grows one (more seeds, another policy) resumes in it:
    every job it held is still one of its jobs, up to the plugin code that runs it
    (a job whose plugin changed is the same cell, run again)."""
    path = location(out) / "sweep.json"
    if not path.is_file():
        return []
    fix = "use a new --out, or --overwrite always to replace its shards"
    try:
        fmt, old, recorded = read_sweep_record(path)
        # (only the jobs this sweep lacks are kept: at a million jobs, the rest is memory)
        others = [job for d in recorded if not jobs.has(job := JobSpec.from_dict(d))]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FbenchError(f"{path} is not a sweep record fbench can read ({exc}); {fix}"
                          ) from None
    if fmt != SWEEP_FORMAT:
        raise FbenchError(f"{path} is from another fbench (sweep format {fmt!r}, this one "
                          f"writes {SWEEP_FORMAT}); {fix}")
    if not others:  # (the usual resume: no cell to compare)
        return []
    new = json.loads(json.dumps(spec.to_dict()))
    if not all(jobs.has(j, any_code=True) for j in others):
        raise FbenchError(f"{str(out)!r} holds another sweep ({_differs(old, new)}); {fix}")
    return others


def has_samples(jobs: Grid, out: Loc) -> np.ndarray:
    """For each job of ``jobs``, whether both its samples files are in ``OUT/samples``
    (one walk of that folder)."""
    both: dict[str, int] = {}
    for path, _ in files_stat(location(out) / SAMPLES):
        for kind in (QUERIES_FILE, DELETIONS_FILE):
            if path.name.endswith(f".{kind}"):
                name = path.name.removesuffix(f".{kind}")
                both[name] = both.get(name, 0) + 1
    found = np.zeros(len(jobs), dtype=bool)
    if both:
        for i, job in enumerate(jobs):
            found[i] = both.get(job.job_id) == 2
    return found


def published(jobs: Grid, out: Loc, outdated: set[str]) -> np.ndarray:
    """A bool per job: its final row is in OUT's published rows (``finals.parquet``,
    ``runner.results.finals``), so it is done as surely as a shard (jobs are
    deterministic), unless its plugin code changed (``outdated``): a sweep resumed in a
    published folder runs only what it lacks."""
    path = out / FINALS
    if not path.is_file():
        return np.zeros(len(jobs), dtype=bool)
    ids = set(pq.read_table(arrow_source(path), columns=["job_id"]).column(0).to_pylist())
    ids -= outdated
    return np.fromiter((j.job_id in ids for j in jobs), dtype=bool, count=len(jobs))


def plan(jobs: Grid, out: Loc, overwrite: str, spec: SweepSpec | None = None,
         samples: bool = False) -> Plan:
    """Which jobs to run: resume skips jobs whose shard exists and validates (or is the
    one the commit log stamped: ``runner.results.commits``), and, with ``samples``, whose
    evidence is in ``OUT/samples`` too; a shard that does not validate (corrupt,
    truncated, empty, another job's or a foreign file) is quarantined and its job rerun.
    OUT is read as a stream (``runner.sweep.scan``)."""
    if overwrite not in OVERWRITE:
        raise FbenchError(f"--overwrite {overwrite!r} is not one of {', '.join(OVERWRITE)}")
    if overwrite == "always":  # (everything in OUT goes: nothing to read)
        return Plan(jobs, Subset(jobs, np.arange(len(jobs))), 0, [])
    out = location(out)
    # jobs of the recorded sweep whose plugin code or workload version changed: set aside
    outdated = {j.job_id for j in check_same_sweep(out, spec, jobs)} if spec else set()
    found = scan(jobs, out, outdated)
    if found.in_parts:
        raise FbenchError(
            f"{len(found.in_parts)} job(s) whose plugin changed are in compacted parts of "
            f"{str(out)!r} (e.g. {min(found.in_parts)}); rerun with --overwrite always")
    if found.foreign:
        raise FbenchError(
            f"{str(out)!r} holds {found.foreign} shard(s) of another sweep (e.g. "
            f"{found.first_foreign}); use a new --out, or --overwrite always to replace them"
        )
    invalid = [j for _, j in found.invalid]
    if (invalid or found.stray) and overwrite == "never":
        first = invalid[0] if invalid else sorted(found.stray)[0].name
        raise FbenchError(
            f"{len(invalid) + len(found.stray)} shard(s) in {str(out)!r} do not validate "
            f"(e.g. {first}); rerun with --overwrite failed to quarantine them and rerun "
            "their jobs"
        )
    done = found.done | published(jobs, out, outdated)
    done = done & has_samples(jobs, out) if samples else done
    to_run = Subset(jobs, np.flatnonzero(~done))
    return Plan(jobs, to_run, len(jobs) - len(to_run), invalid,
                sorted(found.bad + found.stray), sorted(found.superseded), found.whole)
