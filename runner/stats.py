"""Statistics over seeds (pure numpy): the unit of replication is one seed.

- ``mean``; ``std`` with ddof=1 (nan below two seeds); ``iqm``, the interquartile
  mean as rliable computes it (``scipy.stats.trim_mean(x, 0.25)``: sort, drop
  ``floor(n/4)`` values at each end, average the rest; so n < 4 drops nothing).
- ``bootstrap_ci``: a percentile bootstrap interval of the mean over seeds,
  ``RESAMPLES`` resamples, its generator seeded by a hash of the cell's identity
  (so the same data gives the same interval, and adding a cell leaves the others'
  intervals unchanged). One seed gives no interval (nan, nan): a single run says
  nothing about the spread. Constant data gives a zero-width interval.
- ``paired``: the per-seed delta ``policy - baseline`` (pairs with a nan on
  either side are dropped), its mean and bootstrap interval, and the share of
  seeds where the policy is better in the metric's direction. A tie (delta
  exactly 0) counts half, as in rliable's probability of improvement; wins,
  ties and losses are also returned separately.
- ``mdd``: the minimal detectable difference of a paired comparison at this n,
  ``(z_{1-alpha/2} + z_{power}) * sd_delta / sqrt(n)`` with alpha 0.05 and power
  0.8 (a normal approximation: at small n the true MDD is somewhat larger).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
ALPHA = 0.05
POWER = 0.8
Z_ALPHA = NormalDist().inv_cdf(1 - ALPHA / 2)  # 1.95996...
Z_POWER = NormalDist().inv_cdf(POWER)  # 0.84162...
MDD_FACTOR = Z_ALPHA + Z_POWER  # 2.80159...

CI_METHOD = (
    f"{LEVEL:.0%} percentile bootstrap over seeds of the mean, {RESAMPLES:,} resamples, "
    "generator seeded by SHA-256 of the cell's identity"
)
NAN = float("nan")


def as_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """A float64 array with the nans dropped (nan = no value for that seed)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    return x[~np.isnan(x)]


def mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else NAN


def std(x: np.ndarray) -> float:
    """Sample standard deviation (ddof=1); nan below two values."""
    return float(np.std(x, ddof=1)) if len(x) >= 2 else NAN


def iqm(x: np.ndarray) -> float:
    """Interquartile mean with ``scipy.stats.trim_mean(x, 0.25)`` semantics."""
    n = len(x)
    if n == 0:
        return NAN
    cut = int(0.25 * n)
    return float(np.mean(np.sort(x)[cut : n - cut]))


def key_seed(*parts: object) -> int:
    """A 64-bit generator seed from a cell's identity (stable across runs and machines)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def bootstrap_ci(
    x: np.ndarray, key: str, resamples: int = RESAMPLES, level: float = LEVEL
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x``; (nan, nan) below two values."""
    n = len(x)
    if n < 2:
        return NAN, NAN
    if np.all(x == x[0]):
        m = mean(x)
        return m, m
    rng = np.random.default_rng(key_seed(key))
    means = x[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def mdd(sd_delta: float, n: int) -> float:
    """Minimal detectable paired difference at alpha 0.05 (two-sided), power 0.8."""
    return float(MDD_FACTOR * sd_delta / np.sqrt(n)) if n >= 2 else NAN


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float
    iqm: float
    ci_low: float
    ci_high: float


def summarize(values: Sequence[float] | np.ndarray, key: str) -> Summary:
    """n, mean, std, IQM and bootstrap interval of one cell's values (nans excluded)."""
    x = as_array(values)
    lo, hi = bootstrap_ci(x, key)
    return Summary(len(x), mean(x), std(x), iqm(x), lo, hi)


@dataclass(frozen=True)
class Paired:
    n: int  # seeds with a value on both sides
    mean: float  # mean of policy - baseline
    ci_low: float
    ci_high: float
    better: int  # seeds where the policy beats the baseline in the metric's direction
    ties: int
    worse: int
    share_better: float  # (better + ties / 2) / n; nan when the metric has no direction
    mdd: float


def paired(
    policy: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    direction: str,
    key: str,
) -> Paired:
    """Compare two arrays aligned by seed; ``direction`` is "lower", "higher" or "none"."""
    a = np.asarray(policy, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    ok = ~(np.isnan(a) | np.isnan(b))
    delta = a[ok] - b[ok]
    n = len(delta)
    lo, hi = bootstrap_ci(delta, key)
    sign = {"lower": -1.0, "higher": 1.0}.get(direction, 0.0)
    better = int(np.sum(sign * delta > 0)) if sign else 0
    worse = int(np.sum(sign * delta < 0)) if sign else 0
    ties = int(np.sum(delta == 0)) if sign else 0
    share = (better + ties / 2) / n if sign and n else NAN
    return Paired(n, mean(delta), lo, hi, better, ties, worse, share, mdd(std(delta), n))
