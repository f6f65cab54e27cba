"""Statistics over seeds (pure numpy): the unit of replication is one seed.

- ``mean``; ``std`` with ddof=1 (nan below two seeds); ``iqm``, the interquartile
  mean as rliable computes it (``scipy.stats.trim_mean(x, 0.25)``: sort, drop
  ``floor(n/4)`` values at each end, average the rest; so n < 4 drops nothing).
  The mean of constant data is that constant exactly.
- ``bootstrap_ci``: a percentile bootstrap interval of the mean over seeds,
  ``RESAMPLES`` resamples, the generator seeded by a SHA-256 hash of the cell's
  identity (``key``): the same data gives the same interval, and adding a cell
  leaves the others' intervals unchanged. One seed gives no interval (nan, nan):
  a single run says nothing about the spread. Constant data gives a zero-width
  interval at the constant.
- ``summarize_columns`` / ``paired_columns``: the same for every metric of a cell
  at once. All metrics of a cell share the cell's resampled seeds, so column
  ``j`` of the result equals ``summarize(x[:, j], key)`` exactly; a column with
  nans (a seed without a value) is dropped to its valid seeds and resampled alone.
- ``paired``: the per-seed delta ``policy - baseline`` (a pair with a nan on
  either side is dropped), its mean and bootstrap interval, and the share of
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


def bootstrap_cis(
    x: np.ndarray, key: str, resamples: int = RESAMPLES, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals of each column's mean of an (n seeds x m) array without nans.

    The columns share one set of resampled seeds, drawn from a generator seeded by
    ``key``; each resample's mean is a plain sequential sum over its n draws, so a
    column's interval does not depend on which other columns come with it.
    """
    n, m = x.shape
    lo, hi = np.full(m, NAN), np.full(m, NAN)
    if n < 2:
        return lo, hi
    idx = np.random.default_rng(key_seed(key)).integers(0, n, size=(resamples, n))
    acc = np.zeros((resamples, m))
    for i in range(n):
        acc += x[idx[:, i]]
    q = np.quantile(acc / n, [(1 - level) / 2, (1 + level) / 2], axis=0)
    const = np.all(x == x[0], axis=0)
    lo = np.where(const, x[0], q[0])
    hi = np.where(const, x[0], q[1])
    return lo, hi


def bootstrap_ci(
    x: np.ndarray, key: str, resamples: int = RESAMPLES, level: float = LEVEL
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x`` (no nans); nan below two values."""
    lo, hi = bootstrap_cis(np.asarray(x, dtype=np.float64).reshape(-1, 1), key, resamples, level)
    return float(lo[0]), float(hi[0])


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


def summarize_columns(x: np.ndarray, key: str) -> list[Summary]:
    """``summarize`` of every column of an (n seeds x m metrics) array, batched."""
    x = np.asarray(x, dtype=np.float64)
    complete = ~np.isnan(x).any(axis=0)
    out: list[Summary | None] = [None] * x.shape[1]
    cols = np.flatnonzero(complete)
    if len(cols):
        lo, hi = bootstrap_cis(x[:, cols], key)
        for j, col in enumerate(cols.tolist()):
            c = x[:, col]
            out[col] = Summary(len(c), mean(c), std(c), iqm(c), float(lo[j]), float(hi[j]))
    for col in np.flatnonzero(~complete).tolist():
        out[col] = summarize(x[:, col], key)
    return [s for s in out if s is not None]


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


SIGN = {"lower": -1.0, "higher": 1.0, "none": 0.0}


def _paired(delta: np.ndarray, direction: str, lo: float, hi: float) -> Paired:
    n = len(delta)
    sign = SIGN[direction]
    better = int(np.sum(sign * delta > 0)) if sign else 0
    worse = int(np.sum(sign * delta < 0)) if sign else 0
    ties = int(np.sum(delta == 0)) if sign else 0
    share = (better + ties / 2) / n if sign and n else NAN
    return Paired(n, mean(delta), lo, hi, better, ties, worse, share, mdd(std(delta), n))


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
    lo, hi = bootstrap_ci(delta, key)
    return _paired(delta, direction, lo, hi)


def paired_columns(
    policy: np.ndarray, baseline: np.ndarray, directions: Sequence[str], key: str
) -> list[Paired]:
    """``paired`` of every column of two (n seeds x m metrics) arrays aligned by seed, batched."""
    a = np.asarray(policy, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.shape[1] != len(directions):
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    delta = a - b
    complete = ~np.isnan(delta).any(axis=0)
    out: list[Paired | None] = [None] * a.shape[1]
    cols = np.flatnonzero(complete)
    if len(cols):
        lo, hi = bootstrap_cis(delta[:, cols], key)
        for j, col in enumerate(cols.tolist()):
            out[col] = _paired(delta[:, col], directions[col], float(lo[j]), float(hi[j]))
    for col in np.flatnonzero(~complete).tolist():
        out[col] = paired(a[:, col], b[:, col], directions[col], key)
    return [p for p in out if p is not None]
