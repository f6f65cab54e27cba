"""Statistics over seeds: the unit of replication is one seed.

- ``mean``; ``std`` with ddof=1 (nan below two seeds); ``iqm``, the interquartile
  mean as rliable computes it (``scipy.stats.trim_mean(x, 0.25)``). The mean of
  constant data is that constant exactly.
- ``t_ci``: the Student-t interval of the mean, ``mean ± t_{n-1, 0.975} · sd / √n``
  (``scipy.stats.t``). A percentile bootstrap over 5–20 seeds is too narrow (it
  misses the true mean in about 16% of cases at n = 5, 9.5% at n = 10); the t interval
  holds its 95% at those n (``tests/test_interval_coverage.py`` simulates normal,
  skewed and bounded data at n = 5, 10, 20 and 50). One seed gives no interval (nan):
  a single run says nothing about the spread; constant data a zero-width one.
- ``sign_flip_p``: the two-sided p-value of a paired comparison by the sign-flip
  permutation test on the mean delta: every one of the 2^n sign assignments up to
  ``EXACT_MAX`` = 20 pairs (enumerated by halves, meet in the middle: each half's
  2^(n/2) sums, one half sorted, instead of 2^n sums; the same value as
  ``scipy.stats.permutation_test``, which the tests check),
  ``MC_RESAMPLES`` seeded random ones beyond (p = (1 + hits) / (1 + resamples)). At
  n = 5 its smallest p is 1/16 = 0.0625: no comparison of five seeds can reach 0.05.
- ``mdd``: the minimal detectable paired difference, the exact t-test one: the
  shift δ at which a two-sided paired t-test at α = 0.05 has power 0.8, from the
  noncentral t (``scipy.stats.nct``), in units of sd(Δ): ``mdd_factor(n) · sd / √n``.
- ``paired``: the per-seed delta ``policy - baseline`` (a pair with a nan on either
  side is dropped), its mean, t interval, sign-flip p, the share of seeds where the
  policy is better in the metric's direction (a tie counts half), and the MDD.
"""

from __future__ import annotations

import functools
import hashlib
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
SMALL_N = 10  # below this many seeds the report warns: intervals wide, tests weak

CI_METHOD = f"{LEVEL:.0%} Student-t interval over seeds (mean ± t(n−1) · sd / √n)"
TEST_METHOD = (f"two-sided sign-flip permutation test of the mean paired Δ (exact up to "
               f"{EXACT_MAX} seeds, {MC_RESAMPLES:,} seeded random sign vectors beyond)")
NAN = float("nan")


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


def sign_flip_p(delta: np.ndarray, key: str = "") -> float:
    """Two-sided sign-flip p-value of the mean of ``delta``: the share of sign vectors
    whose |Σ s_i d_i| reaches the observed |Σ d_i| (a relative tolerance of 1e-9 absorbs
    float rounding). nan without pairs; 1 when every delta is 0."""
    d = np.asarray(delta, dtype=np.float64)
    n = len(d)
    if n == 0:
        return NAN
    obs = abs(float(np.sum(d)))
    if obs == 0.0:
        return 1.0
    tol = 1e-9 * max(obs, float(np.sum(np.abs(d))))
    if n <= EXACT_MAX:
        a = _half_sums(d[: n // 2])
        b = np.sort(_half_sums(d[n // 2 :]))
        # count pairs with a + b >= obs - tol or a + b <= -(obs - tol)
        hi = len(b) - np.searchsorted(b, obs - tol - a, side="left")
        lo = np.searchsorted(b, -(obs - tol) - a, side="right")
        hits = int(np.sum(hi) + np.sum(lo))
        return min(1.0, hits / 2.0**n)
    rng = np.random.default_rng(key_seed("sign-flip", key))
    hits = 0
    rows = max(1, min(5000, SIGNS_PER_DRAW // n))  # (the draws' order is the same at any size)
    for start in range(0, MC_RESAMPLES, rows):
        size = min(rows, MC_RESAMPLES - start)
        signs = rng.integers(0, 2, size=(size, n)) * 2 - 1
        hits += int(np.sum(np.abs(signs @ d) >= obs - tol))
    return (1 + hits) / (1 + MC_RESAMPLES)


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float
    iqm: float
    ci_low: float
    ci_high: float


def summarize(values: Sequence[float] | np.ndarray) -> Summary:
    """n, mean, std, IQM and t interval of one cell's values (nans excluded)."""
    x = as_array(values)
    lo, hi = t_ci(x)
    return Summary(len(x), mean(x), std(x), iqm(x), lo, hi)


def summarize_columns(x: np.ndarray) -> list[Summary]:
    """``summarize`` of every column of an (n seeds x m metrics) array."""
    x = np.asarray(x, dtype=np.float64)
    return [summarize(x[:, j]) for j in range(x.shape[1])]


@dataclass(frozen=True)
class Paired:
    n: int  # seeds with a value on both sides
    mean: float  # mean of policy - baseline
    ci_low: float
    ci_high: float
    p: float  # sign-flip permutation p, two-sided
    better: int  # seeds where the policy beats the baseline in the metric's direction
    ties: int
    worse: int
    share_better: float  # (better + ties / 2) / n; nan when the metric has no direction
    mdd: float
    identical: bool  # every pair bit-identical (delta exactly 0 on every seed)


SIGN = {"lower": -1.0, "higher": 1.0, "none": 0.0}


def paired_delta(delta: np.ndarray, direction: str, key: str = "") -> Paired:
    """The comparison of per-seed deltas (no nans) in the metric's direction."""
    n = len(delta)
    sign = SIGN[direction]
    better = int(np.sum(sign * delta > 0)) if sign else 0
    worse = int(np.sum(sign * delta < 0)) if sign else 0
    ties = int(np.sum(delta == 0)) if sign else 0
    share = (better + ties / 2) / n if sign and n else NAN
    lo, hi = t_ci(delta)
    return Paired(n, mean(delta), lo, hi, sign_flip_p(delta, key), better, ties, worse,
                  share, mdd(std(delta), n), bool(n and np.all(delta == 0)))


def paired(
    policy: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    direction: str,
    key: str = "",
) -> Paired:
    """Compare two arrays aligned by seed; ``direction`` is "lower", "higher" or "none"."""
    a = np.asarray(policy, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    ok = ~(np.isnan(a) | np.isnan(b))
    return paired_delta(a[ok] - b[ok], direction, key)


def paired_columns(
    policy: np.ndarray, baseline: np.ndarray, directions: Sequence[str], key: str = ""
) -> list[Paired]:
    """``paired`` of every column of two (n seeds x m metrics) arrays aligned by seed."""
    a = np.asarray(policy, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.shape[1] != len(directions):
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    return [paired(a[:, j], b[:, j], directions[j], f"{key}\x1f{j}")
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
