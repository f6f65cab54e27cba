"""Sweeps: a validated ``SweepSpec`` and its pure expansion into ``JobSpec``s (the spec
from CLI flags and sweep.toml: ``runner.sweep.config``).

Grid parameters are ``target.key=v1,v2``: the target is a policy's name
(``ebbinghaus.tau``), a workload's name (``contradiction.p_hard``), ``store``
(every reference policy), or a namespace (``policy.tau``, ``workload.p_hard``: every
policy or workload that declares the key); a bare ``key`` applies wherever it is
declared. Several values make a grid axis. A parameter at its default collapses
into the default cell, so a job never runs twice under two names.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memcore import POLICIES
from runner.adapters import MEMORIES
from runner.errors import FbenchError, lookup
from runner.spec.params import NAMESPACES, Scalar, fields_of
from runner.spec.resolve import make_spec
from runner.sweep.grid import Cell, Grid, ListCell, SeedCell
from workloads import WORKLOADS, FromData, Workload, current_builtin_names

DEFAULT_SEEDS = 20  # the coverage study's choice: benchmarks/bench_coverage.py
DEFAULT_BASELINE = "keep_all"


@dataclass(frozen=True)
class SweepSpec:
    """What to run: the grid of seeds × policies × workloads × horizons × params."""

    seeds: tuple[int, ...] = tuple(range(DEFAULT_SEEDS))
    policies: tuple[str, ...] = ()    # empty: every reference policy
    workloads: tuple[str, ...] = ()   # empty: every workload
    horizons: tuple[str, ...] = ("1x",)  # plain numbers in the workload's unit, or Nx
    params: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()
    k: int = 5
    baseline: str = DEFAULT_BASELINE  # the policy the report pairs every cell with
    # The declared primary family (runner.analysis.compare): pairs of variant labels
    # ("ebbinghaus", "ebbinghaus tau=30"), each compared besides every policy against the
    # baseline, on these metrics (empty: the default primary metrics).
    compare: tuple[tuple[str, str], ...] = ()
    primary_metrics: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seeds": list(self.seeds), "policies": list(self.policies),
            "workloads": list(self.workloads), "horizons": list(self.horizons),
            "params": {k: list(v) for k, v in self.params}, "k": self.k,
        }
        if self.baseline != DEFAULT_BASELINE:  # sweeps without one keep their sweep.json
            out["baseline"] = self.baseline
        if self.compare:
            out["compare"] = [list(pair) for pair in self.compare]
        if self.primary_metrics:
            out["primary_metrics"] = list(self.primary_metrics)
        return out


OVERWRITE = ("never", "failed", "always")


def policy_names(spec: SweepSpec) -> list[str]:
    """The sweep's memories as given (each must resolve); by default fbench's own
    policies in the reference store (wrappers aside; plugins only by name)."""
    if spec.policies:
        for p in spec.policies:
            lookup(MEMORIES, p, "policy")
        return list(spec.policies)
    return [n for n in POLICIES.builtin_names() if not POLICIES[n].wrapper]


def workload_names(spec: SweepSpec) -> list[str]:
    """The sweep's workloads as given; by default fbench's own at their current versions
    (retired versions and plugins only by name)."""
    if spec.workloads:
        for w in spec.workloads:
            lookup(WORKLOADS, w, "workload")
        return list(spec.workloads)
    return current_builtin_names()


def horizon_of(raw: str, workload: Workload) -> int:
    """``"3000"`` in the workload's unit, or ``"4x"``: 4 × its default horizon."""
    return scaled_horizon(raw, workload.default_horizon)


def scaled_horizon(raw: str, default: int) -> int:
    """``"3000"``, or ``"4x"``: 4 × ``default``."""
    text = raw.strip().lower()
    try:
        value = round(float(text[:-1]) * default) if text.endswith("x") else int(text)
    except (ValueError, OverflowError):  # "abc", or "infx"/"nanx"
        raise FbenchError(
            f"horizon {raw!r} is neither a number nor Nx; write e.g. --horizons 1000,4x"
        ) from None
    if value <= 0:
        raise FbenchError(f"horizon {raw!r} must be positive")
    return value


def _axes_for(spec: SweepSpec, workload: str, policy: str) -> list[tuple[str, tuple[Scalar, ...]]]:
    """The grid axes that apply to one (workload, policy) cell, as namespaced keys."""
    memory, wl = MEMORIES[policy], WORKLOADS[workload]
    spaces: dict[str, tuple[str, type | None]] = {
        "policy": (policy, memory.Params), "workload": (workload, wl.Params),
        "store": ("store", memory.StoreParams),
    }
    axes = []
    for key, values in spec.params:
        target, dot, name = key.rpartition(".")
        for ns, (owner, cls) in spaces.items():
            if cls is None or name not in fields_of(cls):
                continue
            if not dot or target in (ns, owner):
                axes.append((f"{ns}.{name}", values))
    return axes


def _check_params_apply(spec: SweepSpec, workloads: list[str], policies: list[str]) -> None:
    for key, values in spec.params:
        if not values:
            raise FbenchError(f"parameter {key!r} has no values; write e.g. {key}=1,2")
        single = SweepSpec(params=((key, values),))
        if not any(_axes_for(single, w, p) for w in workloads for p in policies):
            target = key.rpartition(".")[0]
            known = set(NAMESPACES) | set(workloads) | set(policies)
            hint = (f"{target!r} is not a policy, workload or namespace of this sweep"
                    if target and target not in known else "no policy or workload declares it")
            raise FbenchError(
                f"parameter {key!r} applies to no job of this sweep: {hint}; "
                "see `fbench list policies` and `fbench list workloads`"
            )


def expand(spec: SweepSpec) -> Grid:
    """Every job of the sweep, validated, deduplicated, in a stable order: a ``Grid``,
    which makes each job when it is asked for."""
    _check_seeds(spec.seeds)
    workloads, policies = workload_names(spec), policy_names(spec)
    _check_labels(spec, policies)
    _check_params_apply(spec, workloads, policies)
    seeds = _distinct(spec.seeds)
    cells: list[Cell] = []
    # the jobs made: a parameter at its default collapses into the default cell, each
    # job once
    made: set[str] = set()
    for w in workloads:
        if isinstance(WORKLOADS[w], FromData):
            cells += _data_cells(spec, w, policies, seeds, made)
        else:
            cells += _generated_cells(spec, w, policies, seeds, made)
    return Grid(cells)


def _check_seeds(seeds: tuple[int, ...]) -> None:
    if not seeds:
        raise FbenchError("a sweep needs at least one seed; give --seeds N or --seed-list")
    if min(seeds) < 0:
        raise FbenchError(f"seed must be non-negative, got {min(seeds)}")


def _check_labels(spec: SweepSpec, policies: list[str]) -> None:
    """The baseline and every compared variant's policy are policies of the sweep."""
    if spec.baseline != DEFAULT_BASELINE and spec.baseline not in policies:
        raise FbenchError(f"baseline {spec.baseline!r} is not a policy of this sweep; "
                          f"choose one of {', '.join(policies)}")
    for pair in spec.compare:
        for label in pair:
            if label.split(" ")[0] not in policies:
                raise FbenchError(f"compare names {label!r}, whose policy is not in this "
                                  f"sweep; choose among {', '.join(policies)}")


def _distinct(seeds: tuple[int, ...]) -> tuple[int, ...]:
    """Each seed once, in the order given."""
    if all(a < b for a, b in itertools.pairwise(seeds)):
        return seeds
    return tuple(dict.fromkeys(seeds))


def _combos(spec: SweepSpec, workload: str, policy: str) -> Iterator[list[tuple[str, Scalar]]]:
    """Each combination of the grid axes that apply to one (workload, policy) cell."""
    axes = _axes_for(spec, workload, policy)
    keys = [k for k, _ in axes]
    for combo in itertools.product(*(vals for _, vals in axes)):
        yield list(zip(keys, combo, strict=True))


def _generated_cells(spec: SweepSpec, workload: str, policies: list[str],
                     seeds: tuple[int, ...], made: set[str]) -> Iterator[Cell]:
    """A generator's cells not in ``made``: its jobs differ by seed only, so a cell's
    first job is made (and validated) and its seeds laid over it."""
    horizons = [horizon_of(h, WORKLOADS[workload]) for h in spec.horizons]
    for horizon, policy in itertools.product(horizons, policies):
        for params in _combos(spec, workload, policy):
            first = make_spec(workload, policy, seeds[0], horizon, spec.k, params)
            if first.job_id not in made:
                made.add(first.job_id)
                yield SeedCell(first, seeds)


def _data_cells(spec: SweepSpec, workload: str, policies: list[str],
                seeds: tuple[int, ...], made: set[str]) -> Iterator[Cell]:
    """A data workload's cells, of its jobs not in ``made``: the data has its horizon,
    so each job is made, an Nx horizon scaling its own file's."""
    for raw, policy in itertools.product(spec.horizons, policies):
        for params in _combos(spec, workload, policy):
            jobs = []
            for seed in seeds:
                horizon = scaled_horizon(raw, make_spec(
                    workload, policy, seed, None, spec.k, params).horizon)
                job = make_spec(workload, policy, seed, horizon, spec.k, params)
                if job.job_id not in made:
                    made.add(job.job_id)
                    jobs.append(job)
            if jobs:
                yield ListCell(tuple(jobs))
