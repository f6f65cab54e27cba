"""The learned-forget network's memoized answers (memcore.learned.forget_table)."""

from __future__ import annotations

import numpy as np
import torch

from memcore.learned.forget_net import forget_features
from memcore.learned.forget_table import AGE_CAP, LOG_RETENTION, STRENGTH, ForgetTable
from memcore.policies.learned_forget import shipped_forget_net


def _inputs(seed: int, n: int, max_age: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    age = rng.integers(0, max_age, n)
    importance = rng.choice([0.3, 0.42, 0.55, 0.62, 0.8, 1.0], n)
    return age, importance, rng.random(n) < 0.3, rng.random(n) < 0.5


def _direct(output: int, age: np.ndarray, imp: np.ndarray, sup: np.ndarray,
            slotted: np.ndarray) -> np.ndarray:
    x = forget_features(age, imp, sup, slotted)
    with torch.inference_mode():
        out = shipped_forget_net()(torch.from_numpy(x))[:, output]
        return (out.sigmoid() if output == STRENGTH else out).numpy()


def test_table_matches_the_network() -> None:
    """Prevents the table from answering something other than the network: a wrong
    combination index (importance, superseded, slotted) or age offset."""
    table = ForgetTable(shipped_forget_net())
    args = _inputs(0, 4000, 3000)
    for output in (STRENGTH, LOG_RETENTION):
        got = table.lookup(output, *args)
        np.testing.assert_allclose(got, _direct(output, *args), rtol=1e-5, atol=1e-5)


def test_table_values_do_not_depend_on_build_history() -> None:
    """Prevents a job's results from depending on which jobs ran earlier in the process:
    the shared table grows with new importances and ages, and every value must be the
    same bits whatever was built before."""
    args = _inputs(1, 3000, 2500)
    fresh = ForgetTable(shipped_forget_net())
    grown = ForgetTable(shipped_forget_net())
    grown.lookup(LOG_RETENTION, *_inputs(2, 50, 10))  # narrow first, other importances
    grown.lookup(LOG_RETENTION, np.array([5]), np.array([0.77]), np.array([True]),
                 np.array([False]))
    for output in (STRENGTH, LOG_RETENTION):
        assert np.array_equal(grown.lookup(output, *args), fresh.lookup(output, *args))


def test_ages_past_the_cap_use_the_network_directly() -> None:
    """Prevents an unbounded table: ages at or past AGE_CAP are answered by a forward
    pass, without growing the table past the cap."""
    table = ForgetTable(shipped_forget_net())
    age = np.array([1, AGE_CAP + 7])
    args = (age, np.array([0.5, 0.5]), np.array([False, False]), np.array([True, True]))
    got = table.lookup(LOG_RETENTION, *args)
    np.testing.assert_allclose(got, _direct(LOG_RETENTION, *args), rtol=1e-5, atol=1e-5)
    assert table.width < AGE_CAP


def test_empty_input() -> None:
    """Prevents a crash on a store with no live entries (max over an empty array)."""
    table = ForgetTable(shipped_forget_net())
    empty = np.zeros(0, dtype=np.int64)
    assert table.lookup(STRENGTH, empty, np.zeros(0), empty.astype(bool),
                        empty.astype(bool)).shape == (0,)


def test_the_table_is_computed_on_one_torch_thread(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Prevents a learned_forget job from stalling for seconds on a busy machine (and
    its values from depending on the caller's thread count): the table's sigmoid over
    every combination and age is far above torch's grain size, so with more threads it
    entered an OpenMP region that waited on a core another process held. Both the build
    and the direct pass must run on one thread, and the caller's count come back."""
    net = shipped_forget_net()
    seen: list[int] = []
    predict = net.predict

    def spy(x: torch.Tensor, k: int) -> torch.Tensor:
        seen.append(torch.get_num_threads())
        return predict(x, k)

    monkeypatch.setattr(net, "predict", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        table = ForgetTable(net)
        table.lookup(STRENGTH, *_inputs(3, 100, 50))  # the build
        table.lookup(LOG_RETENTION, np.array([AGE_CAP + 1]), np.array([0.5]),
                     np.array([False]), np.array([True]))  # the direct pass
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert len(seen) == 3 and set(seen) == {1}


def test_every_importance_there_is_is_listed() -> None:
    """Prevents ``IMPORTANCES`` (what learned_forget prepares its table and its quiet
    turns for) from missing an importance the scorer can give: every count of salient
    tokens among every length up to 40 tokens gives one of them."""
    from memcore.importance import IMPORTANCES, heuristic_importance

    for n in range(41):
        for salient in range(n + 1):
            tokens = ["prefers"] * salient + ["word"] * (n - salient)
            assert heuristic_importance(tokens) in IMPORTANCES, (salient, n)


def test_an_entrys_combination_and_strength_index_are_the_gathers() -> None:
    """Prevents ``combination`` (one entry's number, from its importance as the columns
    hold it), ``strengths`` (by age, then combination) or ``retentions`` (a combination's
    log-retentions and their exp, kept per build) from reading another value than
    ``gather``: every importance there is, flags and ages give the same strength,
    log-retention and score; a wider table's rows are read again; an importance the
    table lacks gives -1."""
    from memcore.importance import IMPORTANCES

    table = ForgetTable(shipped_forget_net())
    assert table.covers(np.array(IMPORTANCES[:-3], dtype=np.float32))
    assert table.combination(IMPORTANCES[-1], False, True) == -1
    table.lookup(STRENGTH, np.array([500]), np.array([0.3]), np.array([False]),
                 np.array([False]))  # (ages to 500)
    strengths, ages = table.strengths(), np.array([0, 7, 499])
    for imp in IMPORTANCES[:-3]:
        for sup in (False, True):
            for slotted in (False, True):
                combo = table.combination(imp, sup, slotted)
                args = (ages, np.full(3, imp), np.full(3, sup), np.full(3, slotted))
                want = table.gather(STRENGTH, *args)
                got = strengths[ages * table.combinations + combo]
                assert got.dtype == np.float64 and np.array_equal(got, want)
                log_r, r = table.retentions(combo)
                want_log = table.gather(LOG_RETENTION, *args)
                assert [log_r[a] for a in ages.tolist()] == want_log.tolist()
                assert [r[a] for a in ages.tolist()] == (
                    np.exp(want_log.astype(np.float64)).tolist())
    combo = table.combination(IMPORTANCES[0], False, True)
    assert len(table.retentions(combo)[0]) == table.width
    table.lookup(STRENGTH, np.array([table.width]), np.array([IMPORTANCES[0]]),
                 np.array([False]), np.array([True]))  # a wider table: kept rows go
    assert len(table.retentions(combo)[0]) == len(table.retentions(combo)[1]) == table.width
