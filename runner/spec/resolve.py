"""The CLI/config boundary: names and raw parameters in, a validated ``JobSpec`` out,
and back from a spec to the live objects a job needs."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from fbench.clock import clock_of
from fbench.extras import require
from fbench.registry import RegistryError
from memcore import EMBEDDERS
from runner.adapters import MEMORIES, MemoryKind
from runner.errors import FbenchError, lookup
from runner.spec.jobspec import JobSpec
from runner.spec.params import Scalar, build, clock_defaults, resolve
from workloads import WORKLOADS, FromData, Workload


@dataclass(frozen=True)
class Resolved:
    workload: Workload
    workload_params: Any
    memory: MemoryKind
    policy_params: Any
    store_params: Any

    def full_params(self) -> dict[str, Scalar]:
        """Every parameter, defaults included, as canonical ``namespace.key``."""
        out: dict[str, Scalar] = {}
        for ns, obj in (("workload", self.workload_params), ("policy", self.policy_params),
                        ("store", self.store_params)):
            if obj is not None:
                out.update({f"{ns}.{k}": v for k, v in dataclasses.asdict(obj).items()})
        return out


def declared(memory: MemoryKind, workload: Workload) -> dict[str, type]:
    spaces: dict[str, type] = {"policy": memory.Params, "workload": workload.Params}
    if memory.StoreParams is not None:
        spaces["store"] = memory.StoreParams
    return spaces


def make_spec(
    workload: str,
    policy: str,
    seed: int,
    horizon: int | None = None,
    k: int = 5,
    params: Iterable[tuple[str, Scalar]] = (),
) -> JobSpec:
    """Validate names and values; every problem is a one-line ``FbenchError``."""
    w = lookup(WORKLOADS, workload, "workload")
    m = lookup(MEMORIES, policy, "policy")
    if seed < 0:
        raise FbenchError(f"seed must be non-negative, got {seed}")
    where = {"policy": f"policy {policy!r}", "workload": f"workload {workload!r}",
             "store": "the reference store"}
    canonical = resolve(params, declared(m, w), where, lambda out: (
        clock_of(w, build(w.Params, out, "workload", workload)), workload))
    require_libraries(m, canonical)
    data = bound_data(w, workload, canonical, seed)
    stream = data[0] if data is not None else w
    if horizon is None:
        horizon = stream.default_horizon
    if horizon <= 0:
        raise FbenchError(
            f"horizon must be a positive number of {stream.horizon_unit}, got {horizon}")
    if k <= 0:
        raise FbenchError(f"k must be a positive number of retrieved items, got {k}")
    code = code_identity(policy, workload) + ((("data", data[1]),) if data else ())
    clock = clock_of(stream, build(w.Params, canonical, "workload", workload))
    defaults = clock_defaults(declared(m, w), canonical, clock)
    return JobSpec(workload, policy, seed, horizon, tuple(canonical.items()), k,
                   tuple(sorted(code)), workload_version=w.version,
                   defaults=tuple(sorted(defaults.items())))


def require_libraries(memory: MemoryKind, canonical: dict[str, Scalar]) -> None:
    """One ``FbenchError`` naming the extra to install when a module the memory imports
    (``MemoryKind.imports``), or one its embedder loads (the embedder's ``imports``), is
    missing: before any job runs, a dry run included."""
    require(f"policy {memory.name!r}", memory.imports)
    store = (build(memory.StoreParams, canonical, "store", "the reference store")
             if memory.StoreParams is not None else None)
    embedder = memory.embedder(build(memory.Params, canonical, "policy", memory.name), store)
    if embedder in EMBEDDERS:
        require(f"embedder {embedder!r}", getattr(EMBEDDERS[embedder], "imports", ()))


def bound_data(w: Workload, name: str, params: dict[str, Scalar], seed: int
               ) -> tuple[Workload, str] | None:
    """A workload that reads data (``trace``): the workload of its data for ``seed`` and
    the data's identity; None for a generator. An unreadable file is one line."""
    if not isinstance(w, FromData):
        return None
    wp = build(w.Params, params, "workload", name)
    try:
        return w.bind(wp, seed), w.data_identity(wp, seed)
    except (ValueError, OSError) as exc:
        raise FbenchError(str(exc)) from None


def code_identity(policy: str, workload: str) -> tuple[tuple[str, str], ...]:
    """The plugin code a job of ``policy`` on ``workload`` runs (fbench's own: none)."""
    pairs = (("memory", MEMORIES.origin(policy).identity),
             ("workload", WORKLOADS.origin(workload).identity))
    return tuple((role, ident) for role, ident in pairs if ident)


@runtime_checkable
class CapacityParams(Protocol):
    """The parameters of a capacity-bounded memory (memcore's capacity policies, the
    oracle): an absolute ``capacity``, or a share of the workload's distinct facts."""

    capacity: int
    capacity_fraction: float


@runtime_checkable
class BudgetParams(Protocol):
    """The store parameters of a memory run at a budget (``store.budget``)."""

    budget: int


def with_capacity_fraction(policy_params: Any, workload: Workload, workload_params: Any) -> Any:
    """Resolve ``capacity_fraction`` (a share of the workload's distinct facts) into the
    policy's absolute ``capacity``; other parameters pass through."""
    fraction = (policy_params.capacity_fraction
                if isinstance(policy_params, CapacityParams) else 0.0)
    if not fraction:
        return policy_params
    capacity = max(1, round(fraction * workload.distinct_facts(workload_params)))
    return dataclasses.replace(policy_params, capacity=capacity)


def materialize(spec: JobSpec) -> Resolved:
    """The live objects of ``spec``; a plugin whose code here is not the code the spec
    names (another version on a cluster's node) is a one-line error."""
    w = lookup(WORKLOADS, spec.workload, "workload")
    m = lookup(MEMORIES, spec.policy, "policy")
    params = {**dict(spec.defaults), **dict(spec.params)}
    data = bound_data(w, spec.workload, params, spec.seed)
    here = tuple(sorted(code_identity(spec.policy, spec.workload)
                        + ((("data", data[1]),) if data else ())))
    if data is not None and dict(here).get("data") != dict(spec.code).get("data"):
        raise RegistryError(
            f"the data of workload {spec.workload!r} changed since the job was planned "
            f"({dict(spec.code).get('data')} then, {data[1]} now); rerun the sweep")
    if here != spec.code:
        raise RegistryError(
            f"plugin code differs from the sweep's: {dict(spec.code) or 'fbench only'} there, "
            f"{dict(here) or 'fbench only'} here; install the same plugin version everywhere")
    if w.version != spec.workload_version:
        raise RegistryError(
            f"workload {spec.workload!r} is version {w.version} here but the job ran version "
            f"{spec.workload_version}; ask for {spec.workload}@{spec.workload_version} to "
            "rerun the old stream, or rerun the sweep for the current one")
    workload_params = build(w.Params, params, "workload", spec.workload)
    if data is not None:
        w = data[0]
    store_params = (build(m.StoreParams, params, "store", "the reference store")
                    if m.StoreParams is not None else None)
    policy_params = with_capacity_fraction(
        build(m.Params, params, "policy", spec.policy), w, workload_params)
    return Resolved(
        workload=w,
        workload_params=workload_params,
        memory=m,
        policy_params=with_budget(policy_params, store_params),
        store_params=store_params,
    )


def with_budget(policy_params: Any, store_params: Any) -> Any:
    """A capacity policy (and the oracle) meets ``store.budget`` natively: its own
    ``capacity`` becomes the budget (the store's uniform cap then never has to act)."""
    budget = store_params.budget if isinstance(store_params, BudgetParams) else 0
    capped = isinstance(policy_params, CapacityParams)
    if budget and capped:
        return dataclasses.replace(policy_params, capacity=budget, capacity_fraction=0.0)
    return policy_params
