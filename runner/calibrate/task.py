"""The calibration's job function, shipped to an executor by reference like the sweep's:
one job's quality metrics and, per query, whether its top-k held the current value."""

from __future__ import annotations

import json
import traceback
from collections.abc import Sequence

import pyarrow as pa

from cluster.base import Outcome
from runner.job.run import run_job
from runner.metrics import quality_metrics
from runner.spec.jobspec import JobSpec

SIZE_METRICS = ("final_size", "n_forgotten")


def columns() -> list[str]:
    """The metrics a calibration compares (every per-query one, and the sizes)."""
    return [m.name for m in quality_metrics()] + list(SIZE_METRICS)


def calibrate_task(spec_jsons: Sequence[str], node: str) -> list[Outcome]:
    """Run each job, recording its per-query answers; a failure is an outcome."""
    out = []
    for spec_json in spec_jsons:
        try:
            spec = JobSpec.from_dict(json.loads(spec_json))
            result = run_job(spec, record_queries=True)
            final = result.final
            row = {"policy": [spec.policy], "params": [json.dumps(dict(spec.params),
                                                                  sort_keys=True)],
                   "seed": [spec.seed], "answered": [result.answered or []]}
            row |= {name: [float(final[name])] for name in columns()}
            out.append(Outcome(spec_json, pa.table(row)))
        except Exception:
            out.append(Outcome(spec_json, None, traceback.format_exc()))
    return out
