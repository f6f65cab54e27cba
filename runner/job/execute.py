"""The job function executors ship: a spec's JSON in, its shard table (or the error's
traceback) out, as a ``cluster.Outcome``. ``job_task(prov, sink)`` is that function with
the driver's provenance bound, handed to an executor by reference. With a ``sink`` (an
OUT every worker reaches: object storage, or a folder every node mounts) the worker
writes the shard there itself and only the outcome travels back."""

from __future__ import annotations

import functools
import json
import os
import socket
import traceback
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from cluster.base import Outcome, TaskFn
from fbench.extras import MissingExtra, extra_of, pip_line
from fbench.registry import RegistryError
from runner.adapters import MEMORIES
from runner.job.provenance import provenance
from runner.job.run import JobResult, run_job
from runner.metrics import METRICS
from runner.results.samples import samples_paths, write_samples
from runner.results.shard import shard_path, shard_schema, write_shard
from runner.results.where import Loc
from runner.spec.jobspec import JobSpec


def result_table(result: JobResult, node: str, prov: dict[str, Any] | None = None) -> pa.Table:
    """The shard of one finished job; ``prov`` is the driver's provenance (default: this
    process's)."""
    prov = prov or provenance(MEMORIES[result.spec.policy].library)
    vers: dict[str, str] = prov["versions"]
    spec = result.spec
    n = len(result.rows)
    cols: dict[str, list[Any]] = {
        "job_id": [spec.job_id] * n,
        "workload": [spec.workload] * n,
        "workload_version": [spec.workload_version] * n,
        "policy": [spec.policy] * n,
        "seed": [spec.seed] * n,
        "horizon": [spec.horizon] * n,
        "k": [spec.k] * n,
        "params": [json.dumps(dict(spec.params), sort_keys=True)] * n,
        "params_full": [json.dumps(result.resolved_params, sort_keys=True)] * n,
        "embedder": [result.embedder] * n,
        "spec": [spec.canonical_json()] * n,
        "checkpoint": list(range(n)),
        "t": [row["t"] for row in result.rows],
        "fraction": [row["fraction"] for row in result.rows],
        "is_final": [i == n - 1 for i in range(n)],
    }
    for name in METRICS:
        cols[name] = [float(row[name]) for row in result.rows]
    cols["node"] = [node] * n
    cols["fbench_version"] = [vers["fbench"]] * n
    cols["git_commit"] = [prov["git_commit"]] * n
    cols["versions"] = [json.dumps(vers, sort_keys=True)] * n
    schema = shard_schema(result.categories)
    for name in schema.names[len(cols):]:  # the workload's own categories' split metrics
        cols[name] = [float(row[name]) for row in result.rows]
    return pa.table(cols, schema=schema)


PLUGIN_ERROR = "plugin: "  # an outcome's error that no rerun can mend: the sweep stops
STORAGE_ERROR = "storage: "  # a worker could not write its shard to OUT: the sweep stops


def execute(spec_json: str, node: str, prov: dict[str, Any] | None = None,
            sink: Loc | None = None, samples: bool = False) -> Outcome:
    """The job function executors ship: never raises; a failure is an outcome (a
    plugin or a module this process cannot import: ``PLUGIN_ERROR`` and one line naming
    it, the extra that installs it if any, and the node; a shard ``sink`` refused:
    ``STORAGE_ERROR``). ``samples``: record the job's evidence too (written to the
    ``sink`` before the shard, or sent back with the table)."""
    try:
        spec = JobSpec.from_dict(json.loads(spec_json))
        result = run_job(spec, samples=True) if samples else run_job(spec)
        table = result_table(result, node, prov)
        if sink is None:
            return Outcome(spec_json, table, samples=result.samples)
        try:
            if result.samples is not None:
                write_samples(result.samples, spec, *samples_paths(sink, spec))
            stamp = write_shard(shard_path(sink, spec), table)
        except OSError as exc:
            reason = " ".join(str(exc.strerror or exc).split())[:300]
            return Outcome(spec_json, None, f"{STORAGE_ERROR}cannot write to {sink} "
                                            f"{_where(node)}: {reason}")
        return Outcome(spec_json, None, stored=stamp)
    except (RegistryError, MissingExtra) as exc:
        return Outcome(spec_json, None, f"{PLUGIN_ERROR}{exc}, {_where(node)}")
    except ModuleNotFoundError as exc:  # a plugin's or fbench's own dependency
        return Outcome(spec_json, None, f"{PLUGIN_ERROR}{_lacking(exc.name)} {_where(node)}")
    except Exception:
        return Outcome(spec_json, None, traceback.format_exc())


def _lacking(module: str | None) -> str:
    """A module this process cannot import, and the extra that installs it if any."""
    extra = extra_of(module or "")
    return f"module {module!r} is not installed" + (f" ({pip_line(extra)})" if extra else "")


def _where(node: str) -> str:
    """The node a job ran on, for a person: its host name and the start of its id."""
    return f"on node {node[:12]} (host {socket.gethostname()})"


def execute_batch(
    spec_jsons: Sequence[str], node: str, prov: dict[str, Any] | None = None,
    sink: Loc | None = None, samples: bool = False,
) -> list[Outcome]:
    """Several jobs in one task (so each task carries enough work to pay its overhead)."""
    return [execute(s, node, prov, sink, samples) for s in spec_jsons]


def shipped_packages() -> list[str]:
    """The package folders a cluster's workers need (``py_modules``; whole folders, so
    memcore's weights travel too). Paths, not module objects: Ray Client cannot
    pickle modules."""
    import cluster
    import fbench
    import memcore
    import runner
    import workloads

    return [os.path.dirname(str(m.__file__))
            for m in (fbench, workloads, memcore, runner, cluster)]


def job_task(prov: dict[str, Any] | None = None, sink: Loc | None = None,
             samples: bool = False) -> TaskFn:
    """``execute_batch`` with the driver's provenance bound (default: this process's),
    the OUT the workers write their shards to (``None``: the driver writes them), and
    whether the jobs record their evidence."""
    return functools.partial(execute_batch, prov=prov or provenance(), sink=sink,
                             samples=samples)
