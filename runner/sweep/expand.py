"""Sweeps: a validated ``SweepSpec`` (CLI flags or sweep.toml) and its pure
expansion into ``JobSpec``s.

Grid parameters are ``target.key=v1,v2``: the target is a policy's name
(``ebbinghaus.tau``), a workload's name (``contradiction.p_hard``), ``store``
(every reference policy), or a namespace (``policy.tau``, ``workload.p_hard``: every
policy or workload that declares the key); a bare ``key`` applies wherever it is
declared. Several values make a grid axis. A parameter at its default collapses
into the default cell, so a job never runs twice under two names.
"""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from memcore import POLICIES
from runner.adapters import MEMORIES
from runner.errors import FbenchError, lookup
from runner.spec.jobspec import JobSpec
from runner.spec.params import NAMESPACES, Scalar, fields_of
from runner.spec.resolve import make_spec
from runner.sweep.family import compare_pairs, primary_metrics
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


def expand(spec: SweepSpec) -> list[JobSpec]:
    """Every job of the sweep, validated, deduplicated, in a stable order."""
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
    jobs: dict[str, JobSpec] = {}
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
                    first = make_spec(w, policy, spec.seeds[0], int(raw), spec.k, params)
                    for seed in spec.seeds:
                        job = dataclasses.replace(first, seed=seed)
                        jobs.setdefault(job.job_id, job)
                    continue
                for seed in spec.seeds:
                    horizon = raw if isinstance(raw, int) else scaled_horizon(raw, make_spec(
                        w, policy, seed, None, spec.k, params).horizon)
                    job = make_spec(w, policy, seed, horizon, spec.k, params)
                    jobs.setdefault(job.job_id, job)
    return list(jobs.values())


# -- parsing -----------------------------------------------------------------

def parse_list(text: str | None, what: str) -> tuple[str, ...]:
    if text is None:
        return ()
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise FbenchError(f"--{what} is empty; give a comma-separated list")
    return items


def parse_seed_list(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(x) for x in parse_list(text, "seed-list"))
    except ValueError:
        raise FbenchError(f"--seed-list {text!r} must be integers, e.g. 0,3,7") from None
    if any(s < 0 for s in seeds):
        raise FbenchError("seeds must be non-negative")
    return tuple(dict.fromkeys(seeds))


def seeds_from_count(n: int) -> tuple[int, ...]:
    if n <= 0:
        raise FbenchError(f"--seeds must be positive, got {n}")
    return tuple(range(n))


def parse_param_axis(text: str) -> tuple[str, tuple[str, ...]]:
    key, sep, values = text.partition("=")
    if not sep or not key.strip():
        raise FbenchError(f"parameter {text!r} is not key=v1,v2; write e.g. ebbinghaus.tau=30,150")
    return key.strip(), parse_list(values, f"param {key.strip()}")


CONFIG_KEYS = {
    "seeds", "seed_list", "policies", "workloads", "horizons", "params", "k",
    "out", "executor", "address", "max_in_flight", "overwrite", "baseline",
    "compare", "primary_metrics",
}


def load_config(path: Path) -> dict[str, Any]:
    """Read sweep.toml; an unknown key or a malformed file is a one-line error."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise FbenchError(f"config {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FbenchError(f"cannot read config {str(path)!r}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise FbenchError(f"config {str(path)!r} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - CONFIG_KEYS)
    if unknown:
        raise FbenchError(
            f"config {str(path)!r}: unknown key {unknown[0]!r}; "
            f"known: {', '.join(sorted(CONFIG_KEYS))}"
        )
    return data


def _as_list(value: Any, key: str) -> list[Any]:
    if isinstance(value, str):
        return [x.strip() for x in value.split(",") if x.strip()]
    if isinstance(value, list):
        return value
    if isinstance(value, int | float | bool):
        return [value]
    raise FbenchError(f"config key {key!r} must be a list or a comma-separated string")


def spec_from_config(data: dict[str, Any]) -> dict[str, Any]:
    """The SweepSpec fields a config sets (CLI flags then override them)."""
    out: dict[str, Any] = {}
    if "seeds" in data and "seed_list" in data:
        raise FbenchError("config sets both 'seeds' and 'seed_list'; keep one")
    if "seeds" in data:
        if not isinstance(data["seeds"], int) or isinstance(data["seeds"], bool):
            raise FbenchError("config key 'seeds' must be an integer count")
        out["seeds"] = seeds_from_count(data["seeds"])
    if "seed_list" in data:
        out["seeds"] = parse_seed_list(",".join(str(s) for s in _as_list(data["seed_list"],
                                                                          "seed_list")))
    for key in ("policies", "workloads", "horizons"):
        if key in data:
            out[key] = tuple(str(x) for x in _as_list(data[key], key))
    if "params" in data:
        if not isinstance(data["params"], dict):
            raise FbenchError("config key 'params' must be a table of key = [values]")
        out["params"] = tuple(
            (str(k), tuple(_as_list(v, f"params.{k}"))) for k, v in data["params"].items()
        )
    if "k" in data:
        out["k"] = data["k"]
    if "baseline" in data:
        out["baseline"] = str(data["baseline"])
    if "compare" in data:
        out["compare"] = compare_pairs(data["compare"])
    if "primary_metrics" in data:
        out["primary_metrics"] = primary_metrics(data["primary_metrics"])
    return out


def build_spec(config: dict[str, Any], overrides: dict[str, Any]) -> SweepSpec:
    merged = spec_from_config(config) | {k: v for k, v in overrides.items() if v is not None}
    known = {f.name for f in fields(SweepSpec)}
    spec = SweepSpec(**{k: v for k, v in merged.items() if k in known})
    if not isinstance(spec.k, int) or spec.k <= 0:
        raise FbenchError(f"k must be a positive integer, got {spec.k!r}")
    return spec


def merge_params(
    config_params: Sequence[tuple[str, tuple[Scalar, ...]]], cli: Iterable[str]
) -> tuple[tuple[str, tuple[Scalar, ...]], ...]:
    """Config grid axes, with CLI ``--param`` axes replacing the same key."""
    axes = dict(config_params)
    for text in cli:
        key, values = parse_param_axis(text)
        axes[key] = values
    return tuple(axes.items())
