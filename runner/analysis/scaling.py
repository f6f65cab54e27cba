"""The scaling study: how final size, tokens and per-job seconds grow with the horizon.

For every policy variant (workload, k, policy, params) that ran at two or more
horizons, and for each scaled metric (``final_size``, ``final_tokens``, and
``wall_s``, the final checkpoint's wall-clock seconds: the job's seconds), the
slope ``b`` of the least-squares line ``log y = a + b·log(horizon)`` is fitted
to the per-job points: one point per job, its final checkpoint. ``b = 1`` is
linear growth with the horizon, ``b = 0`` a bounded quantity, ``b = 0.5`` growth
as the square root.

- **Points, not means.** Fitting every job's point weighs each job equally; with
  the same seeds at every horizon that is the same line as the fit through the
  per-horizon means of ``log y`` (geometric means), and it keeps the seeds for the
  interval.
- **Interval: a percentile bootstrap over seeds.** The seed is the unit of
  replication, so a resample draws seeds with replacement (``stats.RESAMPLES``
  draws, generator seeded by SHA-256 of the variant and metric, as in
  ``runner.analysis.stats``) and each drawn seed brings its jobs at every horizon; the line
  is refitted to each resample. A resample that covers fewer than two horizons
  gives no slope and is left out of the quantiles. One seed gives no interval.
- **y ≤ 0 has no logarithm** (a memory emptied to size 0): such points, and nan
  values, are left out of the fit and counted (``Fit.n_used`` < ``Fit.n_jobs``);
  with fewer than two horizons left the slope is undefined (nan).
- **Constant data** gives slope 0 exactly, with a zero-width interval.
- ``wall_s`` is a timing column: its slope differs between machines and runs; the
  other two are deterministic.

Pure numpy; the same shards give the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from runner.analysis import stats
from runner.results.aggregate import cell_sort_key

# metric -> what the report calls it
SCALED = {"final_size": "size", "final_tokens": "tokens", "wall_s": "seconds"}
# The shard columns the study reads (every checkpoint row, or only final ones).
COLUMNS = ("job_id", "workload", "horizon", "k", "policy", "params", "seed", "is_final",
           *SCALED)

Variant = tuple[str, str]  # policy, params


@dataclass(frozen=True)
class Fit:
    """The log–log slope of one metric of one policy variant, and its bootstrap interval."""

    slope: float  # nan: undefined (fewer than two horizons with a positive value)
    intercept: float  # a in log y = a + b·log(horizon), natural logarithms
    ci_low: float
    ci_high: float
    n_jobs: int  # jobs of the variant
    n_used: int  # jobs whose value is positive (the fitted points)
    n_horizons: int  # distinct horizons among the fitted points
    n_seeds: int  # distinct seeds among the fitted points

    @property
    def defined(self) -> bool:
        return not np.isnan(self.slope)


def _fit_weighted(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares of y on x for each row of weights ``w`` (r x points):
    (intercepts, slopes), each of length r. Callers make sure x varies under each row."""
    sw = w.sum(axis=1)
    xm = (w @ x) / sw
    ym = (w @ y) / sw
    dx = x[None, :] - xm[:, None]
    sxx = (w * dx * dx).sum(axis=1)
    sxy = (w * dx * (y[None, :] - ym[:, None])).sum(axis=1)
    slope = sxy / sxx
    return ym - slope * xm, slope


def fit_loglog(horizons: Sequence[float] | np.ndarray,
               values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(a, b) of the least-squares line log y = a + b·log h over the points with y > 0;
    (nan, nan) with fewer than two distinct horizons among them."""
    h = np.asarray(horizons, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    ok = (y > 0) & (h > 0)  # nan > 0 is False
    h, y = h[ok], y[ok]
    if len(np.unique(h)) < 2:
        return stats.NAN, stats.NAN
    if np.all(y == y[0]):
        return float(np.log(y[0])), 0.0
    a, b = _fit_weighted(np.log(h), np.log(y), np.ones((1, len(h))))
    return float(a[0]), float(b[0])


def fit_slope(horizons: Sequence[float] | np.ndarray, seeds: Sequence[int] | np.ndarray,
              values: Sequence[float] | np.ndarray, key: str,
              resamples: int = stats.RESAMPLES, level: float = stats.LEVEL) -> Fit:
    """The log–log slope of ``values`` against ``horizons`` (one point per job) with a
    percentile bootstrap interval over ``seeds``; ``key`` seeds the generator."""
    h = np.asarray(horizons, dtype=np.float64)
    s = np.asarray(seeds, dtype=np.int64)
    y = np.asarray(values, dtype=np.float64)
    if not h.shape == s.shape == y.shape:
        raise ValueError(f"horizons, seeds and values differ in shape: {h.shape}, {s.shape}, "
                         f"{y.shape}")
    n_jobs = len(y)
    ok = (y > 0) & (h > 0)
    h, s, y = h[ok], s[ok], y[ok]
    hs, h_idx = np.unique(h, return_inverse=True)
    ss, s_idx = np.unique(s, return_inverse=True)
    a, b = fit_loglog(h, y)
    lo = hi = stats.NAN
    if len(hs) >= 2 and len(ss) >= 2:
        if np.all(y == y[0]):
            lo = hi = 0.0
        else:
            draws = np.random.default_rng(stats.key_seed(key)).integers(
                0, len(ss), size=(resamples, len(ss)))
            counts = np.zeros((resamples, len(ss)))
            np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
            w = counts[:, s_idx]  # each point weighted by how often its seed was drawn
            covered = w @ (h_idx[:, None] == np.arange(len(hs))[None, :])  # draws per horizon
            good = (covered > 0).sum(axis=1) >= 2
            slopes = _fit_weighted(np.log(h), np.log(y), w[good])[1]
            if len(slopes):
                q = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
                lo, hi = float(q[0]), float(q[1])
    return Fit(b, a, lo, hi, n_jobs, len(y), len(hs), len(ss))


@dataclass(frozen=True)
class Series:
    """One policy variant of a workload and k, at each of its horizons."""

    policy: str
    params: str
    horizons: tuple[int, ...]
    n_jobs: int
    seeds: tuple[int, ...]
    # metric -> one summary of the final values (mean and t interval over seeds) per
    # horizon, in the order of ``horizons``
    points: dict[str, list[stats.Summary]]
    fits: dict[str, Fit]  # metric -> slope


@dataclass(frozen=True)
class Study:
    """A workload and k that ran at two or more horizons."""

    workload: str
    k: int
    horizons: tuple[int, ...]
    series: list[Series] = field(default_factory=list)  # the variants at >= 2 horizons
    single: list[Variant] = field(default_factory=list)  # variants at one horizon: not fitted


def final_rows(shards: pa.Table) -> pa.Table:
    """The final checkpoint of every job."""
    return shards.filter(shards.column("is_final"))


def studies(shards: pa.Table, baseline: str = "keep_all") -> list[Study]:
    """One ``Study`` per (workload, k) with two or more horizons, in (workload, k) order;
    variants in the report's order (the baseline first)."""
    final = final_rows(shards)
    cols = {c: final.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params", "seed")}
    values = {m: np.asarray(final.column(m).to_pylist(), dtype=np.float64) for m in SCALED}
    rows: dict[tuple[str, int, str, str], list[int]] = {}
    for i, (w, k, policy, params) in enumerate(zip(cols["workload"], cols["k"], cols["policy"],
                                                   cols["params"], strict=True)):
        rows.setdefault((w, k, policy, params), []).append(i)
    horizon = np.asarray(cols["horizon"], dtype=np.int64)
    seed = np.asarray(cols["seed"], dtype=np.int64)
    out: list[Study] = []
    for w, k in sorted({(g[0], g[1]) for g in rows}):
        variants = sorted(((g[2], g[3]) for g in rows if g[:2] == (w, k)),
                          key=lambda v: cell_sort_key((w, 0, k, *v), baseline))
        all_h = tuple(sorted({int(horizon[i]) for v in variants for i in rows[(w, k, *v)]}))
        if len(all_h) < 2:
            continue
        study = Study(w, k, all_h)
        for policy, params in variants:
            idx = np.array(sorted(rows[(w, k, policy, params)],
                                  key=lambda i: (horizon[i], seed[i])), dtype=np.int64)
            hs = tuple(int(x) for x in np.unique(horizon[idx]))
            if len(hs) < 2:
                study.single.append((policy, params))
                continue
            points: dict[str, list[stats.Summary]] = {}
            fits: dict[str, Fit] = {}
            for m in SCALED:
                y = values[m][idx]
                # the summary's t interval of size and tokens at each horizon
                points[m] = [stats.summarize(y[horizon[idx] == h]) for h in hs]
                fits[m] = fit_slope(horizon[idx], seed[idx], y,
                                    json.dumps([w, k, policy, params, m, "log-log slope"]))
            study.series.append(Series(policy, params, hs, len(idx),
                                       tuple(sorted({int(x) for x in seed[idx]})), points, fits))
        out.append(study)
    return out
