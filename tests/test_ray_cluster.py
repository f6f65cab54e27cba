"""The Ray executor against a real two-node Ray cluster on this machine, and its
errors for clusters it cannot use (marked ``cluster``; ~30 s).

How the cluster is started, used and stopped, and why:

- Two ``ray start`` processes, a head (``--num-cpus=1``) and a second node joining it
  (``--num-cpus=1``), so a sweep has to spread over both. Every port a second raylet
  on the same machine could collide on is chosen free (GCS, Ray Client server,
  dashboard agent); the raylet, object manager and worker ports default to random
  ones, so no ``--node-manager-port``/``--object-manager-port``/worker-port flags
  are needed. Ray 2.60 accepts ``--temp-dir`` on the joining node too: both share one
  dedicated temp dir under /tmp (short, as unix socket paths are limited to 107
  bytes), so the cluster's address file never lands in /tmp/ray where
  ``--address auto`` elsewhere would find it.
- Ray 2.60 ignores ``--node-ip-address=127.0.0.1``: it replaces loopback with the
  machine's outward IP, and a loopback-only Ray (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``)
  refuses a second node. So the cluster listens on the machine's interfaces, and is
  closed to others by token auth: ``RAY_AUTH_MODE=token`` and a fresh per-test
  ``RAY_AUTH_TOKEN`` in the environment of both nodes and of the driver (independent of
  ``~/.ray/auth_token``, which an embedded ``ray.init`` creates).
- The driver is a subprocess: this test process may already hold the session's
  embedded Ray (``ray_local``), and a process holds one Ray connection at a time.
- Stopping: never ``ray stop``, which kills every Ray on the machine (the session's
  embedded one, other sweeps). Each ``ray start`` runs in its own session, and the
  daemons it leaves (gcs_server, raylet, agents, their workers) inherit its process
  group: teardown SIGKILLs those two groups (what ``ray stop --force`` does, but only
  to ours), then any straggler carrying this cluster's marker environment variable
  (workers rename themselves, so their command line cannot be matched), then removes
  the temp dir. It runs in a ``finally``, whatever the test did.

The helpers that do all this are in ``tests/ray_cluster_util.py`` (shared with
``test_ray_faults.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.base import ExecutorError
from cluster.ray_executor import RayExecutor
from runner.job.execute import job_task
from runner.spec.resolve import make_spec
from tests.ray_cluster_util import Cluster, free_port, start_two_node_cluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def two_node_cluster() -> Iterator[Cluster]:
    with start_two_node_cluster() as cluster:
        yield cluster


DRIVER = """
import json, sys
from pathlib import Path
from cluster.inline import InlineExecutor
from cluster.ray_executor import RayExecutor
from runner.spec.resolve import make_spec
from runner.results.shard import NONDETERMINISTIC

specs = [make_spec("contradiction", p, s, horizon=1000).canonical_json()
         for p in ("keep_all", "ebbinghaus") for s in range(4)]
from runner.job.execute import job_task, shipped_packages
from runner.job.provenance import provenance

ex = RayExecutor(job_task(provenance()), address=sys.argv[1], ship=shipped_packages())
out = []
ex.run(specs, out.append)

import memcore, ray

@ray.remote(num_cpus=1)
def shipped_memcore():
    import fbench, memcore
    d = Path(memcore.__file__).parent
    return (str(d), sorted(p.name for p in (d / "weights").glob("*.safetensors")),
            str(Path(fbench.__file__).parent))

where, weights, registry_pkg = ray.get(shipped_memcore.remote())
ex.close()
inline = []
InlineExecutor(job_task(provenance())).run(specs, inline.append)
ref = {o.spec_json: o.table for o in inline}
differing = sorted({c for o in out if o.table is not None
                    for c in o.table.column_names if c not in NONDETERMINISTIC
                    and json.dumps(o.table.column(c).to_pylist())
                    != json.dumps(ref[o.spec_json].column(c).to_pylist())})
local = sorted(p.name for p in (Path(memcore.__file__).parent / "weights").glob("*.safetensors"))
print(json.dumps({
    "nodes": sorted({o.table.column("node")[0].as_py() for o in out if o.table is not None}),
    "ok": sum(o.table is not None for o in out), "n": len(specs),
    "errors": [o.error for o in out if o.error], "differing": differing,
    "shipped_memcore": where, "shipped_weights": weights, "local_weights": local,
    "shipped_fbench": registry_pkg,
}))
"""


def test_sweep_spreads_over_both_nodes(two_node_cluster: Cluster, tmp_path: Path) -> None:
    """Prevents a cluster sweep that silently runs on one node (or not at all): jobs sent
    through RayExecutor(address=HOST:PORT) must all succeed, on both nodes' ids, from the
    fbench packages shipped with the job (memcore's weights included), with the same
    shard contents as inline."""
    res = subprocess.run([sys.executable, "-c", DRIVER, two_node_cluster.address],
                         env=two_node_cluster.env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["errors"] == [] and got["ok"] == got["n"]
    assert len(got["nodes"]) == 2, got["nodes"]
    # Shipped, not imported from the checkout: the worker's memcore is Ray's unpacked copy,
    # with every weights file of the local package.
    assert got["shipped_memcore"].startswith(two_node_cluster.temp_dir), got["shipped_memcore"]
    assert got["shipped_weights"] == got["local_weights"]
    assert got["shipped_fbench"].startswith(two_node_cluster.temp_dir), got["shipped_fbench"]
    # Provenance travels with the tasks: same commit and versions as the driver's.
    assert got["differing"] == [], got["differing"]


def test_cli_sweep_with_address_runs_on_both_nodes(two_node_cluster: Cluster,
                                                    tmp_path: Path) -> None:
    """Prevents `fbench sweep --address HOST:PORT` from ignoring the cluster: every job of
    the sweep ends as a shard, the shards name both nodes, and they carry the driver's git
    commit (the workers run shipped folders, not a checkout)."""
    import pyarrow.parquet as pq

    from runner.job.provenance import git_commit

    out = tmp_path / "out"
    res = subprocess.run(
        [sys.executable, "-m", "runner.cli", "sweep", "--seeds", "6",
         "--policies", "keep_all,ebbinghaus", "--workloads", "contradiction",
         "--horizons", "1000", "--no-report",
         "--address", two_node_cluster.address, "--out", str(out)],
        env=two_node_cluster.env, cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "12 run, 0 skipped" in res.stderr
    shards = sorted(out.glob("shards/*/*/*.parquet"))
    assert len(shards) == 12
    nodes = {pq.read_table(p, columns=["node"]).column("node")[0].as_py() for p in shards}
    assert len(nodes) == 2, nodes
    commits = {pq.read_table(p, columns=["git_commit"]).column(0)[0].as_py() for p in shards}
    assert commits == {git_commit()}


def test_unreachable_address_is_a_one_line_error_in_seconds() -> None:
    """Prevents `fbench sweep --address` with a typo from reaching ray.init (which
    retries an unreachable GCS for ~2 min) or dumping a traceback: the probe before it
    answers with one line naming the address and the fix (`ray start --head`)."""
    address = f"127.0.0.1:{free_port()}"
    spec = make_spec("contradiction", "keep_all", 0, horizon=50).canonical_json()
    with pytest.raises(ExecutorError) as err:
        RayExecutor(job_task(), address=address).run([spec], lambda o: None)
    msg = str(err.value)
    assert "\n" not in msg and address in msg and "ray start --head" in msg


NO_CPU = """
import json
from cluster.base import ExecutorError
from cluster.ray_connect import start_local_ray
from cluster.ray_executor import RayExecutor
from runner.job.execute import job_task
from runner.spec.resolve import make_spec

start_local_ray(num_cpus=0)
ex = RayExecutor(job_task(), unschedulable_s=3)
try:
    ex.run([make_spec("contradiction", "keep_all", 0, horizon=50).canonical_json()], print)
    print(json.dumps({"error": None}))
except ExecutorError as e:
    print(json.dumps({"error": str(e)}))
"""


def test_a_cluster_without_cpus_is_an_error_not_a_hang(tmp_path: Path) -> None:
    """Prevents a sweep that waits forever for tasks no node can run (a head started with
    --num-cpus=0 and no workers): it ends with a clear ExecutorError."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    res = subprocess.run([sys.executable, "-c", NO_CPU], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["error"] and "CPU" in got["error"] and "\n" not in got["error"]


def test_cli_sweep_on_the_cluster_workers_write_to_s3(two_node_cluster: Cluster,
                                                      tmp_path: Path) -> None:
    """Prevents results in object storage from funnelling through the driver on a real
    cluster: with `--out s3://...` (endpoint and credentials in the URI, nothing in the
    nodes' environment) the workers of both nodes write their shards to a real
    S3-compatible server, and the manifest says so."""
    from runner.results.where import location
    from runner.sweep.plan import existing_shards
    from tests.s3_server import make_bucket, s3_server

    with s3_server() as endpoint:
        make_bucket(endpoint, "cluster")
        out = (f"s3://fbench:fbench@cluster/sweep?endpoint_override="
               f"{endpoint.removeprefix('http://')}&scheme=http")
        res = subprocess.run(
            [sys.executable, "-m", "runner.cli", "sweep", "--seeds", "6",
             "--policies", "keep_all,ebbinghaus", "--workloads", "contradiction",
             "--horizons", "1000", "--no-report",
             "--address", two_node_cluster.address, "--out", out],
            env=two_node_cluster.env, cwd=tmp_path, capture_output=True, text=True,
            timeout=180,
        )
        assert res.returncode == 0, res.stderr[-3000:]
        assert "12 run, 0 skipped" in res.stderr
        import pyarrow.parquet as pq

        from runner.results.where import arrow_source

        loc = location(out)
        shards = existing_shards(loc)
        assert len(shards) == 12
        nodes = {pq.read_table(arrow_source(p), columns=["node"]).column(0)[0].as_py()
                 for p in shards.values()}
        assert len(nodes) == 2, nodes
        manifest = json.loads((loc / "manifest.json").read_text())
        assert manifest["shards_written_by"] == "workers"
