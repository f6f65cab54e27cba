"""The contract every memory adapter passes, reference or incumbent (one suite for all
registered memories), on small seeded streams of both workload families."""

from __future__ import annotations

import math

import pytest

from runner.adapters import MEMORIES, MemoryAdapter
from runner.job import run_job
from runner.resolve import make_spec, materialize
from workloads import WORKLOADS, Observe, Query, Tick

# every workload, at horizons small enough for the slow incumbents (pure-Python
# lethe-agent, mem0)
SMALL = {name: 240 if w.horizon_unit == "turns" else 12 for name, w in WORKLOADS.items()}
INCUMBENT_SETTINGS = {
    "lethe_agent": [(), (("retention", "fifo"), ("capacity", 20)),
                    (("retention", "ttl"), ("ttl_days", 3.0))],
    "mem0": [()],
}


def cases() -> list[tuple[str, tuple[tuple[str, object], ...]]]:
    out: list[tuple[str, tuple[tuple[str, object], ...]]] = []
    for name, kind in sorted(MEMORIES.items()):
        if kind.family == "incumbent":
            out += [(name, params) for params in INCUMBENT_SETTINGS[name]]
        else:
            out.append((name, ()))
    return out


def drive(policy: str, params: tuple, workload: str, k: int = 5) -> tuple[MemoryAdapter, int]:
    """Feed a small stream, checking the per-event contract; return the memory and the
    number of observations."""
    spec = make_spec(workload, policy, 3, horizon=SMALL[workload], k=k, params=params)
    r = materialize(spec)
    memory = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    n_obs = 0
    for ev in r.workload.events(spec.seed, spec.horizon, r.workload_params):
        if isinstance(ev, Observe):
            memory.observe(n_obs, ev.t, ev.text, ev.meta)
            n_obs += 1
            assert 0 <= memory.size() <= n_obs
        elif isinstance(ev, Query):
            hits = memory.query(ev.t, ev.text, k)
            ids = [h.obs_id for h in hits]
            assert len(ids) <= k and len(set(ids)) == len(ids), ids
            assert all(0 <= i < n_obs for i in ids), ids
            assert all(memory.holds(i) for i in ids), "returned an observation it forgot"
        elif isinstance(ev, Tick):
            memory.tick(ev.t)
    return memory, n_obs


@pytest.mark.parametrize(("policy", "params"), cases(), ids=lambda v: str(v))
@pytest.mark.parametrize("workload", sorted(SMALL))
def test_adapter_contract(policy: str, params: tuple, workload: str) -> None:
    """Prevents an adapter whose hits, size, tokens or forget counts disagree with what
    it holds: every memory returns at most k distinct held observations, and what it
    holds, what it says its size is and what it says it forgot add up."""
    memory, n_obs = drive(policy, params, workload)
    held = sum(memory.holds(i) for i in range(n_obs))
    assert memory.size() == held
    assert memory.tokens() >= 0 and (held == 0) == (memory.tokens() == 0)
    forgotten = memory.forgotten()
    assert all(v > 0 for v in forgotten.values())
    if MEMORIES[policy].family == "incumbent":
        # an incumbent's every deletion is in its forget log, once
        assert held + sum(forgotten.values()) == n_obs
    stored = getattr(memory, "stored", None)
    if stored is not None:
        assert stored() == held


@pytest.mark.parametrize(("policy", "params"),
                         [c for c in cases() if MEMORIES[c[0]].family == "incumbent"],
                         ids=lambda v: str(v))
def test_incumbent_jobs_are_deterministic(policy: str, params: tuple) -> None:
    """Prevents an incumbent whose numbers depend on a random id or the wall clock (both
    libraries name memories by uuid4): the same spec twice gives the same metrics."""
    spec = make_spec("lifecycle", policy, 1, horizon=10, params=params)
    a, b = run_job(spec).metrics(), run_job(spec).metrics()
    for key in a:
        if key.startswith(("wall_s", "query_ms")):
            continue
        assert a[key] == b[key] or (math.isnan(a[key]) and math.isnan(b[key])), key
