"""Trust, but verify: rerun a few published jobs here and compare their final metrics
with the published ones, every metric but the timing ones, exactly.

Jobs are meant to give the same metrics on any machine, but a machine whose floating
point differs (another BLAS kernel, another CPU's vector unit) moves them; a published
set made on such a machine must be caught, never silently paired with local results.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.job.execute import execute
from runner.metrics import METRICS


@dataclass(frozen=True)
class Mismatch:
    """A published job whose rerun here differs: the first metric that does."""

    job_id: str
    label: str
    metric: str
    here: float
    published: float

    def line(self) -> str:
        return (f"published job {self.job_id} ({self.label}) differs here: {self.metric} "
                f"{self.here!r} vs published {self.published!r}; the published results come "
                "from a machine whose floats differ, so they cannot be paired with this one")


def sample(rows: Sequence[Mapping[str, Any]], first: Sequence[Mapping[str, Any]], n: int,
           seed: int = 0) -> list[Mapping[str, Any]]:
    """``first`` (the baselines'), then ``n`` of ``rows`` drawn with ``seed``."""
    firsts = {r["job_id"] for r in first}
    rest = sorted((r for r in rows if r["job_id"] not in firsts), key=lambda r: r["job_id"])
    return [*first, *random.Random(seed).sample(rest, min(n, len(rest)))]


def differs(here: Mapping[str, Any], published: Mapping[str, Any]) -> str | None:
    """The first non-timing metric whose values differ (nan equals nan), or None."""
    for name, metric in METRICS.items():
        if metric.timing or name not in published:
            continue
        a, b = here.get(name), published.get(name)
        if a is None and b is None:
            continue
        if a is None or b is None:
            return name
        if not (a == b or (math.isnan(a) and math.isnan(b))):
            return name
    return None


def verify(jobs: Sequence[Mapping[str, Any]]) -> Mismatch | str | None:
    """Rerun each published final row's job (its ``spec``) inline: the first mismatch,
    or a job that cannot run here (one line), or None when every one agrees."""
    for row in jobs:
        label = f"{row['policy']} {row['params']} on {row['workload']} seed {row['seed']}"
        outcome = execute(row["spec"], "verify")
        if outcome.table is None:
            return f"cannot rerun published job {row['job_id']} ({label}): " \
                   f"{(outcome.error or '').strip().splitlines()[-1]}"
        here = outcome.table.to_pylist()[-1]
        metric = differs(here, row)
        if metric is not None:
            return Mismatch(row["job_id"], label, metric, here[metric], row[metric])
    return None
