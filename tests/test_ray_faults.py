"""Faults inflicted on a real Ray, and what the embedded Ray exposes (marked ``cluster``).

- A Ray worker SIGKILLed mid-task, and a whole node of a two-node cluster SIGKILLed
  mid-sweep: the sweep must still finish, every job a valid outcome equal to an inline
  run (``RayExecutor`` submits with ``max_retries=MAX_RETRIES``).
- The embedded Ray that ``fbench sweep`` starts without an address: nothing it starts
  may listen beyond loopback, and no dashboard may serve.

Every Ray here is the test's own, driven from a subprocess (this process may hold the
session's embedded Ray, ``ray_local``): an embedded one under a private ``RAY_TMPDIR``,
or a fresh two-node cluster (``tests/ray_cluster_util.py``; losing a node would break a
shared one). Only processes carrying the test's marker environment variable are ever
killed (never ``ray stop``), in a ``finally``. Progress is polled with deadlines.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ray_cluster_util import (
    Cluster,
    clean_env,
    kill_node,
    marked_pids,
    start_two_node_cluster,
    stop,
)

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_S = 120

# A driver: runs SPECS (a Python expression) through RayExecutor(address=argv[1] or
# embedded), one job per task, appending each outcome to the progress file argv[2] as it
# arrives; then runs them inline and prints one JSON line comparing the two.
DRIVER = """
import json, sys, time
from cluster.inline import InlineExecutor
from cluster.ray_executor import RayExecutor
from runner.job.execute import job_task, shipped_packages
from runner.job.provenance import provenance
from runner.spec.resolve import make_spec
from runner.results.shard import NONDETERMINISTIC

specs = {specs}
ex = RayExecutor(job_task(provenance()), address=sys.argv[1] or None, batch_jobs=1,
                 ship=shipped_packages())
progress = open(sys.argv[2], "a")
out = []

def got(o):
    out.append(o)
    print(json.dumps({{"job": o.spec_json, "t": time.time(), "node": None if o.table is None
                      else o.table.column("node")[0].as_py()}}), file=progress, flush=True)

ex.run(specs, got)
ex.close()
inline = []
InlineExecutor(job_task(provenance())).run(specs, inline.append)
ref = {{o.spec_json: o.table for o in inline}}
differing = sorted({{o.spec_json for o in out if o.table is not None
                    and json.dumps(o.table.drop_columns(sorted(NONDETERMINISTIC)).to_pylist())
                    != json.dumps(ref[o.spec_json].drop_columns(
                        sorted(NONDETERMINISTIC)).to_pylist())
                    }})
print(json.dumps({{"n": len(specs), "ids": sorted(o.spec_json for o in out),
                  "want_ids": sorted(ref), "ok": sum(o.table is not None for o in out),
                  "errors": [o.error[-500:] for o in out if o.error], "differing": differing}}))
"""


class Driver:
    """A driver subprocess in its own session; its output goes to files in ``where`` (a
    full pipe would stall it), its progress lines to ``where/progress.jsonl``."""

    def __init__(self, specs: str, address: str, env: dict[str, str], where: Path) -> None:
        self.where = where
        self.progress = where / "progress.jsonl"
        with (where / "driver.out").open("w") as out, (where / "driver.err").open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", DRIVER.format(specs=specs), address, str(self.progress)],
                env={**env, "PYTHONPATH": str(ROOT)}, cwd=where, stdout=out, stderr=err,
                start_new_session=True)

    def lines(self) -> list[dict[str, Any]]:
        """One per outcome received so far."""
        if not self.progress.exists():
            return []
        return [json.loads(line) for line in self.progress.read_text().splitlines()
                if line.endswith("}")]  # a line being written is skipped until complete

    def err(self) -> str:
        return (self.where / "driver.err").read_text()[-3000:]

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = DEADLINE_S) -> Any:
        """Poll ``check`` until truthy; fail if the driver exits first or time runs out."""
        deadline = time.monotonic() + timeout
        while not (got := check()):
            if self.proc.poll() is not None:
                pytest.fail(f"the driver ended before {what}:\n{self.err()}")
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.05)
        return got

    def result(self) -> dict[str, Any]:
        """Wait for the end; its last stdout line, a JSON object."""
        self.proc.wait(timeout=DEADLINE_S)
        assert self.proc.returncode == 0, self.err()
        out = (self.where / "driver.out").read_text()
        got: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return got

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def running_task(pids: list[int]) -> int | None:
    """One of ``pids`` that is a Ray worker executing ``run_batch`` now (a worker names
    itself ``ray::run_batch`` while it runs that task, ``ray::IDLE`` otherwise)."""
    for pid in pids:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::run_batch"):
            return pid
    return None


def gone(pid: int) -> bool:
    try:
        return b"State:\tZ" in Path(f"/proc/{pid}/status").read_bytes()  # a zombie
    except OSError:
        return True


def assert_complete_and_equal_to_inline(got: dict[str, Any]) -> None:
    assert got["errors"] == [], got["errors"]
    assert got["ok"] == got["n"] and got["ids"] == got["want_ids"], got
    assert got["differing"] == [], got["differing"]


@pytest.fixture
def own_embedded(tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """(environment, marker) for a subprocess that embeds its own Ray under a private
    RAY_TMPDIR (so not /tmp/ray); every process carrying the marker is killed after."""
    temp_dir = tempfile.mkdtemp(prefix="fbr", dir="/tmp")  # short: unix socket paths
    env = clean_env(temp_dir)
    env["RAY_TMPDIR"] = temp_dir
    try:
        yield env, temp_dir
    finally:
        stop([], temp_dir, temp_dir)


def test_a_worker_killed_mid_task_is_retried(
    own_embedded: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    """Prevents a worker that dies mid-job (OOM killer, segfault, a SIGKILL) from losing
    its jobs or sinking the sweep: the task is retried on a new worker (MAX_RETRIES) and
    every job comes back once, valid and equal to an inline run."""
    env, marker = own_embedded
    n = 4
    driver = Driver('[make_spec("lifecycle", "keep_all", s, horizon=1460).canonical_json() '
                    f'for s in range({n})]', "", env, tmp_path)  # ~1 s per job
    try:
        victim = driver.wait_for("a worker running a task",
                                 lambda: running_task(marked_pids(marker)))
        os.kill(victim, signal.SIGKILL)
        assert len(driver.lines()) < n and driver.proc.poll() is None, "killed too late"
        driver.wait_for("the killed worker to be gone", lambda: gone(victim), timeout=15)
        got = driver.result()
    finally:
        driver.kill()
    # The killed task's jobs can only have come back from a re-run (with max_retries=0
    # they are failed outcomes: test_ray_executor.py), so all present means retried.
    assert_complete_and_equal_to_inline(got)


@pytest.fixture
def fresh_cluster() -> Iterator[Cluster]:
    """A two-node cluster of this test's own: losing a node would break a shared one."""
    with start_two_node_cluster() as cluster:
        yield cluster


def test_a_node_lost_mid_sweep_finishes_on_the_rest(
    fresh_cluster: Cluster, tmp_path: Path
) -> None:
    """Prevents a lost node (a crashed or preempted machine) from losing the jobs it was
    running or hanging the sweep: once some jobs are done and the second node is running
    one, that node's raylet, agents and workers are SIGKILLed; the sweep must finish on
    the head alone, every job valid and equal to an inline run."""
    cluster = fresh_cluster
    n = 6
    driver = Driver('[make_spec("lifecycle", "keep_all", s, horizon=1460).canonical_json() '
                    f'for s in range({n})]', cluster.address, cluster.env, tmp_path)  # ~1 s/job
    try:
        driver.wait_for("a finished job and a task on the second node",
                        lambda: driver.lines()
                        and running_task(marked_pids(cluster.temp_dir, node=1)))
        kill_node(cluster, 1)
        assert marked_pids(cluster.temp_dir, node=1) == [], "the node is still there"
        assert len(driver.lines()) < n and driver.proc.poll() is None, "killed too late"
        got = driver.result()
    finally:
        driver.kill()
    # The job the lost node was running can only have come back from a re-run elsewhere.
    assert_complete_and_equal_to_inline(got)


# ---------------------------------------------------------------- what the embedded Ray exposes

HOLD = """
import json, sys
from cluster.ray_executor import RayExecutor
from runner.spec.resolve import make_spec
import ray
from ray._private import ray_constants

from runner.job.execute import job_task
ex = RayExecutor(job_task())  # no address: the embedded Ray, as `fbench sweep` starts it
ex.run([make_spec("contradiction", "keep_all", 0, horizon=50).canonical_json()],
       lambda o: None)  # a worker and the runtime-env agent are up
dashboard = ray.experimental.internal_kv._internal_kv_get(
    ray_constants.DASHBOARD_ADDRESS, namespace=ray_constants.KV_NAMESPACE_DASHBOARD)
print(json.dumps({"gcs": ray.get_runtime_context().gcs_address,
                  "dashboard": (dashboard or b"").decode()}), flush=True)
sys.stdin.readline()  # held up until the test has looked
ex.close()
"""


def _ip(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))  # host-order words
    return socket.inet_ntop(socket.AF_INET6, words)


def listening(pids: list[int]) -> list[tuple[int, str, str, int]]:
    """(pid, proto, ip, port) of every TCP socket in LISTEN and every unconnected bound
    UDP socket that one of ``pids`` holds (from /proc/net and /proc/PID/fd)."""
    by_inode: dict[int, tuple[str, str, int]] = {}
    for proto, state in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
        for row in Path(f"/proc/net/{proto}").read_text().splitlines()[1:]:
            f = row.split()
            if f[3] == state:
                ip, port = f[1].split(":")
                by_inode[int(f[9])] = (proto, _ip(ip), int(port, 16))
    found = []
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and (s := by_inode.get(int(target[8:-1]))):
                found.append((pid, *s))
    return found


def is_loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped  # ::ffff:127.0.0.1, how a dual-stack socket shows
    return addr.is_loopback


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_embedded_ray_listens_on_loopback_only_with_no_dashboard(
    own_embedded: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    """Prevents the embedded Ray (a sweep without --address) from opening this machine
    to its network: its GCS, raylet, agents and workers run whatever code they are sent,
    so none may listen on 0.0.0.0, :: or the outward address (what Ray does unless told
    otherwise); and prevents a dashboard from serving (without include_dashboard Ray
    still starts a dashboard head process, to record usage; it must not serve)."""
    env, marker = own_embedded
    with (tmp_path / "holder.err").open("w") as err:
        holder = subprocess.Popen([sys.executable, "-c", HOLD],
                                  env={**env, "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                  text=True, start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        # Up once it prints: ray.init waits for the dashboard head to record its address,
        # which it does after deciding whether to serve HTTP.
        ready, _, _ = select.select([holder.stdout], [], [], DEADLINE_S)
        line = holder.stdout.readline() if ready else ""
        assert line, (tmp_path / "holder.err").read_text()[-3000:]
        up = json.loads(line)
        pids = marked_pids(marker)
        socks = listening(pids)
        names = {pid: cmdline(pid) for pid in pids}
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=60) == 0, (tmp_path / "holder.err").read_text()[-3000:]
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()
    # It looked at the right processes: the GCS, a raylet, a worker, and the GCS's port.
    assert any("gcs_server" in c for c in names.values()), names
    assert any("raylet" in c for c in names.values()), names
    assert any(c.startswith(("ray::IDLE", "ray::run_batch")) for c in names.values()), names
    gcs_port = int(up["gcs"].rpartition(":")[2])
    assert any(port == gcs_port for *_, port in socks), (up, socks)
    exposed = [(names[pid][:60], proto, ip, port) for pid, proto, ip, port in socks
               if not is_loopback(ip)]
    assert exposed == [], exposed
    # No dashboard: nothing of ours listens where Ray records the dashboard's address
    # (8265 by default, another port if that one was taken).
    dash_port = int(up["dashboard"].rpartition(":")[2] or 8265)
    assert not any(port == dash_port for *_, port in socks), (up, socks)
