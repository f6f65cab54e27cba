"""The Ray executor: an embedded local Ray, or an existing Ray cluster.

- No address (and no ``RAY_ADDRESS``): start an embedded Ray with this machine's CPUs,
  listening on loopback only, and shut it down on ``close()``. If Ray is already
  initialised in this process (a test session, a notebook), reuse it and leave it up.
- ``auto``, ``HOST:PORT``, ``ray://HOST:PORT`` or ``RAY_ADDRESS``: connect to that
  cluster and ship what the caller names (``ship``: fbench's package folders, memcore
  with its weights, and any plugin's) with the job, so the nodes need only the
  dependencies.
  An unreachable address is an ``ExecutorError`` in seconds, not a hang.

Jobs travel in batches (``batch_size``): ~2 s of work per task pays Ray's per-task
cost, yet a sweep still becomes several tasks per CPU so no core idles. A few tasks
per CPU are kept in flight and each batch's outcomes go to ``on_outcome`` as soon as
it returns. Tasks are spread over the nodes (``SPREAD``). A task that dies even
after retries turns into failed outcomes for its jobs; tasks that can never be
scheduled (no CPU in the cluster) are an ``ExecutorError`` after ``unschedulable_s``.

``ray`` is imported only inside functions: importing ``cluster`` stays cheap.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import suppress
from typing import Any

from cluster.base import ExecutorError, OnOutcome, Outcome, TaskFn, register_executor
from cluster.ray_connect import connect, start_local_ray

TASK_SECONDS = 2.0        # target work per task (0.5-5 s pays the ~1 ms per-task cost)
MIN_TASKS_PER_CPU = 3     # a big sweep is at least this many tasks per CPU (balance)
MAX_BATCH = 256           # bounds the work lost when a worker dies mid-batch
IN_FLIGHT_PER_CPU = 3     # tasks submitted ahead per CPU
WAIT_S = 5.0              # ray.wait timeout between scheduling checks
MAX_RETRIES = 3           # re-runs of a task whose worker or node died


# ---------------------------------------------------------------- batching (pure)

def batch_size(n_jobs: int, n_cpus: int, job_seconds: float) -> int:
    """Jobs per task: about ``TASK_SECONDS`` of work, but small enough that the sweep
    makes at least ``MIN_TASKS_PER_CPU`` tasks per CPU (a small sweep becomes many
    one-job tasks rather than leaving CPUs idle)."""
    by_time = round(TASK_SECONDS / job_seconds) if job_seconds > 0 else MAX_BATCH
    by_spread = n_jobs // (MIN_TASKS_PER_CPU * max(1, n_cpus))
    return max(1, min(by_time, by_spread, MAX_BATCH))


def make_batches(spec_jsons: Sequence[str], size: int, n_cpus: int = 1) -> list[list[str]]:
    """``iter_batches``, all at once."""
    return list(iter_batches(spec_jsons, size, n_cpus))


def iter_batches(spec_jsons: Sequence[str], size: int, n_cpus: int = 1
                 ) -> Iterator[list[str]]:
    """Every job exactly once, in the order given, in batches of at most ``size`` that
    shrink towards the end (guided self-scheduling: never more than 1/(2 x CPUs) of what
    is left), so the last tasks are single jobs and the sweep ends with every CPU busy.
    The order is the caller's: a sweep hands its jobs stream by stream, the streams
    shuffled (``runner.sweep.order``), so a batch's jobs share a stream and a slow
    kind of job is spread over the run. A batch's jobs are read from ``spec_jsons``
    only when it is made: a lazy sequence is never held whole."""
    i, total = 0, len(spec_jsons)
    while i < total:
        n = max(1, min(size, -(-(total - i) // (2 * max(1, n_cpus)))))
        yield [spec_jsons[j] for j in range(i, i + n)]
        i += n


# ---------------------------------------------------------------- the task body

def run_batch(task: TaskFn, spec_jsons: list[str]) -> list[Outcome]:
    """What one Ray task runs (on a worker): the task function on the batch, labelled
    with the node."""
    import ray
    import torch

    from cluster import worker_gc

    torch.set_num_threads(1)  # one task per CPU: no intra-op oversubscription
    worker_gc.before_batch()
    return task(spec_jsons, ray.get_runtime_context().get_node_id())


def failed_outcomes(spec_jsons: Sequence[str], exc: BaseException) -> list[Outcome]:
    """A batch whose task died for good: every job in it is a failed outcome."""
    text = f"{type(exc).__name__}: {exc}"
    return [Outcome(s, None, text) for s in spec_jsons]


# ---------------------------------------------------------------- the executor

def _cpu_nodes() -> int:
    """Alive nodes that can run a one-CPU task."""
    import ray

    return sum(1 for n in ray.nodes()
               if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1)


@register_executor("ray")
class RayExecutor:
    """Runs batches of jobs as Ray tasks; see the module docstring."""

    name = "ray"

    def __init__(self, task: TaskFn, address: str | None = None,
                 max_in_flight: int | None = None, job_seconds: float = 0.25,
                 batch_jobs: int | None = None, unschedulable_s: float = 60.0,
                 ship: Sequence[str] = (), sys_path: Sequence[str] = (),
                 env: dict[str, str] | None = None, **_: object) -> None:
        self.task = task
        self.ship = list(ship)  # folders a cluster's workers need (py_modules of the job)
        # the driver's sys.path, for an embedded Ray's workers to import what the driver
        # imports (plugins from the current directory): PYTHONPATH of each task
        self.sys_path = list(sys_path)
        self.env = dict(env or {})  # environment variables of a cluster's workers
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        if self.address == "local":
            self.address = None
        self.max_in_flight = max_in_flight
        self.job_seconds = job_seconds
        self.batch_jobs = batch_jobs  # fixed jobs per task (default: plan() decides)
        self.unschedulable_s = unschedulable_s
        self._started = False
        self._connected = False

    def start(self) -> None:
        self._ensure_ray()

    def _ensure_ray(self) -> None:
        if self._connected:
            return
        import ray

        if self.address is None:
            self._started = start_local_ray()
        else:
            self._started = connect(self.address, self.ship, self.env)
        self._connected = ray.is_initialized()

    def plan(self, spec_jsons: Sequence[str], n_cpus: int) -> Iterator[list[str]]:
        """The tasks' batches, each made when it is submitted: ``batch_jobs`` jobs each
        in the given order if fixed, else sized by ``batch_size`` and shrinking towards
        the end (``iter_batches``)."""
        if self.batch_jobs:
            step = self.batch_jobs
            return (list(spec_jsons[i:i + step]) for i in range(0, len(spec_jsons), step))
        size = batch_size(len(spec_jsons), n_cpus, self.job_seconds)
        return iter_batches(spec_jsons, size, n_cpus)

    def run(self, spec_jsons: Sequence[str], on_outcome: OnOutcome) -> None:
        if not spec_jsons:
            return
        self._ensure_ray()
        import ray

        n_cpus = int(ray.cluster_resources().get("CPU", 0))
        batches = self.plan(spec_jsons, n_cpus)
        limit = self.max_in_flight or IN_FLIGHT_PER_CPU * max(1, n_cpus)
        # SPREAD: on a cluster, tasks go to every node with a free CPU; Ray's default
        # packs them onto the driver's node while its warm worker keeps up, which
        # leaves a node idle whenever tasks are shorter than a worker's start.
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES,
                            scheduling_strategy="SPREAD")(run_batch)
        if self.sys_path and self.address is None:  # embedded: the driver's sys.path
            remote = remote.options(runtime_env={"env_vars": {
                "PYTHONPATH": os.pathsep.join(self.sys_path)}})
        todo = batches
        pending: dict[Any, list[str]] = {}
        stuck_since = self._check_schedulable(None)
        wait_s = min(WAIT_S, max(0.5, self.unschedulable_s / 2))
        try:
            while True:
                while len(pending) < limit and (batch := next(todo, None)) is not None:
                    pending[remote.remote(self.task, batch)] = batch
                if not pending:
                    return
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait_s)
                if not ready:
                    stuck_since = self._check_schedulable(stuck_since)
                    continue
                stuck_since = None
                for ref in ready:
                    batch = pending.pop(ref)
                    try:
                        outcomes = ray.get(ref)
                    except Exception as exc:  # RayError: worker/node died past retries
                        outcomes = failed_outcomes(batch, exc)
                    for outcome in outcomes:
                        on_outcome(outcome)
        finally:
            for ref in pending:  # an error or Ctrl-C: do not leave work running
                with suppress(Exception):
                    ray.cancel(ref)

    def _check_schedulable(self, stuck_since: float | None) -> float | None:
        """None while some node can run a task; raise once none could for too long."""
        if _cpu_nodes() > 0:
            return None
        now = time.monotonic()
        if stuck_since is None:
            return now
        if now - stuck_since >= self.unschedulable_s:
            import ray

            cpus = ray.cluster_resources().get("CPU", 0)
            raise ExecutorError(
                f"no node of the Ray cluster can run a 1-CPU task (cluster CPUs: {cpus:g}) "
                f"after {self.unschedulable_s:g} s; add nodes with CPUs "
                "(`ray start --address ... --num-cpus N`)")
        return stuck_since

    def close(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
        self._started = self._connected = False
