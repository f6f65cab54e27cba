"""The seed re-implemented in plain Python (``benchmarks/seed_reference.py``), the
baseline ``benchmarks/bench_seed.py`` times fbench against: it must be the seed's job,
not an easier one, so it must give the seed's published seed-0 table."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks import seed_reference as ref
from benchmarks.bench_seed import METRICS, POLICIES
from tests.test_reference_numbers import SEED_TABLE


def test_the_stream_has_the_seeds_counts() -> None:
    """Prevents a baseline on another stream: seed 0 has the seed's 367 queries, 308
    canonical and 221 hard updates and 2,044 distractors (docs/reference.md,
    "Forgetting-Bench: seed-0 stream counts"), and fbench's own stream is the same text
    turn for turn."""
    from runner.spec.resolve import make_spec, materialize
    from workloads.events import Observe, Query

    events = ref.stream(0)
    kinds = Counter("query" if e.query else "distractor" if e.slot is None
                    else "seed" if e.turn < 60 else "hard" if "'s " not in e.text
                    else "canonical" for e in events)
    assert kinds == {"query": 367, "canonical": 308, "hard": 221, "distractor": 2044,
                     "seed": 60}
    r = materialize(make_spec("contradiction", "keep_all", 0))
    ours = [(ev.t, ev.text) for ev in r.workload.events(0, 3000, r.workload_params)
            if isinstance(ev, Observe | Query)]
    assert ours == [(e.turn, e.text) for e in events]


@pytest.mark.slow
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_the_reimplementation_gives_the_seed_table(policy: str) -> None:
    """Prevents a baseline that is not the seed's: every cell of the seed's seed-0 table
    to three decimals, for each analytic policy (about 1 s a job)."""
    got = ref.run(0, POLICIES[policy])
    for theirs, ours in METRICS.items():
        assert round(got[theirs], 3) == SEED_TABLE[policy][ours], theirs
