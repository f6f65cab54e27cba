"""The contract every registered forgetting policy must pass (one suite, all policies)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memcore import POLICIES, HashingEmbedder, Lexicon, MemoryStore, Policy
from memcore.extract.teacher import KeywordTeacher
from runner.job.run import run_job
from runner.spec.resolve import make_spec
from workloads import WORKLOADS, Observe, Query

W = WORKLOADS["contradiction"]
LEXICON = Lexicon(*dataclasses.astuple(W.vocabulary()))


def make_store(name: str) -> MemoryStore:
    return MemoryStore(POLICIES[name](), HashingEmbedder(), KeywordTeacher(LEXICON))


def feed(store: MemoryStore, horizon: int = 1200, seed: int = 5) -> list[list[int]]:
    """Feed a stream; return the retrieved observation ids of every query."""
    out = []
    for i, ev in enumerate(W.events(seed, horizon, W.Params())):
        if isinstance(ev, Observe):
            store.add(ev.text, ev.t, obs_id=i)
        elif isinstance(ev, Query):
            out.append([h.obs_id for h in store.retrieve(ev.text, ev.t, 5)])
    return out


@pytest.fixture(params=sorted(POLICIES))
def policy_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class TestPolicyContract:
    def test_registration_is_complete(self, policy_name: str) -> None:
        """Prevents a policy that cannot be listed or built with its defaults."""
        cls = POLICIES[policy_name]
        assert issubclass(cls, Policy)
        assert cls.name == policy_name
        assert cls.description
        params = cls.Params()
        assert dataclasses.is_dataclass(params)
        assert type(params).__dataclass_params__.frozen  # type: ignore[attr-defined]

    def test_every_removal_is_logged(self, policy_name: str) -> None:
        """Prevents silent forgetting: live + logged removals == everything ever added."""
        store = make_store(policy_name)
        feed(store)
        added = store._next_eid
        assert store.size + len(store.forget_log) == added
        assert store.size == int(store.cols.live[: store.cols.n].sum())
        logged = {r.eid for r in store.forget_log.records()}
        assert len(logged) == len(store.forget_log)
        assert not logged & set(store.cols.eid[: store.cols.n][store.cols.live[: store.cols.n]])

    def test_retrieval_returns_live_entries_best_first(self, policy_name: str) -> None:
        """Prevents retrieving deleted entries, more than k, or an unsorted list."""
        store = make_store(policy_name)
        feed(store, horizon=800)
        hits = store.retrieve("What is Alice's home city?", 800, 5)
        assert 0 < len(hits) <= 5
        assert all(store.holds(h.obs_id) for h in hits)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)

    def test_strength_is_a_bounded_vector(self, policy_name: str) -> None:
        """Prevents a strength of the wrong shape or outside [0, 1] (it multiplies scores)."""
        store = make_store(policy_name)
        feed(store, horizon=600)
        s = store.policy.strength(store.cols, 600)
        if s is not None:
            assert s.shape == (store.cols.n,)
            assert np.all((s >= 0) & (s <= 1))

    def test_capacity_is_respected(self, policy_name: str) -> None:
        """Prevents a capacity-bounded policy from exceeding what it declares."""
        store = make_store(policy_name)
        feed(store)
        cap = store.policy.capacity
        if cap is not None:
            assert store.peak_size <= cap

    def test_deterministic(self, policy_name: str) -> None:
        """Prevents hidden state or randomness: the same stream gives the same retrievals
        and the same forget log."""
        a, b = make_store(policy_name), make_store(policy_name)
        assert feed(a) == feed(b)
        assert a.forget_log.records() == b.forget_log.records()

    def test_harness_metrics_are_well_formed(self, policy_name: str) -> None:
        """Prevents metrics outside their range or a size accounting that does not add up."""
        m = run_job(make_spec("contradiction", policy_name, 1, horizon=600)).metrics()
        for name in ("contradiction_rate", "recall_at_k", "accuracy_at_1", "precision",
                     "stale_fraction", "false_forget_rate"):
            assert 0.0 <= m[name] <= 1.0, name
        n_obs = 600 - m["n_queries"]
        assert m["final_size"] + m["n_forgotten"] == n_obs
        assert m["final_size"] <= m["peak_size"] <= n_obs
