"""Running a sweep: execute the plan (``runner.sweep.plan``), write shards atomically,
keep a manifest.

The folder ``OUT`` holds ``sweep.json`` (the expanded spec), ``manifest.json``
(versions, times, counts, failures) and ``shards/workload=W/policy=P/JOB.parquet``
(or, after ``fbench compact``, ``compacted/``: see ``runner.results.layout``).
Every check on the input happens before anything is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cluster.base import Outcome
from runner.errors import FbenchError, unknown
from runner.job.execute import PLUGIN_ERROR, STORAGE_ERROR, job_task, shipped_packages
from runner.job.provenance import git_commit, provenance, versions
from runner.results.atomic import write_chunks, write_json
from runner.results.commits import CommitLog, Stamps, fold_commits
from runner.results.layout import SUPERSEDED, quarantine, remove_all, remove_temporaries
from runner.results.samples import samples_paths, write_samples
from runner.results.shard import shard_path, write_shard
from runner.results.where import ArrowPath, Loc, location, relative
from runner.spec.jobspec import JobSpec
from runner.spec.plugins import plugin_env, plugin_folders
from runner.sweep.expand import SweepSpec
from runner.sweep.grid import Grid, SpecJsons, Subset
from runner.sweep.memories import memory_libraries, record_memories
from runner.sweep.order import run_order
from runner.sweep.plan import SWEEP_FORMAT, Plan, check_out_dir, plan, plugins

# A job that fails (raises) runs at most this many times in one sweep; a worker or node
# that dies is Ray's to retry (cluster.ray_executor.MAX_RETRIES), then counts as a failure.
JOB_ATTEMPTS = 3

# Below this much estimated work, a sweep runs inline: Ray's start-up would cost more
# than it saves (benchmarks/bench_executors.py measures it).
INLINE_BELOW_S = 20.0
# A job's seconds at its workload's default horizon: the per-workload medians of
# README's sweep over every default policy, 2 workers on 2 cores (`python -m
# benchmarks.bench_sweep`, benchmarks/results.json; tests/test_sweep.py keeps them in
# step), and a guess for any other workload.
JOB_SECONDS = {"contradiction": 0.12, "contradiction.retrievable": 0.14, "lifecycle": 0.19,
               "lifecycle.bursty": 0.23, "lifecycle.durable_heavy": 0.29,
               "lifecycle.high_freq_skew": 0.26, "lifecycle.recency_biased": 0.16}
OTHER_JOB_SECONDS = 0.5


def estimated_seconds(jobs: Grid | Subset) -> float:
    """Rough work estimate: a job costs its workload's ``JOB_SECONDS`` per default
    horizon."""
    from workloads import WORKLOADS

    return sum(n * JOB_SECONDS.get(j.workload, OTHER_JOB_SECONDS) * j.horizon
               / WORKLOADS[j.workload].default_horizon for j, n in jobs.weighted())


def choose_executor(requested: str, address: str | None, jobs: Grid | Subset) -> str:
    """``auto``: Ray when an address is given or the work is worth Ray's start-up
    (estimated >= 20 s), else inline. An explicit choice is kept."""
    if requested != "auto":
        return requested
    if address or os.environ.get("RAY_ADDRESS"):
        return "ray"
    return "ray" if estimated_seconds(jobs) >= INLINE_BELOW_S else "inline"


@dataclass
class SweepResult:
    out: Loc
    total: int
    done: int = 0
    skipped: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    executor: str = ""
    quarantined: list[Loc] = field(default_factory=list)
    superseded: list[Loc] = field(default_factory=list)
    retried: int = 0  # runs of jobs that had failed before in this sweep


@dataclass(frozen=True)
class Prepared:
    """A sweep checked end to end and ready to run; nothing written yet."""

    spec: SweepSpec
    out: Loc
    plan: Plan
    executor: str
    address: str | None
    max_in_flight: int | None
    overwrite: str
    shared_out: bool = False  # a local OUT every node mounts at the same path
    samples: bool = False  # the jobs record their evidence (``runner.job.samples``)

    @property
    def workers_write(self) -> bool:
        """The workers write the shards when every worker reaches OUT: object storage, a
        declared shared mount, or the embedded Ray (its workers are on this machine);
        else (inline, or a local OUT on a cluster) the driver writes every shard."""
        embedded = self.executor == "ray" and (
            self.address or os.environ.get("RAY_ADDRESS") or "local") == "local"
        return self.shared_out or isinstance(self.out, ArrowPath) or embedded


def prepare(
    spec: SweepSpec,
    jobs: Grid,
    out: str | Loc,
    *,
    executor: str = "auto",
    address: str | None = None,
    max_in_flight: int | None = None,
    overwrite: str = "failed",
    shared_out: bool = False,
    samples: bool = False,
) -> Prepared:
    """Every check on the input, before anything is written."""
    from cluster import EXECUTORS

    if executor == "inline" and address:
        raise FbenchError(f"--address {address} names a Ray cluster but --executor inline "
                          "runs every job here: drop one of them")
    out = location(out)
    check_out_dir(out)
    p = plan(jobs, out, overwrite, spec, samples)
    name = choose_executor(executor, address, p.to_run)
    if name not in EXECUTORS:
        raise FbenchError(unknown(name, "executor", [*EXECUTORS, "auto"]))
    if max_in_flight is not None and max_in_flight <= 0:
        raise FbenchError(f"--max-in-flight must be positive, got {max_in_flight}")
    if shared_out and isinstance(out, ArrowPath):
        raise FbenchError(f"--shared-out is for a folder every node mounts; {out} is object "
                          "storage, which the workers write to anyway: drop --shared-out")
    return Prepared(spec, out, p, name, address, max_in_flight, overwrite, shared_out,
                    samples)


def sweep_record(spec: SweepSpec, jobs: Iterable[JobSpec]) -> Iterator[str]:
    """``sweep.json``'s text, in pieces: the format, the spec, then the jobs, one per line
    (so a million jobs encode at the JSON encoder's C speed, are written as they are
    encoded, and still read line by line)."""
    head = json.dumps({"format": SWEEP_FORMAT, "spec": spec.to_dict()}, sort_keys=True)
    yield f'{head[:-1]}, "jobs": ['
    for i, job in enumerate(jobs):
        yield ("\n" if i == 0 else ",\n") + json.dumps(job.to_dict(), sort_keys=True)
    yield "\n]}\n"


def _write_start(prepared: Prepared, result: SweepResult) -> None:
    """Create OUT, clear what this run replaces, write sweep.json and the manifest."""
    out, p = prepared.out, prepared.plan
    out.mkdir(parents=True, exist_ok=True)
    if prepared.overwrite == "always":
        remove_all(out)  # shards and compacted parts
    remove_temporaries(out)  # left by a killed writer; never a valid shard
    result.quarantined = quarantine(out, p.quarantine)
    result.superseded = quarantine(out, p.superseded, SUPERSEDED)
    fold_commits(out, p.whole)
    p.whole = Stamps.empty()  # (in the log now: not held for the run)
    write_chunks(out / "sweep.json", sweep_record(prepared.spec, p.jobs))
    cells = p.jobs.representatives()
    record_memories(out, cells)
    write_json(out / "manifest.json", {
        "versions": versions(memory_libraries(cells)), "git_commit": git_commit(),
        "executor": prepared.executor,
        "shards_written_by": "workers" if prepared.workers_write else "driver",
        "address": prepared.address or os.environ.get("RAY_ADDRESS") or None,
        "started": datetime.now(UTC).isoformat(timespec="seconds"), "ended": None,
        "counts": {"total": len(p.jobs), "done": 0, "skipped": p.skipped, "failed": 0},
        "failures": [],
        "quarantined": [relative(q, out).as_posix() for q in result.quarantined],
        "superseded": [relative(q, out).as_posix() for q in result.superseded],
        "plugins": plugins(cells),
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
    log: CommitLog | None = None
    if len(p.to_run):
        cells = p.to_run.representatives()
        plugged = plugin_folders(cells)
        sink = out if prepared.workers_write else None
        ex = EXECUTORS[name](task=job_task(provenance(memory_libraries(
                                 jobs.representatives())), sink, prepared.samples),
                             ship=shipped_packages() + plugged,
                             sys_path=[q for q in sys.path if q] if plugged else [],
                             env=plugin_env(cells),
                             address=address, max_in_flight=prepared.max_in_flight,
                             job_seconds=estimated_seconds(p.to_run) / len(p.to_run))
    start = time.perf_counter()
    try:
        if ex is not None:
            ex.start()  # a bad address fails here, before anything is written
        _write_start(prepared, result)
        if progress:
            progress(result)
        log = CommitLog(out)
        runs: Counter[str] = Counter()  # job -> its failed runs so far

        def on_outcome(o: Outcome) -> None:
            job = JobSpec.from_canonical(o.spec_json)  # (no job held per job sent)
            if o.error is not None and o.error.startswith(PLUGIN_ERROR):
                raise FbenchError(f"{o.error.removeprefix(PLUGIN_ERROR)}, a worker of the "
                                  f"{name} executor: install it there too")
            if o.error is not None and o.error.startswith(STORAGE_ERROR):
                raise FbenchError(f"{o.error.removeprefix(STORAGE_ERROR)}; the {result.done} "
                                  "shard(s) written stay valid: fix the storage and rerun "
                                  "the same command to resume")
            if o.stored is not None:
                log.add(job.job_id, o.stored)
                result.done += 1
            elif o.table is not None:
                if o.samples is not None:  # (before the shard: a shard means they are there)
                    write_samples(o.samples, job, *samples_paths(out, job))
                path = shard_path(out, job)
                stamp = write_shard(path, o.table)
                log.add(job.job_id, stamp)
                result.done += 1
            else:
                runs[job.job_id] += 1
                result.failed.append({"job_id": job.job_id, "spec": o.spec_json,
                                      "attempts": runs[job.job_id],
                                      "error": o.error or "unknown error"})
            if progress:
                progress(result)

        # each made when the executor asks, a stream's jobs together (``run_order``)
        batch: Sequence[str] = SpecJsons(p.to_run, run_order(p.to_run))
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
        if log is not None:
            # (the shards written are whole, whatever stopped the sweep; a log that
            # cannot be written loses only its shortcut: resume reads their footers)
            with contextlib.suppress(OSError):
                log.flush()
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
