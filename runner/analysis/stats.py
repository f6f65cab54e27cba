"""Statistics over seeds: the unit of replication is one seed.

- ``mean``; ``std`` with ddof=1 (nan below two seeds); ``iqm``, the interquartile
  mean as rliable computes it (``scipy.stats.trim_mean(x, 0.25)``). The mean of
  constant data is that constant exactly.
- ``interval``: a cell's 95% interval of the mean. A metric with finite bounds (every
  rate lies in [0, 1]) gets ``betting_ci``, valid for any distribution within the
  bounds at any n; an unbounded one (sizes, tokens) gets ``t_ci``, which rests on the
  mean being near normal. One seed gives no interval (nan): a single run says nothing
  about the spread.
- ``betting_ci``: the hedged betting interval of Waudby-Smith & Ramdas (2023, "Estimating
  means of bounded random variables by betting", JRSS B, Thm 3 and Remark 3). Data
  rescaled to [0, 1], in seed order. For a candidate mean m two gamblers bet on the
  seeds, one that the mean is above m, one that it is below; the bet on seed t is
  ``λ_t = min(sqrt(2 log(2/α) / (n σ̂²_{t-1})), c / m)`` (``c / (1 - m)`` for the second),
  σ̂² the running variance from a prior of 1/4 (one pseudo-seed at 1/2). m is rejected
  once either gambler's wealth reaches 2/α at some seed (Ville's inequality). Each
  wealth is monotone in m, so each end is found by bisection on [0, 1], and the
  returned end is the bracket's rejected side: the interval holds the exact one.
  ``BET_CAP`` = c is chosen by ``benchmarks/bench_coverage.py``. The interval never
  leaves the bounds; seeds all at a bound give a one-sided interval from that bound.
- ``t_ci``: the Student-t interval of the mean, ``mean ± t_{n-1, 0.975} · sd / √n``
  (``scipy.stats.t``); constant data give a zero-width one. It undercovers on skewed,
  zero-heavy data at 5–10 seeds (``benchmarks/bench_coverage.py`` measures it on a
  sweep's own cells).
- ``sign_flip_p``: the p-value of a paired comparison by the sign-flip permutation
  test on the mean delta, two-sided or (``greater``) one-sided: every one of the 2^n
  sign assignments up to ``EXACT_MAX`` = 20 pairs (enumerated by halves, meet in the
  middle: each half's 2^(n/2) sums, one half sorted, instead of 2^n sums; the same
  value as ``scipy.stats.permutation_test``, which the tests check), ``MC_RESAMPLES``
  seeded random ones beyond (p = (1 + hits) / (1 + resamples)). At n = 5 its smallest
  two-sided p is 1/16 = 0.0625: no two-sided comparison of five seeds can reach 0.05.
- ``mdd``: the minimal detectable paired difference, the exact t-test one: the
  shift δ at which a two-sided paired t-test at α = 0.05 has power 0.8, from the
  noncentral t (``scipy.stats.nct``), in units of sd(Δ): ``mdd_factor(n) · sd / √n``.
- ``paired``: the per-seed delta ``policy - baseline`` (a pair with a nan on either
  side is dropped), its mean, its interval (``interval`` within the delta's bounds,
  ``[lo - hi, hi - lo]``: a rate's delta lies in [-1, 1]), sign-flip p, the share of
  seeds where the policy is better in the metric's direction (a tie counts half), and
  the MDD.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy import stats as sps

RESAMPLES = 2000  # the scaling fits' bootstrap (runner.analysis.scaling)
LEVEL = 0.95
ALPHA = 0.05
POWER = 0.8
EXACT_MAX = 20
MC_RESAMPLES = 20_000
SIGNS_PER_DRAW = 1 << 20  # random signs drawn at once: memory bounded whatever the seeds
SMALL_N = 20  # below this many seeds the report warns: intervals wide, tests weak
WIDE = 0.5  # a bounded metric's interval spanning this share of its range says little

BET_CAP = 0.9  # c: the largest share of a gambler's wealth staked on one seed
CI_METHOD = (f"{LEVEL:.0%} interval over seeds: for a bounded metric (a rate) the hedged "
             f"betting interval of Waudby-Smith & Ramdas (2023; c = {BET_CAP}), valid for "
             "any distribution within the bounds; otherwise Student-t "
             "(mean ± t(n−1) · sd / √n)")
TEST_METHOD = (f"two-sided sign-flip permutation test of the mean paired Δ (exact up to "
               f"{EXACT_MAX} seeds, {MC_RESAMPLES:,} seeded random sign vectors beyond)")
NAN = float("nan")
Bounds = tuple[float, float] | None


def as_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """A float64 array with the nans dropped (nan = no value for that seed)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    return x[~np.isnan(x)]


def mean(x: np.ndarray) -> float:
    if len(x) == 0:
        return NAN
    if np.all(x == x[0]):
        return float(x[0])  # exact (a float sum of n copies / n may be off by one ulp)
    return float(np.mean(x))


def std(x: np.ndarray) -> float:
    """Sample standard deviation (ddof=1); nan below two values."""
    return float(np.std(x, ddof=1)) if len(x) >= 2 else NAN


def iqm(x: np.ndarray) -> float:
    """Interquartile mean with ``scipy.stats.trim_mean(x, 0.25)`` semantics."""
    n = len(x)
    if n == 0:
        return NAN
    cut = int(0.25 * n)
    return mean(np.sort(x)[cut : n - cut])


def key_seed(*parts: object) -> int:
    """A 64-bit generator seed from a cell's identity (stable across runs and machines)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


@functools.cache
def t_quantile(n: int, level: float = LEVEL) -> float:
    """``t_{n-1, (1+level)/2}``: the t interval's multiplier of sd / √n."""
    return float(sps.t.ppf((1 + level) / 2, n - 1))


def t_ci(x: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The t interval of the mean of ``x`` (no nans); nan below two values."""
    n = len(x)
    if n < 2:
        return NAN, NAN
    m = mean(x)
    if np.all(x == x[0]):
        return m, m
    h = t_quantile(n, level) * std(x) / np.sqrt(n)
    return m - h, m + h


def finite(bounds: Bounds) -> bool:
    """Both bounds known and finite: the betting interval applies."""
    return bounds is not None and bool(np.isfinite(bounds[0]) and np.isfinite(bounds[1]))


def interval(x: np.ndarray, bounds: Bounds = None,
             level: float = LEVEL) -> tuple[float, float]:
    """The interval of the mean of ``x`` (no nans): ``betting_ci`` within finite
    ``bounds``, else ``t_ci``; nan below two values."""
    if len(x) < 2:
        return NAN, NAN
    if not finite(bounds):
        return t_ci(x, level)
    assert bounds is not None
    lo, hi = betting_ci(np.asarray(x, dtype=np.float64)[None, :], bounds, level)
    return float(lo[0]), float(hi[0])


def intervals(columns: Sequence[np.ndarray], bounds: Sequence[Bounds],
              level: float = LEVEL) -> list[tuple[float, float]]:
    """``interval`` of each of ``columns`` (no nans) within ``bounds[j]``. The betting
    intervals of columns of one length and bounds are the rows of one ``betting_ci``
    call, bit-identical to one call per column (each row's arithmetic is its own)."""
    out: list[tuple[float, float]] = [(NAN, NAN)] * len(columns)
    groups: dict[tuple[int, Bounds], list[int]] = {}
    for j, (x, b) in enumerate(zip(columns, bounds, strict=True)):
        if len(x) >= 2 and finite(b):
            groups.setdefault((len(x), b), []).append(j)
        else:
            out[j] = interval(x, b, level)
    for (_, b), js in groups.items():
        assert b is not None
        rows = np.stack([np.asarray(columns[j], dtype=np.float64) for j in js])
        lo, hi = betting_ci(rows, b, level)
        for i, j in enumerate(js):
            out[j] = float(lo[i]), float(hi[i])
    return out


def betting_ci(x: np.ndarray, bounds: tuple[float, float] = (0.0, 1.0),
               level: float = LEVEL, cap: float = BET_CAP, iterations: int = 52
               ) -> tuple[np.ndarray, np.ndarray]:
    """The hedged betting interval of each row's mean (``x``: rows x seeds, every value
    within ``bounds``, no nans): the arrays of lower and upper ends."""
    low, high = bounds
    y = (np.asarray(x, dtype=np.float64) - low) / (high - low)
    if y.size and (y.min() < 0 or y.max() > 1):
        raise ValueError(f"betting_ci: values outside the bounds {bounds}")
    threshold = 2.0 / (1.0 - level)
    bets = _plug_in_bets(y, 1.0 - level)
    lower = _boundary(y, bets, cap, threshold, above=True, iterations=iterations)
    upper = _boundary(y, bets, cap, threshold, above=False, iterations=iterations)
    lower, upper = np.minimum(lower, upper), np.maximum(lower, upper)
    return low + (high - low) * lower, low + (high - low) * upper


def _plug_in_bets(y: np.ndarray, alpha: float) -> np.ndarray:
    """``sqrt(2 log(2/α) / (n σ̂²_{t-1}))`` for each row and seed t: σ̂² the running
    variance about the running mean, each from one pseudo-seed (mean 1/2, variance 1/4)."""
    rows, n = y.shape
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(y, axis=1)) / (t + 1)
    var = (0.25 + np.cumsum((y - mu) ** 2, axis=1)) / (t + 1)
    before = np.concatenate([np.full((rows, 1), 0.25), var[:, :-1]], axis=1)
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (n * before))


def _rejects(y: np.ndarray, bets: np.ndarray, m: np.ndarray, cap: float, threshold: float,
             above: bool) -> np.ndarray:
    """Per row, whether the gambler betting that the mean is above m (``above``) or below
    it reaches ``threshold`` at some seed. Wealth is nonincreasing in m for the first,
    nondecreasing for the second."""
    gap = y - m[:, None]
    with np.errstate(divide="ignore"):
        limit = cap / (m if above else 1.0 - m)
    stake = np.minimum(bets, limit[:, None])
    wealth = np.cumprod(1.0 + stake * gap if above else 1.0 - stake * gap, axis=1)
    return np.asarray(np.max(wealth, axis=1) >= threshold)


def _boundary(y: np.ndarray, bets: np.ndarray, cap: float, threshold: float, above: bool,
              iterations: int) -> np.ndarray:
    """The end of each row's interval that one gambler sets, by bisection: the lower
    end for ``above`` (its rejected side), the upper end otherwise."""
    rows = len(y)
    inner = np.ones(rows) if above else np.zeros(rows)  # never rejected by this gambler
    outer = np.zeros(rows) if above else np.ones(rows)
    edge = _rejects(y, bets, outer, cap, threshold, above)
    for _ in range(iterations):
        mid = (inner + outer) / 2
        hit = _rejects(y, bets, mid, cap, threshold, above)
        outer = np.where(hit, mid, outer)
        inner = np.where(hit, inner, mid)
    return np.where(edge, outer, 0.0 if above else 1.0)


def decidable_delta(n: int, level: float = LEVEL, sides: int = 1) -> float:
    """The smallest Δ of a rate (within [-1, 1]) that an interval holding ``level`` for
    every distribution within the bounds can show to be nonzero from n seeds, even when
    every seed's Δ is that value d: ``(sides/α)^(1/n) - 1``. Below it the distribution
    with Δ = d at probability 1/(1 + d) and -1 otherwise has mean 0, yet gives n seeds
    all at d with probability above α (above α/2 for ``sides`` = 2, an interval such as
    the hedged betting one that splits α between its two ends), so an interval that
    excluded 0 on such seeds would miss that mean too often. Above 1: no n-seed Δ can."""
    return (sides / (1.0 - level)) ** (1.0 / n) - 1.0


def too_few(n: int | None, lo: float | None, hi: float | None, bounds: Bounds) -> bool:
    """Too few seeds for the interval to inform: within finite bounds, it spans ``WIDE``
    of their range or more; otherwise (a t interval) it rests on fewer than ``SMALL_N``
    seeds, below which the t interval's coverage on fbench's sizes falls short
    (``benchmarks/bench_coverage.py``). False when there is no interval."""
    if lo is None or hi is None or np.isnan(lo) or np.isnan(hi) or not n:
        return False
    if finite(bounds):
        assert bounds is not None
        return hi - lo >= WIDE * (bounds[1] - bounds[0])
    return n < SMALL_N


@functools.cache
def mdd_factor(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The noncentrality δ·√n/sd at which the two-sided paired t-test of n pairs has
    ``power``: MDD = mdd_factor(n) · sd(Δ) / √n. nan below two pairs."""
    if n < 2:
        return NAN
    df = n - 1
    crit = sps.t.ppf(1 - alpha / 2, df)

    def shortfall(ncp: float) -> float:
        lower = float(sps.nct.cdf(-crit, df, ncp))  # ~0 for a positive shift; nan-safe
        return float(sps.nct.sf(crit, df, ncp)) + (0.0 if np.isnan(lower) else lower) - power

    return float(optimize.brentq(shortfall, 0.0, 4.0 * crit + 10.0, xtol=1e-10))


def mdd(sd_delta: float, n: int) -> float:
    """Minimal detectable paired difference at α 0.05 (two-sided), power 0.8 (t-test)."""
    return float(mdd_factor(n) * sd_delta / np.sqrt(n)) if n >= 2 else NAN


def _half_sums(d: np.ndarray) -> np.ndarray:
    """Every signed sum ``Σ ±d_i`` of a few values (2^len of them)."""
    signs = 1 - 2 * ((np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1)
    return np.asarray(signs @ d, dtype=np.float64)


def sign_flip_p(delta: np.ndarray, key: str = "", alternative: str = "two-sided") -> float:
    """Sign-flip p-value of the mean of ``delta``: the share of sign vectors whose
    |Σ s_i d_i| reaches the observed |Σ d_i| (``two-sided``), or whose Σ s_i d_i reaches
    the observed Σ d_i (``greater``); a relative tolerance of 1e-9 absorbs float
    rounding. nan without pairs; 1 when every delta is 0."""
    d = np.asarray(delta, dtype=np.float64)
    n = len(d)
    if n == 0:
        return NAN
    two_sided = alternative == "two-sided"
    total = float(np.sum(d))
    obs = abs(total) if two_sided else total
    if total == 0.0:
        return 1.0
    tol = 1e-9 * max(abs(obs), float(np.sum(np.abs(d))))
    if n <= EXACT_MAX:
        a = _half_sums(d[: n // 2])
        b = np.sort(_half_sums(d[n // 2 :]))
        # count pairs with a + b >= obs - tol (and, two-sided, a + b <= -(obs - tol))
        hits = int(np.sum(len(b) - np.searchsorted(b, obs - tol - a, side="left")))
        if two_sided:
            hits += int(np.sum(np.searchsorted(b, -(obs - tol) - a, side="right")))
        return min(1.0, hits / 2.0**n)
    rng = np.random.default_rng(key_seed("sign-flip", key))
    hits = 0
    rows = max(1, min(5000, SIGNS_PER_DRAW // n))  # (the draws' order is the same at any size)
    for start in range(0, MC_RESAMPLES, rows):
        size = min(rows, MC_RESAMPLES - start)
        sums = (rng.integers(0, 2, size=(size, n)) * 2 - 1) @ d
        hits += int(np.sum((np.abs(sums) if two_sided else sums) >= obs - tol))
    return (1 + hits) / (1 + MC_RESAMPLES)


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float
    iqm: float
    ci_low: float
    ci_high: float


def summarize(values: Sequence[float] | np.ndarray, bounds: Bounds = None,
              ci: tuple[float, float] | None = None) -> Summary:
    """n, mean, std, IQM and interval of one cell's values (nans excluded), within the
    metric's ``bounds``; ``ci``: that interval, computed already."""
    x = as_array(values)
    lo, hi = interval(x, bounds) if ci is None else ci
    return Summary(len(x), mean(x), std(x), iqm(x), lo, hi)


def summarize_columns(x: np.ndarray, bounds: Sequence[Bounds] | None = None
                      ) -> list[Summary]:
    """``summarize`` of every column of an (n seeds x m metrics) array, column j within
    ``bounds[j]``."""
    x = np.asarray(x, dtype=np.float64)
    limits = list(bounds) if bounds is not None else [None] * x.shape[1]
    columns = [as_array(x[:, j]) for j in range(x.shape[1])]
    cis = intervals(columns, limits)
    return [summarize(c, limits[j], cis[j]) for j, c in enumerate(columns)]


@dataclass(frozen=True)
class Paired:
    n: int  # seeds with a value on both sides
    mean: float  # mean of policy - baseline
    ci_low: float
    ci_high: float
    p: float  # sign-flip permutation p: two-sided, or one-sided toward worse when bounded
    better: int  # seeds where the policy beats the baseline in the metric's direction
    ties: int
    worse: int
    share_better: float  # (better + ties / 2) / n; nan when the metric has no direction
    mdd: float
    identical: bool  # every pair bit-identical (delta exactly 0 on every seed)
    bounded: bool = False  # the baseline at the metric's best bound on every seed
    digest: str = ""  # of the per-seed deltas: equal digests, the same test


SIGN = {"lower": -1.0, "higher": 1.0, "none": 0.0}


def delta_bounds(bounds: Bounds) -> Bounds:
    """Where a difference of two values within ``bounds`` lies: [lo - hi, hi - lo]."""
    return None if bounds is None else (bounds[0] - bounds[1], bounds[1] - bounds[0])


def at_best_bound(baseline: np.ndarray, direction: str, bounds: Bounds) -> bool:
    """The baseline sits at the metric's best possible value on every seed: the policy
    cannot come out better (keep_all never forgets: its false-forget rate is 0)."""
    if bounds is None or direction == "none" or len(baseline) == 0:
        return False
    best = bounds[0] if direction == "lower" else bounds[1]
    return bool(np.all(baseline == best))


def paired_delta(delta: np.ndarray, direction: str, key: str = "", bounds: Bounds = None,
                 bounded: bool = False, ci: tuple[float, float] | None = None) -> Paired:
    """The comparison of per-seed deltas (no nans) in the metric's direction, the
    interval within the deltas' bounds (``delta_bounds`` of the metric's; ``ci``: that
    interval, computed already). ``bounded``: the baseline sits at the best bound, so
    the test is one-sided, toward worse."""
    n = len(delta)
    sign = SIGN[direction]
    better = int(np.sum(sign * delta > 0)) if sign else 0
    worse = int(np.sum(sign * delta < 0)) if sign else 0
    ties = int(np.sum(delta == 0)) if sign else 0
    share = (better + ties / 2) / n if sign and n else NAN
    lo, hi = interval(delta, delta_bounds(bounds)) if ci is None else ci
    p = sign_flip_p(-sign * delta, key, "greater") if bounded else sign_flip_p(delta, key)
    digest = hashlib.sha256(np.ascontiguousarray(delta, dtype=np.float64).tobytes())
    return Paired(n, mean(delta), lo, hi, p, better, ties, worse, share,
                  mdd(std(delta), n), bool(n and np.all(delta == 0)), bounded,
                  digest.hexdigest()[:16])


def paired(
    policy: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    direction: str,
    key: str = "",
    bounds: Bounds = None,
) -> Paired:
    """Compare two arrays aligned by seed; ``direction`` is "lower", "higher" or "none";
    ``bounds``: the metric's (its values' range)."""
    a = np.asarray(policy, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    ok = ~(np.isnan(a) | np.isnan(b))
    return paired_delta(a[ok] - b[ok], direction, key, bounds,
                        at_best_bound(b[~np.isnan(b)], direction, bounds))


def paired_columns(
    policy: np.ndarray, baseline: np.ndarray, directions: Sequence[str], key: str = "",
    bounds: Sequence[Bounds] | None = None,
) -> list[Paired]:
    """``paired`` of every column of two (n seeds x m metrics) arrays aligned by seed,
    column j within ``bounds[j]``."""
    a = np.asarray(policy, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.shape[1] != len(directions):
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    limits = list(bounds) if bounds is not None else [None] * a.shape[1]
    kept = [~(np.isnan(a[:, j]) | np.isnan(b[:, j])) for j in range(a.shape[1])]
    deltas = [a[ok, j] - b[ok, j] for j, ok in enumerate(kept)]
    cis = intervals(deltas, [delta_bounds(lim) for lim in limits])
    return [paired_delta(deltas[j], directions[j], f"{key}\x1f{j}", limits[j],
                         at_best_bound(b[~np.isnan(b[:, j]), j], directions[j], limits[j]),
                         cis[j])
            for j in range(a.shape[1])]


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control; scipy has none):
    sorted ascending, p_(i) · (m − i + 1), made monotone, capped at 1. nans stay nan
    and do not count in the family."""
    ps = np.asarray(p, dtype=np.float64)
    out = np.full(len(ps), NAN)
    ok = np.flatnonzero(~np.isnan(ps))
    if len(ok) == 0:
        return out
    order = ok[np.argsort(ps[ok], kind="stable")]
    m = len(order)
    adj = np.maximum.accumulate(ps[order] * (m - np.arange(m)))
    out[order] = np.minimum(adj, 1.0)
    return out


def bh(p: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg q-values (``scipy.stats.false_discovery_control``); nans stay
    nan and do not count."""
    ps = np.asarray(p, dtype=np.float64)
    out = np.full(len(ps), NAN)
    ok = ~np.isnan(ps)
    if ok.any():
        out[ok] = sps.false_discovery_control(ps[ok], method="bh")
    return out
