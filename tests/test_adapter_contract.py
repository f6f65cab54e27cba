"""The contract every memory adapter passes, reference, oracle or incumbent: the one
suite `fbench check` runs on any memory (runner/adapters/contract.py), applied here to
every memory fbench ships, on small seeded streams of both workload families."""

from __future__ import annotations

import math

import pytest

from runner.adapters import MEMORIES
from runner.adapters.contract import FAST_STREAMS, RULES, check_memory
from runner.job.run import run_job
from runner.spec.resolve import make_spec, materialize
from workloads import WORKLOADS, Observe, Query, Tick, current_builtin_names

# Every workload fbench ships at its current version, at horizons small enough for the
# slow incumbents (fbench check itself uses one stream per family).
STREAMS: tuple[tuple[str, int | None], ...] = tuple(
    (name, 240 if WORKLOADS[name].horizon_unit == "turns" else 12)
    for name in current_builtin_names())
# Settings worth checking beyond the defaults (any memory not named: its defaults).
MORE_SETTINGS: dict[str, list[tuple[tuple[str, object], ...]]] = {
    "lethe_agent": [(("retention", "fifo"), ("capacity", 20)),
                    (("retention", "ttl"), ("ttl_days", 3.0))],
    "mem0": [(("expire_days", 3.0),)],
    "langgraph_store": [(("embedder", "minilm"),),
                        (("backend", "sqlite"), ("ttl_days", 3.0), ("refresh_on_read", False)),
                        (("backend", "sqlite"), ("embedder", "minilm"))],
    "yantrikdb": [(("max_active", 20),), (("embedder", "minilm"),)],
}


def cases() -> list[tuple[str, tuple[tuple[str, object], ...]]]:
    names = [n for n in MEMORIES.names() if MEMORIES.origin(n).source == "builtin"]
    return [(name, params) for name in names for params in [(), *MORE_SETTINGS.get(name, [])]]


@pytest.mark.parametrize(("policy", "params"), cases(), ids=lambda v: str(v))
def test_adapter_contract(policy: str, params: tuple) -> None:
    """Prevents an adapter whose hits, size, tokens or forget counts disagree with what
    it holds: every rule of the contract holds for every memory fbench ships, on every
    workload (a setting with the MiniLM embedder on fbench check's own two streams,
    one per family: every stream costs it most of a minute of encoding)."""
    minilm_only = dict(params).get("embedder") == "minilm"
    verdicts = check_memory(policy, params, streams=FAST_STREAMS if minilm_only else STREAMS,
                            compare=False).verdicts
    assert [v.rule.name for v in verdicts] == [r.name for r in RULES]
    assert [f"{v.rule.name}: {v.failure}" for v in verdicts if not v.ok] == []
    assert all(v.checked > 0 for v in verdicts)


@pytest.mark.parametrize(("policy", "params"),
                         [c for c in cases() if MEMORIES[c[0]].family == "incumbent"],
                         ids=lambda v: str(v))
def test_incumbents_forget_log_every_deletion_once(policy: str, params: tuple) -> None:
    """Prevents an incumbent adapter that loses deletions: every observation is either
    held or in the library's forget log, once (all but lethe-agent also agree with their
    own store's count)."""
    r_spec = make_spec("lifecycle", policy, 3, horizon=12, params=params)
    r = materialize(r_spec)
    memory = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    n_obs = 0
    for ev in r.workload.events(r_spec.seed, r_spec.horizon, r.workload_params):
        if isinstance(ev, Observe):
            memory.observe(n_obs, ev.t, ev.text, ev.meta)
            n_obs += 1
        elif isinstance(ev, Query):
            memory.query(ev.t, ev.text, 5)
        elif isinstance(ev, Tick):
            memory.tick(ev.t)
    held = sum(memory.holds(i) for i in range(n_obs))
    assert held + sum(memory.forgotten().values()) == n_obs
    if policy != "lethe_agent":  # its own count agrees
        assert memory.stored() == held == memory.size()  # type: ignore[attr-defined]


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


@pytest.mark.parametrize("policy", ["lethe", "ebbinghaus", "last_write_wins", "fifo"])
def test_checks_recall_and_forgetting_are_the_harness_s(policy: str) -> None:
    """Prevents `fbench check` reporting a recall or a forget count of its own making:
    on each stream they equal the harness's recall_current_at_k and removals for the
    same job."""
    from runner.adapters.contract import SEED

    report = check_memory(policy, streams=FAST_STREAMS, compare=False)
    for s in report.streams:
        result = run_job(make_spec(s.workload, policy, SEED, s.horizon))
        assert s.recall == pytest.approx(result.metrics()["recall_current_at_k"],
                                         rel=0, abs=1e-12)
        assert s.forgotten == dict(sorted(result.forgotten.items()))
        assert s.questions == result.metrics()["n_queries"]
