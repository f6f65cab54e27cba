"""The dry run's estimate of how long a plan's jobs will take, from the seconds the jobs
already done in OUT took (``estimate``)."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.dataset as ds

from runner.errors import FbenchError
from runner.results.layout import Layout
from runner.results.shard import SCHEMA
from runner.results.where import Loc, dataset_source
from runner.sweep.plan import Plan

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
