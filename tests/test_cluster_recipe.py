"""The docs' cluster recipe (docs/cluster.md, "On a Ray cluster"), run as written on a
two-node cluster on loopback: the nodes started with ``ray start`` (step 1, with the
test's ports, one CPU each and its own temp dir), the driver submitted with ``ray job
submit --working-dir .`` (step 2b, on a small grid and a temporary OUT), the results read
back from OUT and compared with the same sweep run inline. The cluster is the test's own
and is stopped whatever happens (``tests/ray_cluster_util.py``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.ray_cluster_util import RAY_CLI, free_port, start_two_node_cluster
from tests.test_sweep_cli import deterministic

ROOT = Path(__file__).resolve().parent.parent
CLUSTER_PAGE = (ROOT / "docs" / "cluster.md").read_text()
GRID = ["--seeds", "2", "--workloads", "contradiction", "--policies", "keep_all,ebbinghaus",
        "--horizons", "300", "--no-report"]

def _recipe() -> list[str]:
    """The commands of the docs' cluster recipe, in order."""
    section = CLUSTER_PAGE.split("## On a Ray cluster", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [ln for ln in block.splitlines() if ln and not ln.startswith("#")]


def test_the_recipe_is_the_one_tested() -> None:
    """Prevents the docs' recipe drifting from what the test below runs: the same four
    commands, the job submitted from the checkout with the sweep as its entrypoint."""
    assert _recipe() == [
        "ray start --head --port=6379 --dashboard-host=0.0.0.0",
        "ray start --address=HEAD:6379",
        "fbench sweep --seeds 50 --address HEAD:6379 --out runs/main",
        "ray job submit --address http://HEAD:8265 --working-dir . -- fbench sweep "
        "--seeds 50 --out /srv/fbench",
    ]


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.cluster_extra  # the head serves the job server (ray[default])
def test_ray_job_submit_runs_the_sweep_on_the_cluster(tmp_path: Path) -> None:
    """Prevents the recipe's ``ray job submit`` from failing, running the jobs off the
    cluster or giving other numbers: the job succeeds, its shards are in OUT on the head's
    disk, name both nodes, and equal the same sweep run inline (timing and node aside,
    and the git commit, which the shipped checkout does not carry)."""
    import pyarrow.parquet as pq

    submit = _recipe()[3].split()
    dashboard = free_port()
    out = tmp_path / "submitted"
    with start_two_node_cluster(dashboard_port=dashboard) as cluster:
        argv = [*RAY_CLI, *submit[1:submit.index("--")], "--",
                *submit[submit.index("--") + 1:submit.index("--seeds")], *GRID,
                "--out", str(out)]
        argv[argv.index("http://HEAD:8265")] = f"http://127.0.0.1:{dashboard}"
        res = subprocess.run(argv, cwd=ROOT, env=cluster.env, capture_output=True, text=True,
                             timeout=600, check=False)
    log = res.stdout + res.stderr
    assert res.returncode == 0, log[-3000:]
    assert re.search(r"Job 'raysubmit_\w+' succeeded", log), log[-3000:]
    assert "4 run, 0 skipped" in log and "(ray executor)" in log, log[-3000:]
    shards = sorted(out.glob("shards/*/*/*.parquet"))
    assert len(shards) == 4
    nodes = {pq.read_table(p, columns=["node"]).column("node")[0].as_py() for p in shards}
    assert len(nodes) == 2, nodes
    inline = tmp_path / "inline"
    here = subprocess.run([*RAY_CLI[:2], "runner.cli", "sweep", *GRID, "--executor", "inline",
                           "--out", str(inline)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)
    assert here.returncode == 0, here.stderr[-2000:]
    # Ray ships the working dir without its .git: the submitted driver knows no commit
    got, want = deterministic(out), deterministic(inline)
    assert {row.pop("git_commit") for rows in got.values() for row in rows} == {""}
    for rows in want.values():
        for row in rows:
            del row["git_commit"]
    differ = sorted({k for job in want for a, b in zip(got.get(job, []), want[job], strict=False)
                     for k in b if a.get(k) != b[k]})
    assert got == want, differ
