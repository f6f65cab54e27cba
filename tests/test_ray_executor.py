"""The Ray executor on the session's embedded Ray (``ray_local``), and its batching
arithmetic as pure functions (no Ray)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cluster.base import Executor, Outcome
from cluster.inline import InlineExecutor
from cluster.ray_executor import (
    MAX_BATCH,
    MIN_TASKS_PER_CPU,
    RayExecutor,
    batch_size,
    make_batches,
)
from runner.job.execute import job_task
from runner.results.shard import NONDETERMINISTIC
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import make_spec


def small_grid() -> list[str]:
    return [make_spec("contradiction", policy, seed, horizon=300).canonical_json()
            for policy in ("keep_all", "ebbinghaus") for seed in range(4)]


def learned_jobs() -> list[str]:
    """Jobs whose policy runs a torch model (workers use one torch thread, inline two)."""
    return [make_spec("contradiction", "learned_forget", seed, horizon=300).canonical_json()
            for seed in range(2)]


def failing_spec() -> str:
    """A spec that passes through executors but raises inside run_job (make_spec would
    reject the out-of-range probability)."""
    spec = JobSpec("contradiction@1", "keep_all", 0, 300, (("workload.p_hard", 5.0),))
    return spec.canonical_json()


def collect(executor: Executor, specs: list[str]) -> dict[str, Outcome]:
    out: list[Outcome] = []
    executor.run(specs, out.append)
    executor.close()
    assert len(out) == len(specs), "every job must come back exactly once"
    return {o.spec_json: o for o in out}


def deterministic(o: Outcome) -> str:
    assert o.table is not None, o.error
    # JSON keeps NaN comparable and floats exact (repr round-trips).
    return json.dumps(o.table.drop_columns(sorted(NONDETERMINISTIC)).to_pylist())


def test_ray_and_inline_give_identical_shards(ray_local: None) -> None:
    """Prevents executor-dependent results (torch thread counts in workers, state carried
    between jobs in a reused worker, batching): the shard tables of the same specs must
    match the inline executor's exactly, timing and node columns aside."""
    specs = small_grid() + learned_jobs()
    inline = collect(InlineExecutor(job_task()), specs)
    ray_out = collect(RayExecutor(job_task()), specs)
    assert set(ray_out) == set(inline)
    for job_id, o in inline.items():
        assert deterministic(ray_out[job_id]) == deterministic(o), job_id
    nodes = {o.table.column("node")[0].as_py() for o in ray_out.values() if o.table is not None}
    assert len(nodes) == 1 and "inline" not in nodes  # the Ray node id of the worker


def test_a_failing_job_does_not_sink_its_batch(ray_local: None) -> None:
    """Prevents one bad job from crashing the sweep or taking its batch-mates down: it comes
    back as a failed outcome with the traceback, the others in the same task succeed."""
    good = small_grid()[:2]
    bad = failing_spec()
    specs = [good[0], bad, good[1]]
    executor = RayExecutor(job_task(), batch_jobs=3)
    assert list(executor.plan(specs, n_cpus=2)) == [specs]  # one task carries all three
    out = collect(executor, specs)
    bad_id = bad  # outcomes are keyed by their spec
    error = out[bad_id].error
    assert out[bad_id].table is None and error is not None and "Traceback" in error
    assert all(o.table is not None and o.error is None for k, o in out.items() if k != bad_id)


def test_a_task_that_dies_becomes_failed_outcomes(
    ray_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prevents a worker crash (OOM kill, segfault) from crashing the sweep: once Ray's
    retries are spent, each job of the batch is a failed outcome naming the error."""
    import cluster.ray_executor as rx

    monkeypatch.setattr(rx, "MAX_RETRIES", 0)
    # A lambda is shipped by value; the worker process exits mid-task.
    monkeypatch.setattr(rx, "run_batch", lambda specs, prov=None: os._exit(1))
    specs = small_grid()[:2]
    executor = RayExecutor(job_task(), batch_jobs=2)
    assert list(executor.plan(specs, n_cpus=2)) == [specs]
    out = collect(executor, specs)
    assert all(o.table is None for o in out.values())
    assert all(o.error and "Worker" in o.error for o in out.values()), out


def test_reused_ray_is_left_running(ray_local: None) -> None:
    """Prevents an executor from shutting down a Ray it did not start (the test session's,
    a notebook's): close() leaves it up."""
    import ray

    collect(RayExecutor(job_task()), small_grid()[:1])
    assert ray.is_initialized()


def test_importing_cluster_does_not_import_ray() -> None:
    """Prevents a module-level ``import ray`` in cluster/ (seconds of start-up for every
    CLI call, even inline ones)."""
    code = ("import sys, cluster; from cluster.ray_executor import RayExecutor; "
            "from runner.job.execute import job_task; "
            "RayExecutor(job_task()); print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("n_jobs", "n_cpus", "job_seconds", "want"),
    [
        (8, 2, 0.25, 1),        # small sweep: one job per task, no idle CPU
        (1, 64, 0.25, 1),
        (200, 2, 0.2, 10),      # ~2 s of work per task
        (1000, 2, 0.25, 8),
        (1000, 40, 0.25, 8),
        (100, 40, 0.01, 1),     # many CPUs: spread beats batching
        (10**6, 2, 1e-4, MAX_BATCH),
        (50, 2, 10.0, 1),       # long jobs: never less than one per task
    ],
)
def test_batch_size(n_jobs: int, n_cpus: int, job_seconds: float, want: int) -> None:
    """Prevents per-task overhead dominating (1,000 one-job tasks ran 2-3x slower than 40
    batches) and the opposite: a few huge batches that leave CPUs idle."""
    assert batch_size(n_jobs, n_cpus, job_seconds) == want


@pytest.mark.parametrize("n_jobs", [1, 7, 60, 200, 5000])
@pytest.mark.parametrize("n_cpus", [1, 2, 16])
def test_batches_cover_every_job_and_end_small(n_jobs: int, n_cpus: int) -> None:
    """Prevents lost or duplicated jobs, a sweep too coarse to keep every CPU busy, and a
    long tail (one CPU finishing a big last batch while the others idle)."""
    specs = [f"job{i}" for i in range(n_jobs)]
    size = batch_size(n_jobs, n_cpus, 0.25)
    batches = make_batches(specs, size, n_cpus)
    flat = [s for b in batches for s in b]
    assert sorted(flat) == sorted(specs)
    assert all(1 <= len(b) <= size for b in batches)
    assert len(batches) >= min(n_jobs, MIN_TASKS_PER_CPU * n_cpus)
    assert [len(b) for b in batches[-n_cpus:]] == [1] * min(n_cpus, len(batches))


def test_batches_keep_the_order_given() -> None:
    """Prevents the executor reshuffling the driver's order, which would split a
    stream's jobs over tasks (each then generating the stream again)."""
    specs = [f"job{i}" for i in range(40)]
    assert [s for b in make_batches(specs, 5, 2) for s in b] == specs


def test_empty_sweep() -> None:
    """Prevents a crash (or a Ray start) for a sweep with nothing left to run."""
    assert make_batches([], 5) == []
    RayExecutor(job_task()).run([], lambda o: None)
