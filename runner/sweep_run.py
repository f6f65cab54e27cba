"""Running a sweep: plan (resume), execute, write shards atomically, keep a manifest.

The folder ``OUT`` holds ``sweep.json`` (the expanded spec), ``manifest.json``
(versions, times, counts, failures) and ``shards/workload=W/policy=P/JOB.parquet``
(or, after ``fbench compact``, ``compacted/``: see ``runner.layout``).
Every check on the input happens before anything is written.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runner.atomic import write_json
from runner.errors import FbenchError, unknown
from runner.layout import Layout, quarantine, remove_all
from runner.provenance import git_commit, provenance, versions
from runner.shard import Outcome, shard_is_valid, shard_path, write_shard
from runner.spec import JobSpec
from runner.sweep import OVERWRITE, SweepSpec

# A job that fails (raises) runs at most this many times in one sweep; a worker or node
# that dies is Ray's to retry (cluster.ray_executor.MAX_RETRIES), then counts as a failure.
JOB_ATTEMPTS = 3
SWEEP_FORMAT = 1  # sweep.json's layout: {"format", "spec", "jobs"}

# Below this much estimated work, Ray's ~5 s start-up costs more than it saves.
INLINE_BELOW_S = 20.0
JOB_SECONDS_AT_DEFAULT_HORIZON = 0.25


def estimated_seconds(jobs: list[JobSpec]) -> float:
    """Rough work estimate: a job costs ~0.25 s per default horizon of its workload."""
    from workloads import WORKLOADS

    return sum(JOB_SECONDS_AT_DEFAULT_HORIZON * j.horizon / WORKLOADS[j.workload].default_horizon
               for j in jobs)


def choose_executor(requested: str, address: str | None, jobs: list[JobSpec]) -> str:
    """``auto``: Ray when an address is given or the work is worth Ray's start-up
    (estimated >= 20 s), else inline. An explicit choice is kept."""
    if requested != "auto":
        return requested
    if address or os.environ.get("RAY_ADDRESS"):
        return "ray"
    return "ray" if estimated_seconds(jobs) >= INLINE_BELOW_S else "inline"


def check_out_dir(out: Path) -> None:
    """OUT must be a writable folder (created if missing); fail before writing anything."""
    if out.exists() and not out.is_dir():
        raise FbenchError(f"--out {str(out)!r} is a file; give a folder")
    probe_parent = out if out.exists() else next(p for p in out.parents if p.exists())
    if not os.access(probe_parent, os.W_OK | os.X_OK):
        raise FbenchError(f"--out {str(out)!r} is not writable; choose another folder")


def existing_shards(out: Path) -> dict[str, Path]:
    """job_id -> the file holding the job's rows: its shard, or (after ``fbench compact``)
    the compacted part that holds it (``runner.layout``)."""
    return Layout(out).sources()


@dataclass
class Plan:
    jobs: list[JobSpec]
    to_run: list[JobSpec]
    skipped: int
    invalid: list[str]
    # files in OUT/shards that do not validate (this sweep's or stray): moved aside
    # to OUT/quarantine when the sweep starts, never deleted
    quarantine: list[Path] = field(default_factory=list)


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


def check_same_sweep(out: Path, spec: SweepSpec, jobs: list[JobSpec]) -> None:
    """A folder holding another sweep (``sweep.json``: an older format, or a spec whose
    jobs are not all among this one's) is refused before anything is written;
    ``--overwrite always`` replaces it. A sweep that grows one (more seeds, another
    policy) resumes in it: every job it held is still one of its jobs."""
    path = Path(out) / "sweep.json"
    if not path.is_file():
        return
    fix = "use a new --out, or --overwrite always to replace its shards"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        old = doc["spec"]
        fmt = doc.get("format", SWEEP_FORMAT)  # sweep.json before "format" was format 1
        if not isinstance(old, dict):
            raise TypeError("spec is not a table")
        old_ids = {JobSpec.from_dict(j).job_id for j in doc["jobs"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FbenchError(f"{path} is not a sweep record fbench can read ({exc}); {fix}"
                          ) from None
    if fmt != SWEEP_FORMAT:
        raise FbenchError(f"{path} is from another fbench (sweep format {fmt!r}, this one "
                          f"writes {SWEEP_FORMAT}); {fix}")
    new = json.loads(json.dumps(spec.to_dict()))
    if not old_ids <= {j.job_id for j in jobs}:
        raise FbenchError(f"{str(out)!r} holds another sweep ({_differs(old, new)}); {fix}")


def plan(jobs: list[JobSpec], out: Path, overwrite: str, spec: SweepSpec | None = None
         ) -> Plan:
    """Which jobs to run: resume skips jobs whose shard exists and validates; a shard
    that does not validate (corrupt, truncated, empty, another job's or a foreign
    file) is quarantined and its job rerun."""
    if overwrite not in OVERWRITE:
        raise FbenchError(f"--overwrite {overwrite!r} is not one of {', '.join(OVERWRITE)}")
    if spec is not None and overwrite != "always":
        check_same_sweep(out, spec, jobs)
    layout = Layout(out)
    have = layout.sources()
    ids = {j.job_id for j in jobs}
    stray = [p for j, p in layout.raw.items() if j not in ids and not shard_is_valid(p, j)]
    foreign = sorted(set(have) - ids - {p.stem for p in stray})
    if foreign and overwrite != "always":
        raise FbenchError(
            f"{str(out)!r} holds {len(foreign)} shard(s) of another sweep (e.g. {foreign[0]}); "
            "use a new --out, or --overwrite always to replace them"
        )
    if overwrite == "always":
        return Plan(jobs, list(jobs), 0, [])
    to_run, invalid = [], []
    for job in jobs:
        if job.job_id not in have:
            to_run.append(job)
        elif not layout.is_valid(job.job_id):
            invalid.append(job.job_id)
            to_run.append(job)
    if (invalid or stray) and overwrite == "never":
        first = invalid[0] if invalid else stray[0].name
        raise FbenchError(
            f"{len(invalid) + len(stray)} shard(s) in {str(out)!r} do not validate (e.g. "
            f"{first}); rerun with --overwrite failed to quarantine them and rerun their jobs"
        )
    bad = [layout.raw[j] for j in invalid if j in layout.raw] + stray
    return Plan(jobs, to_run, len(jobs) - len(to_run), invalid, sorted(bad))


@dataclass
class SweepResult:
    out: Path
    total: int
    done: int = 0
    skipped: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    executor: str = ""
    quarantined: list[Path] = field(default_factory=list)
    retried: int = 0  # runs of jobs that had failed before in this sweep


@dataclass(frozen=True)
class Prepared:
    """A sweep checked end to end and ready to run; nothing written yet."""

    spec: SweepSpec
    out: Path
    plan: Plan
    executor: str
    address: str | None
    max_in_flight: int | None
    overwrite: str


def prepare(
    spec: SweepSpec,
    jobs: list[JobSpec],
    out: Path,
    *,
    executor: str = "auto",
    address: str | None = None,
    max_in_flight: int | None = None,
    overwrite: str = "failed",
) -> Prepared:
    """Every check on the input, before anything is written."""
    from cluster import EXECUTORS

    check_out_dir(out)
    p = plan(jobs, out, overwrite, spec)
    name = choose_executor(executor, address, p.to_run)
    if name not in EXECUTORS:
        raise FbenchError(unknown(name, "executor", [*EXECUTORS, "auto"]))
    if max_in_flight is not None and max_in_flight <= 0:
        raise FbenchError(f"--max-in-flight must be positive, got {max_in_flight}")
    return Prepared(spec, out, p, name, address, max_in_flight, overwrite)


def _write_start(prepared: Prepared, result: SweepResult) -> None:
    """Create OUT, clear what this run replaces, write sweep.json and the manifest."""
    out, p = prepared.out, prepared.plan
    out.mkdir(parents=True, exist_ok=True)
    if prepared.overwrite == "always":
        remove_all(out)  # shards and compacted parts
    for tmp in (out / "shards").glob("workload=*/policy=*/.*.tmp"):
        tmp.unlink(missing_ok=True)  # left by a killed writer; never a valid shard
    result.quarantined = quarantine(out, p.quarantine)
    write_json(out / "sweep.json", {"format": SWEEP_FORMAT, "spec": prepared.spec.to_dict(),
                                    "jobs": [j.to_dict() for j in p.jobs]})
    write_json(out / "manifest.json", {
        "versions": versions(), "git_commit": git_commit(), "executor": prepared.executor,
        "address": prepared.address or os.environ.get("RAY_ADDRESS") or None,
        "started": datetime.now(UTC).isoformat(timespec="seconds"), "ended": None,
        "counts": {"total": len(p.jobs), "done": 0, "skipped": p.skipped, "failed": 0},
        "failures": [],
        "quarantined": [q.relative_to(out).as_posix() for q in result.quarantined],
    })


def run_sweep(
    prepared: Prepared, progress: Callable[[SweepResult], None] | None = None
) -> SweepResult:
    """Run the jobs that are not done yet; every job ends as a shard or a recorded failure.

    A job that fails is run again after the others, up to ``JOB_ATTEMPTS`` runs in all;
    what still fails is recorded in the manifest with its last traceback. A shard that
    cannot be written (disk full, folder gone) stops the sweep with one line: the shards
    already written stay valid, and a rerun resumes after them.
    """
    from cluster import EXECUTORS, ExecutorError

    out, p, name, address = prepared.out, prepared.plan, prepared.executor, prepared.address
    jobs = p.jobs
    result = SweepResult(out, len(jobs), skipped=p.skipped, executor=name)
    ex = None
    if p.to_run:
        ex = EXECUTORS[name](address=address, max_in_flight=prepared.max_in_flight,
                             provenance=provenance(),
                             job_seconds=estimated_seconds(p.to_run) / len(p.to_run))
    start = time.perf_counter()
    try:
        if ex is not None:
            ex.start()  # a bad address fails here, before anything is written
        _write_start(prepared, result)
        if progress:
            progress(result)
        by_id = {j.job_id: j for j in p.to_run}
        runs: Counter[str] = Counter()  # job -> its failed runs so far

        def on_outcome(o: Outcome) -> None:
            job = by_id[o.job_id]
            if o.table is not None:
                write_shard(shard_path(out, job), o.table)
                result.done += 1
            else:
                runs[o.job_id] += 1
                result.failed.append({"job_id": o.job_id, "spec": job.canonical_json(),
                                      "attempts": runs[o.job_id],
                                      "error": o.error or "unknown error"})
            if progress:
                progress(result)

        batch = [j.canonical_json() for j in p.to_run]
        for attempt in range(1, JOB_ATTEMPTS + 1):
            if ex is None or not batch:
                break
            if attempt > 1:  # the failed jobs again, after everything else
                result.retried += len(batch)
                result.failed = []
            ex.run(batch, on_outcome)
            batch = [f["spec"] for f in result.failed]
        result.failed.sort(key=lambda f: f["job_id"])
    except ExecutorError as exc:
        raise FbenchError(str(exc)) from None
    except OSError as exc:
        raise FbenchError(
            f"cannot write to {str(out)!r}: {exc.strerror or exc}; the {result.done} "
            "shard(s) written stay valid: free space (or fix the folder) and rerun the "
            "same command to resume") from None
    finally:
        if ex is not None:
            ex.close()
    try:
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["ended"] = datetime.now(UTC).isoformat(timespec="seconds")
        manifest["seconds"] = round(time.perf_counter() - start, 3)
        manifest["counts"] = {"total": len(jobs), "done": result.done,
                              "skipped": result.skipped, "failed": len(result.failed)}
        manifest["failures"] = result.failed
        manifest["retried"] = result.retried
        write_json(out / "manifest.json", manifest)
    except OSError as exc:
        raise FbenchError(
            f"cannot write {out / 'manifest.json'}: {exc.strerror or exc}; the "
            f"{result.done} shard(s) written stay valid: free space and rerun to resume"
        ) from None
    return result
