"""Statistics over seeds: IQM, std, t intervals, paired deltas, MDD."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from runner.analysis import stats

NAN = float("nan")


def test_iqm_of_one_to_eight_is_the_mean_of_three_to_six() -> None:
    """Prevents an IQM that trims the wrong amount (or not at all) when n is divisible by 4."""
    assert stats.iqm(np.arange(1.0, 9.0)) == 4.5
    assert stats.iqm(np.array([8.0, 1, 7, 2, 6, 3, 5, 4])) == 4.5  # order does not matter


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.0, 2, 3, 4, 100], 3.0),         # n=5: floor(1.25)=1 trimmed each end -> mean(2,3,4)
        ([1.0, 2, 3, 4, 5, 6, 70], 4.0),    # n=7: floor(1.75)=1 -> mean(2..6)
        ([1.0, 2, 3, 4, 5, 60], 3.5),       # n=6: floor(1.5)=1 -> mean(2..5)
        ([1.0, 2, 30], 11.0),               # n=3: floor(0.75)=0 -> plain mean
        ([5.0], 5.0),                       # n=1
    ],
)
def test_iqm_follows_scipy_trim_mean_for_any_n(values: list[float], expected: float) -> None:
    """Prevents an IQM that drifts from rliable's scipy.stats.trim_mean(x, 0.25) when n is not
    a multiple of 4 (it trims floor(n/4) values at each end)."""
    assert stats.iqm(np.array(values)) == expected


def test_mean_std_iqm_of_nothing_and_of_one_value() -> None:
    """Prevents crashes or zeros where a statistic is undefined: empty -> nan; one seed: no std."""
    empty = np.array([])
    assert math.isnan(stats.mean(empty)) and math.isnan(stats.iqm(empty))
    assert math.isnan(stats.std(np.array([3.0])))
    assert stats.std(np.array([1.0, 2, 3, 4])) == pytest.approx(math.sqrt(5 / 3), rel=1e-15)


def test_t_ci_is_scipys_t_interval() -> None:
    """Prevents an interval other than the documented one: mean ± t(n−1, 0.975) · sd / √n, as
    scipy.stats.t.interval gives it."""
    from scipy import stats as sps

    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.normal(size=int(rng.integers(2, 12)))
        lo, hi = stats.t_ci(x)
        ref = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
        assert (lo, hi) == pytest.approx(ref, rel=1e-12)
    assert stats.key_seed("contradiction") == 7846848720455298117


def test_t_ci_of_constant_data_has_zero_width() -> None:
    """Prevents a spurious interval (or one missing the value) when every seed agrees."""
    assert stats.t_ci(np.full(5, 0.25)) == (0.25, 0.25)


def test_t_ci_below_two_seeds_is_nan() -> None:
    """Prevents a zero-width interval from one seed being read as certainty: n=1 (and n=0) give
    (nan, nan)."""
    for x in (np.array([0.3]), np.array([])):
        lo, hi = stats.t_ci(x)
        assert math.isnan(lo) and math.isnan(hi)


def test_summarize_drops_nan_seeds_from_n() -> None:
    """Prevents a nan (e.g. a category with no queries) from poisoning the mean or counting in n."""
    s = stats.summarize([0.2, NAN, 0.4])
    assert s.n == 2
    assert s.mean == pytest.approx(0.3, rel=1e-15)


def test_paired_lower_is_better_counts_wins_and_half_ties() -> None:
    """Prevents a 'share better' that ignores the metric's direction: for a lower-is-better
    metric a negative delta is a win; a tie counts half."""
    d = stats.paired([1.0, 2.0, 3.0], [2.0, 2.0, 4.0], "lower", "k")
    assert (d.n, d.better, d.ties, d.worse) == (3, 2, 1, 0)
    assert d.mean == pytest.approx(-2 / 3, rel=1e-15)
    assert d.share_better == pytest.approx(2.5 / 3, rel=1e-15)
    assert d.ci_low <= d.mean <= d.ci_high


def test_paired_higher_is_better_reverses_the_sign() -> None:
    """Prevents the same deltas counting as wins for a higher-is-better metric."""
    d = stats.paired([1.0, 2.0, 3.0], [2.0, 2.0, 4.0], "higher", "k")
    assert (d.better, d.ties, d.worse) == (0, 1, 2)
    assert d.share_better == pytest.approx(0.5 / 3, rel=1e-15)


def test_paired_without_direction_has_no_share_and_nan_pairs_are_dropped() -> None:
    """Prevents a 'better' verdict on a descriptive metric, and a nan on either side of a pair
    from entering the delta."""
    d = stats.paired([1.0, NAN, 3.0, 5.0], [0.0, 1.0, NAN, 4.0], "none", "k")
    assert d.n == 2 and d.mean == 1.0
    assert (d.better, d.ties, d.worse) == (0, 0, 0)
    assert math.isnan(d.share_better)


def test_paired_rejects_misaligned_arrays() -> None:
    """Prevents silently pairing arrays of different seeds."""
    with pytest.raises(ValueError, match="shape"):
        stats.paired([1.0, 2.0], [1.0], "lower", "k")


def test_mdd_formula() -> None:
    """Prevents a wrong minimal detectable difference: mdd_factor(n) · sd / √n, the t-test's."""
    assert stats.mdd(2.0, 4) == pytest.approx(stats.mdd_factor(4) * 2.0 / 2.0, rel=1e-12)
    assert math.isnan(stats.mdd(1.0, 1))
    d = stats.paired([1.0, 2.0, 4.0], [0.0, 0.0, 0.0], "higher", "k")
    assert d.mdd == pytest.approx(stats.mdd_factor(3) * np.std([1, 2, 4], ddof=1) / math.sqrt(3))


def _same(a: object, b: object) -> bool:
    """Dataclass equality where nan equals nan."""
    ta, tb = dataclasses.astuple(a), dataclasses.astuple(b)  # type: ignore[call-overload]
    return all(u == v or (isinstance(u, float) and math.isnan(u) and math.isnan(v))
               for u, v in zip(ta, tb, strict=True))


def test_batched_columns_equal_one_column_at_a_time() -> None:
    """Prevents the batched path the aggregator uses from drifting from the one-metric functions
    (a column's interval must not depend on the other metrics of its cell, on how the betting
    intervals are stacked, nor on n >= 8 sums): bit-identical, unbounded and rates alike."""
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(11, 6))
    x[:, 0] = rng.normal(size=11)  # a size: no bounds
    x[:, 2] = 0.1  # constant
    x[4, 3] = NAN  # a seed without a value for one metric
    x[:, 4] = 0.0  # all zero: a one-sided interval
    b = rng.uniform(size=(11, 6))
    b[:, 0] = rng.normal(size=11)
    bounds: list[stats.Bounds] = [None, (0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0),
                                  (0.0, 5.0)]
    directions = ["lower", "higher", "none", "lower", "lower", "higher"]
    sums = stats.summarize_columns(x, bounds)
    deltas = stats.paired_columns(x, b, directions, "cell vs base", bounds)
    for j, direction in enumerate(directions):
        assert _same(sums[j], stats.summarize(x[:, j], bounds[j]))
        assert _same(deltas[j], stats.paired(x[:, j], b[:, j], direction,
                                             f"cell vs base\x1f{j}", bounds[j]))
    assert sums[2].mean == 0.1 and sums[2].ci_low < 0.1 < sums[2].ci_high  # not zero width
    assert sums[3].n == 10
    assert sums[4].ci_low == 0.0 < sums[4].ci_high


def test_sign_flip_p_does_not_depend_on_how_many_signs_are_drawn_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents bounding the memory of the random sign vectors (drawn a few rows at a time
    for thousands of seeds) from changing a p-value: the draws come in the same order."""
    d = np.random.default_rng(3).normal(0.02, 1.0, 900)
    whole = stats.sign_flip_p(d, "draws")
    monkeypatch.setattr(stats, "SIGNS_PER_DRAW", 900 * 7)
    assert stats.sign_flip_p(d, "draws") == whole


def _grid_interval(x: np.ndarray, cap: float = stats.BET_CAP, points: int = 20_001
                   ) -> tuple[float, float]:
    """The betting interval from its definition, on a grid of candidate means: those no
    gambler's wealth (hedged, each with half the stake of alpha) brings to 2 / alpha."""
    alpha = 1 - stats.LEVEL
    n = len(x)
    t = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    bet = np.sqrt(2 * np.log(2 / alpha) / (n * np.concatenate([[0.25], var[:-1]])))
    kept = []
    for m in np.linspace(0, 1, points):
        up = np.cumprod(1 + np.minimum(bet, cap / m if m else np.inf) * (x - m))
        down = np.cumprod(1 - np.minimum(bet, cap / (1 - m) if m < 1 else np.inf) * (x - m))
        if max(up.max(), down.max()) < 2 / alpha:
            kept.append(m)
    return min(kept), max(kept)


@pytest.mark.parametrize("seed", range(6))
def test_betting_interval_is_its_definition(seed: int) -> None:
    """Prevents the bisection from finding another set than the betting test accepts
    (a wealth not monotone in m, an end on the accepted side): its ends hold every
    candidate mean a grid accepts, within one grid step."""
    g = np.random.default_rng(seed)
    x = [g.beta(0.5, 4.0, 5), g.beta(2, 2, 12), g.binomial(1, 0.1, 20) * g.beta(2, 20, 20),
         np.full(8, 0.3), g.beta(5, 1, 30), np.zeros(6)][seed]
    lo, hi = stats.interval(x, (0.0, 1.0))
    grid_lo, grid_hi = _grid_interval(x)
    assert lo <= grid_lo <= lo + 1e-4 and hi - 1e-4 <= grid_hi <= hi


def test_betting_interval_golden_values() -> None:
    """Prevents a silent change of the published intervals (the cap, the prior, the
    threshold or the rescaling): exact ends on fixed data, a rate and its delta."""
    x = np.array([0.1, 0.3, 0.2, 0.25, 0.15, 0.4, 0.05, 0.3, 0.2, 0.1])
    assert stats.interval(x, (0.0, 1.0)) == pytest.approx(
        (0.059424743907649846, 0.4728227436192758), abs=1e-12)
    assert stats.interval(2 * x - 1, (-1.0, 1.0)) == pytest.approx(
        (-0.8811505121847003, -0.054354512761448426), abs=1e-12)


@pytest.mark.parametrize("n", [2, 5, 10, 20, 50])
def test_all_zero_seeds_give_a_one_sided_interval_no_valid_one_beats(n: int) -> None:
    """Prevents the zero-width interval of every-seed-0 data: the betting interval starts
    at the bound and reaches past 1 - 0.05^(1/n), below which no interval can stop (a
    Bernoulli with that mean gives n zeros with probability 0.05); at a bound it never
    leaves [0, 1]."""
    lo, hi = stats.interval(np.zeros(n), (0.0, 1.0))
    assert lo == 0.0 and 1 - 0.05 ** (1 / n) <= hi <= 1
    lo, hi = stats.interval(np.ones(n), (0.0, 1.0))
    assert hi == 1.0 and 0 <= lo <= 0.05 ** (1 / n)


def test_intervals_never_leave_the_bounds() -> None:
    """Prevents "[−0.000, 0.001]": a rate's interval, and its delta's, stay in their
    bounds on data piled at either end; an unbounded metric keeps the t interval."""
    g = np.random.default_rng(1)
    for _ in range(50):
        x = g.binomial(1, g.uniform(0, 0.3), 7) * g.uniform(0, 1, 7)
        lo, hi = stats.interval(x, (0.0, 1.0))
        assert 0.0 <= lo <= stats.mean(x) <= hi <= 1.0
        d = stats.paired(x, 1 - x, "lower", bounds=(0.0, 1.0))
        assert -1.0 <= d.ci_low <= d.mean <= d.ci_high <= 1.0
    x = np.array([3.0, 5.0, 4.0])
    assert stats.interval(x, (0.0, math.inf)) == stats.t_ci(x)
    with pytest.raises(ValueError, match="outside the bounds"):
        stats.interval(np.array([0.5, 1.5]), (0.0, 1.0))


def test_bounded_comparison_gets_the_exact_one_sided_p() -> None:
    """Prevents a comparison against a baseline at the metric's best bound going
    untested: its p is the one-sided sign-flip p toward worse, 2^(-k) for k seeds off the
    bound, as scipy's permutation test gives it."""
    from scipy import stats as sps

    policy = np.array([0.0, 0.02, 0.0, 0.01, 0.03, 0.0, 0.01])
    d = stats.paired(policy, np.zeros(7), "lower", "k", (0.0, 1.0))
    assert d.bounded and d.p == 2.0 ** -4
    ref = sps.permutation_test((policy,), lambda x, axis=-1: np.mean(x, axis=axis),
                               permutation_type="samples", n_resamples=np.inf,
                               vectorized=True, alternative="greater")
    assert d.p == pytest.approx(ref.pvalue, rel=1e-12)
    up = stats.paired(1 - policy, np.ones(7), "higher", "k", (0.0, 1.0))
    assert up.bounded and up.p == d.p
    free = stats.paired(policy, np.full(7, 0.01), "lower", "k", (0.0, 1.0))
    assert not free.bounded and free.p == stats.sign_flip_p(policy - 0.01, "k")


def test_too_few_flags_wide_and_approximate_intervals() -> None:
    """Prevents the per-cell "n too small" mark from missing a rate's uninformative
    interval or a t interval of few seeds, or marking a cell without an interval."""
    assert stats.too_few(5, 0.0, 0.55, (0.0, 1.0))
    assert not stats.too_few(20, 0.2, 0.4, (0.0, 1.0))
    assert stats.too_few(20, -0.6, 0.45, (-1.0, 1.0))
    assert stats.too_few(10, 90.0, 110.0, (0.0, math.inf))
    assert not stats.too_few(stats.SMALL_N, 90.0, 110.0, None)
    assert not stats.too_few(1, NAN, NAN, (0.0, 1.0))


COMMITTED_SUMMARIES = sorted([
    *(Path(__file__).parent / "golden" / "reports").glob("*/summary.parquet"),
    *(Path(__file__).parent.parent / "published").glob("*/summary.parquet")])


@pytest.mark.parametrize("path", COMMITTED_SUMMARIES,
                         ids=[f"{p.parent.parent.name}/{p.parent.name}"
                              for p in COMMITTED_SUMMARIES])
def test_no_committed_interval_leaves_its_metrics_bounds(path: Path) -> None:
    """Prevents a committed summary printing a rate's interval below 0 or above 1 (the t
    interval's "[−0.000, 0.001]"), or a rate's Δ outside [−1, 1]: every cell's and every
    delta's interval lies within its metric's bounds."""
    from runner.metrics import METRICS

    table = pq.read_table(path).to_pylist()
    checked = 0
    for row in table:
        bounds = METRICS[row["metric"]].bounds
        if not stats.finite(bounds):
            continue
        lo, hi = bounds
        for a, b, (low, high) in ((row["ci_low"], row["ci_high"], (lo, hi)),
                                  (row["delta_ci_low"], row["delta_ci_high"], (lo - hi, hi - lo))):
            if a is None or math.isnan(a):
                continue
            assert low <= a <= b <= high, (row["workload"], row["policy"], row["metric"])
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("n", [5, 10, 20, 50])
def test_no_valid_interval_decides_a_delta_below_decidable_delta(n: int) -> None:
    """Prevents the report's limit on what n seeds can decide from being wrong: just below
    ``decidable_delta(n)``, a distribution within [-1, 1] with mean exactly 0 gives n
    seeds all at d with probability above α (so an interval excluding 0 on them would
    miss it too often); just above, every such distribution's chance is at most α."""
    alpha = 1 - stats.LEVEL
    for sides in (1, 2):
        floor = stats.decidable_delta(n, sides=sides)
        for d, exceeds in ((floor * 0.999, True), (floor * 1.001, False)):
            p_low = d / (1 + d)  # mass at -1 that makes the mean 0
            assert (1 - p_low) * d - p_low == pytest.approx(0.0, abs=1e-12)
            assert ((1 - p_low) ** n > alpha / sides) is exceeds


@pytest.mark.parametrize("n", [10, 20, 50])
def test_betting_interval_decides_constant_deltas_near_its_floor(n: int) -> None:
    """Prevents an invalid or a needlessly weak betting interval: on n seeds all at one Δ
    it keeps 0 below the floor of any interval that splits α between its ends (doing
    otherwise would break its coverage), and excludes 0 by 1.2 times that floor (bets
    too timid would need many more seeds)."""
    floor = stats.decidable_delta(n, sides=2)
    deltas = np.array([floor * 0.99, floor * 1.2])
    lo, hi = stats.betting_ci(np.repeat(deltas[:, None], n, axis=1), (-1.0, 1.0))
    assert lo[0] <= 0 <= hi[0]
    assert lo[1] > 0
