"""The adapter contract: the rules every memory under test must keep, checked on small
seeded streams of both workload families. ``fbench check NAME`` runs it on any memory
(a plugin author's first command); ``tests/test_adapter_contract.py`` runs it on
fbench's own.

Each rule is checked at every event and reported once, with the first violation and
what to fix. A memory that breaks none passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from runner.adapters.base import MemoryAdapter
from runner.spec.params import Scalar
from runner.spec.resolve import make_spec, materialize
from workloads import Observe, Query, Tick

# One small stream per workload family (turns, days), short enough for slow incumbents.
STREAMS = (("contradiction", 240), ("lifecycle", 12))


@dataclass(frozen=True)
class Rule:
    name: str
    says: str   # the rule, as the report states it
    fix: str    # what to change when it is broken


RULES = (
    Rule("builds", "the memory builds from its parameters",
         "make the class (or factory) take its Params instance and return a MemoryAdapter"),
    Rule("given_ids", "query returns only observation ids it was given",
         "return Hit(obs_id, score) with the obs_id passed to observe(), never your own ids"),
    Rule("at_most_k", "query returns at most k distinct observations",
         "cut the hits to k and drop duplicates"),
    Rule("holds_hits", "query never returns an observation it no longer holds",
         "drop deleted items from retrieval, or keep holds() true until they are gone"),
    Rule("size_bounded", "size() is between 0 and the number of observations so far",
         "count live entries only, one per stored observation"),
    Rule("holds_is_size", "holds() is true for exactly size() observations",
         "make holds(obs_id) false once the item is deleted, and size() count what holds"),
    Rule("tokens", "tokens() is never negative, and 0 exactly when nothing is held",
         "count the whitespace tokens of the live entries"),
    Rule("forgotten", "forgotten() maps reasons to positive counts",
         "return {reason: count} with counts > 0 (an empty dict for none)"),
    Rule("deterministic", "the same stream gives the same hits twice",
         "seed any randomness from the job, and do not depend on wall-clock time"),
)


@dataclass
class Verdict:
    rule: Rule
    failure: str = ""  # the first violation ("" when the rule held)
    checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.failure


@dataclass
class _Checker:
    verdicts: dict[str, Verdict] = field(
        default_factory=lambda: {r.name: Verdict(r) for r in RULES})

    def expect(self, rule: str, ok: bool, where: str, what: str) -> None:
        v = self.verdicts[rule]
        v.checked += 1
        if not ok and not v.failure:
            v.failure = f"{where}: {what}"


def _drive(memory: MemoryAdapter, chk: _Checker, workload: str, spec_args: tuple,
           k: int) -> list[list[int]]:
    """Feed one stream, checking the per-event rules; the hits of every query."""
    r, seed, horizon = spec_args
    n_obs, answers = 0, []
    for ev in r.workload.events(seed, horizon, r.workload_params):
        where = f"{workload} t={ev.t}"
        if isinstance(ev, Observe):
            memory.observe(n_obs, ev.t, ev.text, ev.meta)
            n_obs += 1
            size = memory.size()
            chk.expect("size_bounded", 0 <= size <= n_obs, where,
                       f"size() is {size} after {n_obs} observations")
        elif isinstance(ev, Query):
            ids = [h.obs_id for h in memory.query(ev.t, ev.text, k)]
            answers.append(ids)
            chk.expect("given_ids", all(isinstance(i, int) and 0 <= i < n_obs for i in ids),
                       where, f"returned ids {ids}; it was given 0..{n_obs - 1}")
            chk.expect("at_most_k", len(ids) <= k and len(set(ids)) == len(ids), where,
                       f"returned {ids} for k={k}")
            gone = [i for i in ids if isinstance(i, int) and not memory.holds(i)]
            chk.expect("holds_hits", not gone, where, f"returned {gone}, which it does not hold")
        elif isinstance(ev, Tick):
            memory.tick(ev.t)
        if isinstance(ev, Query | Tick):
            held = sum(memory.holds(i) for i in range(n_obs))
            chk.expect("holds_is_size", held == memory.size(), where,
                       f"holds() is true for {held} observations, size() says {memory.size()}")
            tokens = memory.tokens()
            chk.expect("tokens", tokens >= 0 and (held == 0) == (tokens == 0), where,
                       f"tokens() is {tokens} with {held} observations held")
            forgotten = memory.forgotten()
            chk.expect("forgotten", all(isinstance(v, int) and v > 0
                                        for v in forgotten.values()), where,
                       f"forgotten() is {forgotten}")
    return answers


def check_memory(name: str, params: Iterable[tuple[str, Scalar]] = (), k: int = 5,
                 streams: tuple[tuple[str, int], ...] = STREAMS) -> list[Verdict]:
    """Every rule's verdict for memory ``name`` with ``params`` (``policy.KEY``...)."""
    chk = _Checker()
    params = tuple(params)
    for workload, horizon in streams:
        spec = make_spec(workload, name, 3, horizon=horizon, k=k, params=params)
        r = materialize(spec)
        runs = []
        for _ in range(2):
            try:
                memory = r.memory.build(r.policy_params, r.store_params,
                                        r.workload.vocabulary())
            except Exception as exc:  # the rule is that it builds: report why not
                chk.expect("builds", False, workload, f"{type(exc).__name__}: {exc}")
                return list(chk.verdicts.values())
            chk.expect("builds", True, workload, "")
            runs.append(_drive(memory, chk, workload, (r, spec.seed, spec.horizon), k))
        first = next((i for i, (a, b) in enumerate(zip(*runs, strict=True)) if a != b), None)
        chk.expect("deterministic", first is None, workload,
                   "two runs of the same stream returned different hits"
                   + ("" if first is None else
                      f" (query {first}: {runs[0][first]} then {runs[1][first]})"))
    return list(chk.verdicts.values())
