"""The Ray executor: an embedded local Ray, or an existing Ray cluster.

- No address (and no ``RAY_ADDRESS``): start an embedded Ray with this machine's CPUs,
  listening on loopback only, and shut it down on ``close()``. If Ray is already
  initialised in this process (a test session, a notebook), reuse it and leave it up.
- ``auto``, ``HOST:PORT``, ``ray://HOST:PORT`` or ``RAY_ADDRESS``: connect to that
  cluster and ship fbench's packages (``workloads``, ``memcore`` with its weights,
  ``runner``, ``cluster``) with the job, so the nodes need only the dependencies.
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

import ipaddress
import json
import logging
import os
import random
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from cluster.base import ExecutorError, OnOutcome, register_executor

if TYPE_CHECKING:
    from runner.shard import Outcome

TASK_SECONDS = 2.0        # target work per task (0.5-5 s pays the ~1 ms per-task cost)
MIN_TASKS_PER_CPU = 3     # a big sweep is at least this many tasks per CPU (balance)
MAX_BATCH = 256           # bounds the work lost when a worker dies mid-batch
IN_FLIGHT_PER_CPU = 3     # tasks submitted ahead per CPU
WAIT_S = 5.0              # ray.wait timeout between scheduling checks
CONNECT_TIMEOUT_S = 5.0   # TCP probe of a cluster address before ray.init
MAX_RETRIES = 3           # re-runs of a task whose worker or node died
RAY_CLIENT_PORT = 10001
QUIET_LOGGERS = ("ray", "ray._private.authentication.authentication_token_setup")


# ---------------------------------------------------------------- batching (pure)

def batch_size(n_jobs: int, n_cpus: int, job_seconds: float) -> int:
    """Jobs per task: about ``TASK_SECONDS`` of work, but small enough that the sweep
    makes at least ``MIN_TASKS_PER_CPU`` tasks per CPU (a small sweep becomes many
    one-job tasks rather than leaving CPUs idle)."""
    by_time = round(TASK_SECONDS / job_seconds) if job_seconds > 0 else MAX_BATCH
    by_spread = n_jobs // (MIN_TASKS_PER_CPU * max(1, n_cpus))
    return max(1, min(by_time, by_spread, MAX_BATCH))


def make_batches(spec_jsons: Sequence[str], size: int, n_cpus: int = 1) -> list[list[str]]:
    """Every job exactly once, in batches of at most ``size`` that shrink towards the end
    (guided self-scheduling: never more than 1/(2 x CPUs) of what is left), so the last
    tasks are single jobs and the sweep ends with every CPU busy. The order is a fixed
    shuffle, so batches mix the grid's cells (a slow policy's jobs are not all in the
    last batches) whatever order the grid was expanded in."""
    order = list(spec_jsons)
    random.Random(0).shuffle(order)
    batches: list[list[str]] = []
    i = 0
    while i < len(order):
        remaining = len(order) - i
        n = max(1, min(size, -(-remaining // (2 * max(1, n_cpus)))))
        batches.append(order[i:i + n])
        i += n
    return batches


# ---------------------------------------------------------------- the task body

def run_batch(spec_jsons: list[str], prov: dict[str, Any] | None = None) -> list[Outcome]:
    """What one Ray task runs (on a worker): the batch's jobs, labelled with the node and
    the driver's provenance."""
    import ray
    import torch

    from runner.shard import execute_batch

    torch.set_num_threads(1)  # one task per CPU: no intra-op oversubscription
    return execute_batch(spec_jsons, ray.get_runtime_context().get_node_id(), prov)


def failed_outcomes(spec_jsons: Sequence[str], exc: BaseException) -> list[Outcome]:
    """A batch whose task died for good: every job in it is a failed outcome."""
    from runner.shard import Outcome
    from runner.spec import JobSpec

    text = f"{type(exc).__name__}: {exc}"
    return [Outcome(JobSpec.from_dict(json.loads(s)).job_id, None, text) for s in spec_jsons]


# ---------------------------------------------------------------- starting / connecting

def _quiet() -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def _loopback_node() -> Iterator[None]:
    """While Ray starts, take 127.0.0.1 as this node's address.

    ``ray.init`` rewrites a loopback ``_node_ip_address`` (or ``127.0.0.1:PORT``) to the
    machine's outward IP, and then listens on every interface. Its single-node switch
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read once at import) keeps it on loopback;
    this sets the constant it reads for the duration of the call.
    """
    try:
        from ray._private import ray_constants
    except ImportError:  # a future Ray without it: default binding, token auth still on
        yield
        return
    old = getattr(ray_constants, "ENABLE_RAY_CLUSTER", True)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = old


def start_local_ray(num_cpus: int | None = None) -> bool:
    """Start the embedded single-node Ray on loopback; False if Ray was already up.

    Its workers run at normal priority (Ray nices them to 15 by default), like the inline
    executor: on a busy machine niced workers got a fraction of a core and the sweep ran
    slower than inline."""
    import ray

    if ray.is_initialized():
        return False
    _quiet()
    with _loopback_node():
        ray.init(
            address="local",
            num_cpus=os.cpu_count() if num_cpus is None else num_cpus,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",
            _system_config={"worker_niceness": 0},
        )
    return True


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _reachable(host: str, port: int, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _host_port(address: str) -> tuple[str, int]:
    """The (host, port) a cluster address names; ``auto`` is looked up like Ray does."""
    if address.startswith("ray://"):
        rest = address[len("ray://"):].split("/", 1)[0]
        host, _, port = rest.rpartition(":") if ":" in rest else (rest, "", str(RAY_CLIENT_PORT))
    elif address == "auto":
        from ray._private.services import canonicalize_bootstrap_address_or_die

        try:
            found = canonicalize_bootstrap_address_or_die("auto")
        except ConnectionError:
            raise ExecutorError(
                "no running Ray cluster found for --address auto: start one with "
                "`ray start --head` or omit --address") from None
        host, _, port = found.rpartition(":")
    else:
        host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise ExecutorError(
            f"bad Ray address {address!r}: give auto, HOST:PORT or ray://HOST:PORT")
    return host, int(port)


def _outward_ip() -> str | None:
    """The address Ray substitutes for 127.0.0.1 when it connects."""
    try:
        from ray._private.services import get_node_ip_address

        return str(get_node_ip_address())
    except Exception:
        return None


def shipped_packages() -> list[str]:
    """The package folders shipped as ``py_modules`` (whole folders: memcore's weights
    travel too). Paths, not module objects: Ray Client cannot pickle modules."""
    import cluster
    import memcore
    import runner
    import workloads

    return [os.path.dirname(str(m.__file__)) for m in (workloads, memcore, runner, cluster)]


def connect(address: str) -> bool:
    """Connect to an existing cluster, shipping fbench's packages with the job; False
    if this process was already connected to it (then leave the connection up)."""
    import ray

    host, port = _host_port(address)
    if not _reachable(host, port):
        where = address if address != "auto" else f"{host}:{port} (found by auto)"
        raise ExecutorError(
            f"cannot reach Ray at {where}: start a cluster with `ray start --head` "
            "or omit --address")
    # Ray connects to the outward IP for 127.0.0.1; a cluster started on loopback only
    # (single node) is reachable solely at 127.0.0.1, so keep the address as given.
    loopback = _is_loopback(host) and not address.startswith("ray://")
    outward = _outward_ip() if loopback else None
    keep_loopback = loopback and (outward is None or not _reachable(outward, port))
    if ray.is_initialized():
        current = ray.get_runtime_context().gcs_address
        if current in {f"{host}:{port}", f"{outward}:{port}"}:
            return False  # already connected to it (a notebook, a test): reuse, leave up
        raise ExecutorError(
            f"Ray is already initialised in this process (at {current}); cannot also "
            f"connect to {address}")
    _quiet()
    _token_auth_if_available()
    runtime_env = {"py_modules": shipped_packages(), "excludes": ["__pycache__", "*.pyc"]}
    try:
        if keep_loopback:
            with _loopback_node():
                ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                         logging_level=logging.WARNING, _node_ip_address="127.0.0.1")
        else:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                     logging_level=logging.WARNING)
    except Exception as exc:  # ConnectionError, AuthenticationError, RuntimeError...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        hint = ("; if the cluster uses token auth, set RAY_AUTH_MODE=token and its token "
                "(~/.ray/auth_token or RAY_AUTH_TOKEN)") if "auth" in str(exc).lower() or (
                isinstance(exc, ConnectionError)) else ""
        raise ExecutorError(f"cannot connect to Ray at {address}: {first}{hint}") from None
    return True


def _token_auth_if_available() -> None:
    """Use token auth when a token is at hand and RAY_AUTH_MODE is unset, as Ray itself
    does for ``auto`` (a driver with a token also talks to a cluster without auth)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


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

    def __init__(self, address: str | None = None, max_in_flight: int | None = None,
                 job_seconds: float = 0.25, batch_jobs: int | None = None,
                 unschedulable_s: float = 60.0, provenance: dict[str, Any] | None = None,
                 **_: object) -> None:
        self.provenance = provenance
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
            self._started = connect(self.address)
        self._connected = ray.is_initialized()

    def plan(self, spec_jsons: Sequence[str], n_cpus: int) -> list[list[str]]:
        """The tasks' batches: ``batch_jobs`` jobs each in the given order if fixed, else
        sized by ``batch_size`` and shrinking towards the end (``make_batches``)."""
        if self.batch_jobs:
            step = self.batch_jobs
            return [list(spec_jsons[i:i + step]) for i in range(0, len(spec_jsons), step)]
        size = batch_size(len(spec_jsons), n_cpus, self.job_seconds)
        return make_batches(spec_jsons, size, n_cpus)

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
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES,
                          scheduling_strategy="SPREAD")(run_batch)
        todo = iter(batches)
        pending: dict[Any, list[str]] = {}
        stuck_since = self._check_schedulable(None)
        wait_s = min(WAIT_S, max(0.5, self.unschedulable_s / 2))
        try:
            while True:
                while len(pending) < limit and (batch := next(todo, None)) is not None:
                    pending[task.remote(batch, self.provenance)] = batch
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
