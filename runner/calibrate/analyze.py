"""What a calibration's jobs say about a workload's power to separate policies: each cell's
current recall, contradiction and false-forget with 95% intervals; the best policy's gap to
the oracle at each budget; pairs of policies whose outputs are bit-identical on every seed;
the share of queries every memory answers (saturated) and none does (impossible); and a
verdict per criterion:

- (a) no two policies with different rules are bit-identical on the quality metrics (at
  no budget; sizes may differ);
- (b) the best non-oracle current recall is ≤ 0.95 and ≥ 0.05 below the oracle's, unbounded
  or at some budget;
- (c) saturated queries ≤ 50% and impossible queries ≤ 20% (over every unbounded memory,
  the oracle included: a memory that answers almost nothing, such as ttl on turn streams,
  makes few queries saturated);
- (d) at least one policy's false-forget rate is in [0.05, 0.5] (unbounded).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from runner.analysis import stats
from runner.calibrate.task import SIZE_METRICS, columns
from runner.metrics import METRICS
from runner.results.tables import variant_label

ORACLE = "oracle"
BUDGET = "store.budget"
MAX_RECALL, MIN_GAP = 0.95, 0.05
MAX_SATURATED, MAX_IMPOSSIBLE = 0.5, 0.2
FALSE_FORGET_BAND = (0.05, 0.5)
SHOWN = ("recall_current_at_k", "contradiction_rate", "false_forget_rate")


@dataclass(frozen=True)
class CellStat:
    label: str
    policy: str
    budget: int
    n: int
    means: dict[str, float]
    ci: dict[str, tuple[float, float]]
    final_size: float


@dataclass(frozen=True)
class Gap:
    budget: int
    best: str
    best_recall: float
    oracle_recall: float

    @property
    def gap(self) -> float:
        return self.oracle_recall - self.best_recall


@dataclass(frozen=True)
class Criterion:
    name: str
    met: bool
    detail: str


@dataclass(frozen=True)
class Calibration:
    workload: str
    seeds: list[int]
    cells: list[CellStat]
    gaps: list[Gap]
    identical: list[tuple[str, str]]
    saturated: float
    impossible: float
    criteria: list[Criterion]

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload, "seeds": self.seeds,
            "cells": [c.__dict__ for c in self.cells],
            "gaps": [g.__dict__ | {"gap": g.gap} for g in self.gaps],
            "identical": [list(p) for p in self.identical],
            "saturated": self.saturated, "impossible": self.impossible,
            "criteria": [c.__dict__ for c in self.criteria],
        }


def _budget(params: str) -> int:
    return int(json.loads(params).get(BUDGET, 0))


def _rule(params: str) -> str:
    return json.dumps({k: v for k, v in json.loads(params).items() if k != BUDGET},
                      sort_keys=True)


def analyze(workload: str, rows: Sequence[dict[str, Any]]) -> Calibration:
    """The calibration of the per-job rows (policy, params, seed, answered, metrics)."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["policy"], r["params"]), []).append(r)
    for rs in cells.values():
        rs.sort(key=lambda r: r["seed"])
    stat = []
    for (policy, params), rs in sorted(cells.items(), key=lambda kv: (_budget(kv[0][1]),
                                                                      kv[0])):
        means, ci = {}, {}
        for m in SHOWN:
            x = stats.as_array([r[m] for r in rs])
            means[m] = stats.mean(x)
            ci[m] = stats.interval(x, METRICS[m].bounds)
        label = variant_label(policy, _rule(params))
        stat.append(CellStat(label, policy, _budget(params), len(rs), means, ci,
                             stats.mean(stats.as_array([r["final_size"] for r in rs]))))
    gaps = _gaps(stat)
    identical = _identical(cells)
    saturated, impossible = _query_shares(cells)
    crit = _criteria(stat, gaps, identical, saturated, impossible)
    seeds = sorted({r["seed"] for r in rows})
    return Calibration(workload, seeds, stat, gaps, identical, saturated, impossible, crit)


def _gaps(stat: list[CellStat]) -> list[Gap]:
    out = []
    for budget in sorted({c.budget for c in stat}):
        here = [c for c in stat if c.budget == budget]
        oracle = [c for c in here if c.policy == ORACLE]
        others = [c for c in here if c.policy != ORACLE]
        if not oracle or not others:
            continue
        best = max(others, key=lambda c: c.means["recall_current_at_k"])
        out.append(Gap(budget, best.label, best.means["recall_current_at_k"],
                       oracle[0].means["recall_current_at_k"]))
    return out


def _identical(cells: dict[tuple[str, str], list[dict[str, Any]]]) -> list[tuple[str, str]]:
    """Pairs of different policies at the same budget whose every quality metric (per
    query, averaged: what a reader of retrieval sees; sizes may differ) agrees exactly on
    every seed."""
    names = [m for m in columns() if m not in SIZE_METRICS]
    keyed = {}
    for (policy, params), rs in cells.items():
        keyed[(policy, params)] = (_budget(params), [r["seed"] for r in rs],
                                   np.array([[r[m] for m in names] for r in rs]))
    out = []
    for (a, b) in itertools.combinations(sorted(keyed), 2):
        (ba, sa, xa), (bb, sb, xb) = keyed[a], keyed[b]
        if a[0] != b[0] and ba == bb and sa == sb and np.array_equal(xa, xb, equal_nan=True):
            out.append((variant_label(a[0], _rule(a[1])) + (f" @{ba}" if ba else ""),
                        variant_label(b[0], _rule(b[1])) + (f" @{bb}" if bb else "")))
    return out


def _query_shares(cells: dict[tuple[str, str], list[dict[str, Any]]]) -> tuple[float, float]:
    """Over the unbounded memories, oracle included: the share of queries (per seed,
    averaged over seeds) that every one answers, and that none does."""
    by_seed: dict[int, list[list[int]]] = {}
    for (_, params), rs in cells.items():
        if _budget(params) == 0:
            for r in rs:
                by_seed.setdefault(r["seed"], []).append(r["answered"])
    sat, imp = [], []
    for answers in by_seed.values():
        a = np.array(answers, dtype=bool)
        if a.size == 0 or a.shape[1] == 0:
            continue
        sat.append(float(np.mean(a.all(axis=0))))
        imp.append(float(np.mean(~a.any(axis=0))))
    return (float(np.mean(sat)) if sat else float("nan"),
            float(np.mean(imp)) if imp else float("nan"))


def _criteria(stat: list[CellStat], gaps: list[Gap], identical: list[tuple[str, str]],
              saturated: float, impossible: float) -> list[Criterion]:
    # (a) at the defaults (no budget): under a budget the store's uniform cap may make
    # rules coincide, which the JSON lists too
    free = [(x, y) for x, y in identical if "@" not in x]
    a = Criterion("a: no two rules bit-identical", not free,
                  f"{len(free)} identical pair(s) without a budget" + (
                      ": " + "; ".join(f"{x} = {y}" for x, y in free[:6]) if free else "")
                  + f" ({len(identical) - len(free)} more under a budget)")
    room = [g for g in gaps if g.best_recall <= MAX_RECALL and g.gap >= MIN_GAP]
    b = Criterion("b: headroom below the oracle", bool(room), "; ".join(
        f"{'no budget' if g.budget == 0 else f'budget {g.budget}'}: best {g.best} "
        f"{g.best_recall:.3f}, oracle {g.oracle_recall:.3f}" for g in gaps) or "no oracle ran")
    c = Criterion("c: saturated ≤ 50%, impossible ≤ 20%",
                  saturated <= MAX_SATURATED and impossible <= MAX_IMPOSSIBLE,
                  f"saturated {saturated:.1%}, impossible {impossible:.1%}")
    lo, hi = FALSE_FORGET_BAND
    inside = [s.label for s in stat if s.budget == 0 and s.policy != ORACLE
              and lo <= s.means["false_forget_rate"] <= hi]
    d = Criterion("d: some false-forget in [0.05, 0.5]", bool(inside),
                  ", ".join(inside) if inside else "none")
    return [a, b, c, d]
