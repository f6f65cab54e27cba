"""Running a calibration: every reference policy and the oracle, unbounded and at a few
memory budgets, over the seeds, on one workload (its parameters as given), through the
same executors as a sweep (the task is ``runner.calibrate.task.calibrate_task``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memcore import POLICIES
from runner.calibrate.analyze import BUDGET, ORACLE, Calibration, analyze
from runner.errors import FbenchError
from runner.job.execute import shipped_packages
from runner.spec.jobspec import JobSpec
from runner.spec.params import Scalar
from runner.spec.resolve import make_spec

DEFAULT_BUDGETS = (30, 120)


def default_policies() -> list[str]:
    """fbench's reference policies (the pinned wrappers aside) and the oracle."""
    return [n for n in POLICIES.builtin_names() if not POLICIES[n].wrapper] + [ORACLE]


def jobs(workload: str, seeds: Sequence[int], policies: Sequence[str],
         budgets: Sequence[int], params: Sequence[tuple[str, Scalar]] = (),
         horizon: int | None = None) -> list[JobSpec]:
    """Each policy × (no budget, each budget) × seed, with the workload's parameters."""
    if any(b <= 0 for b in budgets):
        raise FbenchError("--budgets must be positive entry counts, e.g. --budgets 30,120")
    out = []
    for policy in policies:
        for budget in (0, *budgets):
            extra = [(BUDGET, budget)] if budget else []
            for seed in seeds:
                out.append(make_spec(workload, policy, seed, horizon,
                                     params=[*params, *extra]))
    return out


def calibrate(workload: str, seeds: Sequence[int], policies: Sequence[str] | None = None,
              budgets: Sequence[int] = DEFAULT_BUDGETS,
              params: Sequence[tuple[str, Scalar]] = (), horizon: int | None = None,
              executor: str = "inline",
              address: str | None = None,
              progress: Callable[[int, int], None] | None = None) -> Calibration:
    """Run the grid and analyze it; any failed job stops with one line."""
    from cluster import EXECUTORS, ExecutorError
    from cluster.base import Outcome
    from runner.calibrate.task import calibrate_task

    grid = jobs(workload, seeds, policies or default_policies(), budgets, params, horizon)
    rows: list[dict[str, Any]] = []
    failures: list[str] = []

    def on_outcome(o: Outcome) -> None:
        if o.table is None:
            failures.append(o.error or "unknown error")
        else:
            rows.extend(o.table.to_pylist())
        if progress:
            progress(len(rows) + len(failures), len(grid))

    ex = EXECUTORS[executor](task=calibrate_task, ship=shipped_packages(), sys_path=[],
                             env={}, address=address, max_in_flight=None, job_seconds=1.0)
    try:
        ex.start()
        ex.run([j.canonical_json() for j in grid], on_outcome)
    except ExecutorError as exc:
        raise FbenchError(str(exc)) from None
    finally:
        ex.close()
    if failures:
        last = failures[-1].strip().splitlines()[-1]
        raise FbenchError(f"{len(failures)} calibration job(s) failed; the last: {last}")
    return analyze(workload, rows)
