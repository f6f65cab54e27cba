"""Planning a sweep in its folder: what is done (resume), what to set aside (shards
that do not validate; shards of plugin code that has changed), and refusing a folder
that holds another sweep, all before anything is written; and how long the rest will
take, estimated from the seconds the jobs already done there took (``estimate``)."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from runner.errors import FbenchError
from runner.results.layout import Layout
from runner.results.shard import SCHEMA
from runner.results.sweep_config import read_sweep_record
from runner.results.validate import shard_is_valid
from runner.results.where import ArrowPath, Loc, check_remote_out, dataset_source, location
from runner.spec.jobspec import JobSpec
from runner.sweep.expand import OVERWRITE, SweepSpec
from runner.sweep.grid import Grid, Subset

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
    whole: dict[str, tuple[int, int]] = field(default_factory=dict)


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


def check_same_sweep(out: Loc, spec: SweepSpec, jobs: Iterable[JobSpec],
                     ids: set[str] | None = None) -> list[JobSpec]:
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
    ids = {j.job_id for j in jobs} if ids is None else ids
    try:
        fmt, old, recorded = read_sweep_record(path)
        # (only the jobs this sweep lacks are kept: at a million jobs, the rest is memory)
        others = [job for d in recorded if (job := JobSpec.from_dict(d)).job_id not in ids]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FbenchError(f"{path} is not a sweep record fbench can read ({exc}); {fix}"
                          ) from None
    if fmt != SWEEP_FORMAT:
        raise FbenchError(f"{path} is from another fbench (sweep format {fmt!r}, this one "
                          f"writes {SWEEP_FORMAT}); {fix}")
    if not others:  # (the usual resume: no cell to compare)
        return []
    new = json.loads(json.dumps(spec.to_dict()))
    cells = {j.without_code().job_id for j in jobs}
    if not {j.without_code().job_id for j in others} <= cells:
        raise FbenchError(f"{str(out)!r} holds another sweep ({_differs(old, new)}); {fix}")
    return others


def plan(jobs: Grid, out: Loc, overwrite: str, spec: SweepSpec | None = None) -> Plan:
    """Which jobs to run: resume skips jobs whose shard exists and validates (or is the
    one the commit log stamped: ``runner.results.commits``); a shard that does not
    validate (corrupt, truncated, empty, another job's or a foreign file) is
    quarantined and its job rerun."""
    if overwrite not in OVERWRITE:
        raise FbenchError(f"--overwrite {overwrite!r} is not one of {', '.join(OVERWRITE)}")
    order = [j.job_id for j in jobs]  # (each job's id once: made anew on each pass)
    ids = set(order)
    old_jobs = check_same_sweep(out, spec, jobs, ids) \
        if spec is not None and overwrite != "always" else []
    layout = Layout(out)
    have = layout.sources()
    # jobs of the recorded sweep whose plugin code or workload version changed: set aside
    outdated = {j.job_id for j in old_jobs if j.job_id in have}
    in_parts = sorted(outdated - set(layout.raw))
    if in_parts:
        raise FbenchError(
            f"{len(in_parts)} job(s) whose plugin changed are in compacted parts of "
            f"{str(out)!r} (e.g. {in_parts[0]}); rerun with --overwrite always")
    superseded = sorted(layout.raw[j] for j in outdated)
    stray = [p for j, p in layout.raw.items()
             if j not in ids and j not in outdated and not shard_is_valid(p, j)]
    foreign = sorted(set(have) - ids - outdated - {p.stem for p in stray})
    if foreign and overwrite != "always":
        raise FbenchError(
            f"{str(out)!r} holds {len(foreign)} shard(s) of another sweep (e.g. {foreign[0]}); "
            "use a new --out, or --overwrite always to replace them"
        )
    if overwrite == "always":
        return Plan(jobs, Subset(jobs, np.arange(len(jobs))), 0, [])
    to_run, invalid = array("q"), []  # (positions in the grid: 8 bytes a job)
    for i, job_id in enumerate(order):
        if job_id not in have:
            to_run.append(i)
        elif not layout.is_valid(job_id):
            invalid.append(job_id)
            to_run.append(i)
    del order, ids
    if (invalid or stray) and overwrite == "never":
        first = invalid[0] if invalid else stray[0].name
        raise FbenchError(
            f"{len(invalid) + len(stray)} shard(s) in {str(out)!r} do not validate (e.g. "
            f"{first}); rerun with --overwrite failed to quarantine them and rerun their jobs"
        )
    bad = [layout.raw[j] for j in invalid if j in layout.raw] + stray
    return Plan(jobs, Subset(jobs, np.frombuffer(to_run, dtype=np.int64)),
                len(jobs) - len(to_run), invalid, sorted(bad), superseded, layout.verified)


# -- the dry run's time estimate ---------------------------------------------------

Cell = tuple[str, str]  # (workload, policy): the jobs a measured median stands for


def sweep_workers(executor: str, address: str | None, max_in_flight: int | None
                  ) -> int | None:
    """How many jobs the executor runs at once: inline one; the embedded Ray one per CPU
    of this machine (at most ``max_in_flight``); None when that is not known before the
    executor starts (a Ray cluster, a plugin executor)."""
    if executor == "inline":
        return 1
    remote = address or os.environ.get("RAY_ADDRESS") or None
    if executor == "ray" and remote in (None, "local"):
        cpus = os.cpu_count() or 1
        return min(cpus, max_in_flight) if max_in_flight else cpus
    return None


def measured_seconds(p: Plan, out: Loc) -> dict[str, tuple[Cell, float]]:
    """``job_id -> ((workload, policy), wall_s of its final row)`` for every job of the
    plan whose rows in OUT are whole (done, or to be replaced by ``--overwrite always``)."""
    lay = Layout(out)
    sources = lay.sources()
    pending = {j.job_id for j in p.to_run}
    ids = [j.job_id for j in p.jobs if j.job_id in sources
           and (j.job_id not in pending or lay.is_valid(j.job_id))]
    if not ids:
        return {}
    paths, filesystem = dataset_source(sorted({sources[j] for j in ids}, key=str))
    try:
        table = ds.dataset(paths, schema=SCHEMA, format="parquet",
                           filesystem=filesystem).to_table(
            columns=["job_id", "workload", "policy", "wall_s"],
            filter=ds.field("is_final") & ds.field("job_id").isin(ids))
    except (OSError, pa.ArrowException) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise FbenchError(f"cannot read the shards in {out / 'shards'}: {first}") from None
    return {r["job_id"]: ((r["workload"], r["policy"]), r["wall_s"])
            for r in table.to_pylist() if r["wall_s"] is not None and r["wall_s"] >= 0}


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Estimate:
    """The dry run's estimate of the jobs left: each costs the median measured seconds
    of its (workload, policy) done in OUT, else the median of every measured job."""

    executor: str
    to_run: int
    measured: int          # jobs of this grid with a measured wall_s in OUT
    job_seconds: float     # the jobs to run, one after another
    longest_s: float       # the longest of them: no sweep ends before it
    workers: int | None    # jobs run at once (None: not known before the executor starts)
    fallback: int = 0      # jobs to run of cells without a measured job
    overall_s: float = 0.0  # the median of every measured job (what those cost)

    def wall_seconds(self) -> float | None:
        if self.workers is None:
            return None
        return max(self.job_seconds / min(self.workers, self.to_run), self.longest_s)

    def line(self) -> str:
        if not self.to_run:
            return "estimate: nothing to run"
        if not self.measured:
            return ("no estimate: no job of this grid has run yet; run a few first (e.g. this "
                    "sweep with --seeds 1 and the same --out: the full sweep resumes after "
                    "them), then --dry-run again")
        jobs = f"{_duration(self.job_seconds)} of job time for {self.to_run} job(s) to run"
        wall = self.wall_seconds()
        if wall is None:
            head = (f"estimate: {jobs}, shared by the {self.executor} executor's workers "
                    "(how many is not known before it starts)")
        else:
            startup = ", plus Ray's start-up" if self.executor == "ray" else ""
            head = (f"estimate: ~{_duration(wall)} on {self.workers} worker(s) of the "
                    f"{self.executor} executor ({jobs}{startup})")
        basis = (f"basis: the median wall_s per workload × policy of {self.measured} job(s) "
                 "of this grid measured in OUT")
        if self.fallback:
            basis += (f"; {self.fallback} job(s) of unmeasured cells at the median of all "
                      f"measured, {_duration(self.overall_s)}")
        return f"{head}; {basis}"


def estimate(p: Plan, out: Loc, executor: str, workers: int | None) -> Estimate:
    """How long the plan's jobs to run will take, from what this grid's jobs took in OUT
    (``measured_seconds``); nothing measured is no estimate, never a made-up cost."""
    walls = measured_seconds(p, out)
    if not walls or not p.to_run:
        return Estimate(executor, len(p.to_run), len(walls), 0.0, 0.0, workers)
    by_cell: dict[Cell, list[float]] = {}
    for cell, seconds in walls.values():
        by_cell.setdefault(cell, []).append(seconds)
    medians = {cell: statistics.median(v) for cell, v in by_cell.items()}
    overall = statistics.median(s for _, s in walls.values())
    costs = [medians.get((j.workload, j.policy), overall) for j in p.to_run]
    fallback = sum((j.workload, j.policy) not in medians for j in p.to_run)
    return Estimate(executor, len(p.to_run), len(walls), sum(costs), max(costs), workers,
                    fallback, overall)
