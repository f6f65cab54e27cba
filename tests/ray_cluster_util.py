"""Starting and stopping Ray clusters a test owns, without touching any other Ray on
the machine (shared by ``test_ray_cluster.py`` and ``test_ray_faults.py``; the reasons
for each choice are in ``test_ray_cluster.py``'s docstring).

Every process a test starts carries ``MARKER=<value>`` in its environment (Ray's
daemons and workers inherit it; workers rename themselves, so their command line
cannot be matched), and each node of a cluster also ``NODE=<index>``: that is how a
test finds its own processes, a whole node's included, and kills only those. Never
``ray stop``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "FBENCH_TEST_RAY_CLUSTER"
NODE = "FBENCH_TEST_RAY_NODE"   # which node of the test's cluster a process belongs to
RAY_CLI = [sys.executable, "-m", "ray.scripts.scripts"]  # this interpreter's ray, not PATH's
START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    address: str
    env: dict[str, str]   # for a driver: the cluster's marker and token
    temp_dir: str
    groups: list[int] = field(default_factory=list)  # each node's process group, head first


def ray_start(args: list[str], env: dict[str, str], groups: list[int]) -> None:
    proc = subprocess.Popen([*RAY_CLI, "start", *args, "--disable-usage-stats"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    groups.append(proc.pid)  # its session's process group holds every daemon it starts
    out, _ = proc.communicate(timeout=START_TIMEOUT_S)
    assert proc.returncode == 0, f"ray start {args} failed:\n{out[-2000:]}"


def alive_nodes(address: str, env: dict[str, str]) -> int:
    out = subprocess.run([*RAY_CLI, "status", "--address", address], env=env,
                         capture_output=True, text=True, timeout=30).stdout
    active = out.split("Active:", 1)[-1].split("Pending:", 1)[0]
    return active.count("node_")


def marked_pids(marker_value: str, node: int | None = None) -> list[int]:
    """This process's descendants and daemons carrying ``MARKER=marker_value`` (and, if
    given, ``NODE=node``); never this test process itself."""
    want = {f"{MARKER}={marker_value}".encode()}
    if node is not None:
        want.add(f"{NODE}={node}".encode())
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if want <= set(environ.split(b"\0")):
            pids.append(int(proc.name))
    return pids


def kill_marked(groups: list[int], marker_value: str, node: int | None = None) -> None:
    """SIGKILL the process groups, then every straggler carrying the marker (and node),
    until none is left (at most 15 s)."""
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while (left := marked_pids(marker_value, node)) and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def stop(groups: list[int], marker_value: str, temp_dir: str) -> None:
    kill_marked(groups, marker_value)
    shutil.rmtree(temp_dir, ignore_errors=True)


def kill_node(cluster: Cluster, index: int) -> None:
    """Lose one node of the cluster: SIGKILL its raylet, agents and workers (its process
    group, then anything else carrying its node marker), as a crashed machine would."""
    kill_marked([cluster.groups[index]], cluster.temp_dir, index)


def clean_env(marker_value: str) -> dict[str, str]:
    """This environment without any pointer to another Ray, plus the marker."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")}
    env.update({"RAY_USAGE_STATS_ENABLED": "0", MARKER: marker_value})
    return env


@contextlib.contextmanager
def start_two_node_cluster(extra_env: dict[str, str] | None = None,
                           dashboard_port: int | None = None) -> Iterator[Cluster]:
    """A head and a second node, one CPU each, on this machine, with token auth; both
    stopped (only they) and their temp dir removed on exit, whatever happened. With
    ``dashboard_port``, the head serves its dashboard (the job server ``ray job submit``
    talks to) there, on loopback."""
    temp_dir = tempfile.mkdtemp(prefix="fbr", dir="/tmp")
    env = clean_env(temp_dir)
    env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                **(extra_env or {})})
    port = free_port()
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", f"--temp-dir={temp_dir}"]
    groups: list[int] = []
    try:
        dashboard = (["--include-dashboard=false"] if dashboard_port is None else
                     ["--include-dashboard=true", "--dashboard-host=127.0.0.1",
                      f"--dashboard-port={dashboard_port}"])
        ray_start(["--head", f"--port={port}", *dashboard,
                   f"--ray-client-server-port={free_port()}",
                   f"--dashboard-agent-listen-port={free_port()}", *common],
                  {**env, NODE: "0"}, groups)
        ray_start([f"--address={address}",
                   f"--dashboard-agent-listen-port={free_port()}", *common],
                  {**env, NODE: "1"}, groups)
        deadline = time.monotonic() + START_TIMEOUT_S
        while alive_nodes(address, env) < 2:
            assert time.monotonic() < deadline, "the second node never joined"
            time.sleep(1)
        yield Cluster(address, env, temp_dir, groups)
    finally:
        stop(groups, temp_dir, temp_dir)
