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
from dataclasses import dataclass
from typing import Any

from memcore import POLICIES
from runner.adapters import MEMORIES
from runner.errors import FbenchError, lookup
from runner.spec.params import NAMESPACES, Scalar, fields_of
from runner.spec.resolve import make_spec
from runner.sweep.grid import Cell, Grid, ListCell, SeedCell
from workloads import WORKLOADS, FromData, Workload, current_builtin_names

DEFAULT_SEEDS = 5
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
    if not spec.seeds:
        raise FbenchError("a sweep needs at least one seed; give --seeds N or --seed-list")
    if min(spec.seeds) < 0:
        raise FbenchError(f"seed must be non-negative, got {min(spec.seeds)}")
    workloads, policies = workload_names(spec), policy_names(spec)
    if spec.baseline != DEFAULT_BASELINE and spec.baseline not in policies:
        raise FbenchError(f"baseline {spec.baseline!r} is not a policy of this sweep; "
                          f"choose one of {', '.join(policies)}")
    for pair in spec.compare:
        for label in pair:
            if label.split(" ")[0] not in policies:
                raise FbenchError(f"compare names {label!r}, whose policy is not in this "
                                  f"sweep; choose among {', '.join(policies)}")
    _check_params_apply(spec, workloads, policies)
    seeds = spec.seeds if all(a < b for a, b in itertools.pairwise(spec.seeds)) \
        else tuple(dict.fromkeys(spec.seeds))  # (each seed once, in the order given)
    cells: list[Cell] = []
    templates: set[str] = set()  # a parameter at its default collapses into the default
    data_ids: set[str] = set()   # cell: each job once
    for w in workloads:
        # a workload that reads data has the data's horizon: Nx scales each file's own
        data = isinstance(WORKLOADS[w], FromData)
        raws: list[str | int] = list(spec.horizons) if data else [
            horizon_of(h, WORKLOADS[w]) for h in spec.horizons]
        for raw, policy in itertools.product(raws, policies):
            axes = _axes_for(spec, w, policy)
            keys = [k for k, _ in axes]
            for combo in itertools.product(*(vals for _, vals in axes)):
                params = list(zip(keys, combo, strict=True))
                if not data:  # a generator's job differs by seed only: validate once
                    first = make_spec(w, policy, seeds[0], int(raw), spec.k, params)
                    if first.job_id not in templates:
                        templates.add(first.job_id)
                        cells.append(SeedCell(first, seeds))
                    continue
                made = []
                for seed in seeds:
                    horizon = raw if isinstance(raw, int) else scaled_horizon(raw, make_spec(
                        w, policy, seed, None, spec.k, params).horizon)
                    job = make_spec(w, policy, seed, horizon, spec.k, params)
                    if job.job_id not in data_ids:
                        data_ids.add(job.job_id)
                        made.append(job)
                if made:
                    cells.append(ListCell(tuple(made)))
    return Grid(cells)
