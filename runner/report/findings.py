"""The report's analysis, no Markdown: computed from the summary table (and the shards'
seeds), what its sections state — each comparison's verdict, the contradiction–recall
frontier, the least recall regret against the oracle at each budget, and the budget
view's curves (a policy run over one parameter or budget) read at equal memory."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from runner.results.aggregate import Cell, Setting, SummaryIndex
from runner.results.tables import metric_decimals, variant_label

Variant = tuple[str, str]  # policy, params


def undefined(x: float | None) -> bool:
    """No value: None or nan."""
    return x is None or math.isnan(x)


class ReportIndex(SummaryIndex):
    """The summary as the report reads it, with each cell's seeds and decimals."""

    def __init__(self, summary: pa.Table, shards: pa.Table) -> None:
        super().__init__(summary)
        self.digits = metric_decimals(summary)
        self.seeds: dict[Cell, set[int]] = {}
        cols = [shards.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params", "seed")]
        for w, h, k, policy, params, seed in zip(*cols, strict=True):
            self.seeds.setdefault((w, h, k, policy, params), set()).add(seed)

    def same_as(self, cell: Cell) -> str | None:
        """The label of an earlier cell this one is bit-identical to on every seed."""
        return next(iter(self.rows[cell].values()))["same_as"]

    def twins_of(self, cell: Cell) -> list[str]:
        """The labels of the later cells bit-identical to this one (collapsed into it)."""
        label = variant_label(cell[3], cell[4])
        return [variant_label(c[3], c[4]) for c in self.in_setting(cell[:3])
                if c != cell and self.same_as(c) == label]

    def n_jobs(self, cell: Cell) -> int:
        return int(next(iter(self.rows[cell].values()))["n_jobs"])

    def mean(self, cell: Cell, metric: str) -> float | None:
        """The cell's mean of ``metric``; None if the metric is absent or nan."""
        r = self.rows[cell].get(metric)
        return None if r is None or undefined(r["mean"]) else float(r["mean"])


def degenerate(idx: ReportIndex, cell: Cell) -> bool:
    """Retrieves nothing (recall 0 on every seed) or holds nothing (final size 0): such a
    cell is flagged and kept off the frontier (nothing retrieved, nothing contradicted)."""
    return idx.mean(cell, "recall_at_k") == 0.0 or idx.mean(cell, "final_size") == 0.0


# The frontier's axes and directions: contradiction, current recall, memory size.
FRONTIER3 = (("contradiction_rate", -1.0), ("recall_current_at_k", 1.0), ("final_size", -1.0))


# A cell whose current recall is under this share of the best in its setting is kept off
# the frontier: forgetting nearly everything wins on contradiction and size alone.
USEFUL_SHARE = 0.1


def frontier3(idx: ReportIndex, cells: list[Cell]) -> list[Cell]:
    """The cells no other dominates on the three axes, among those neither degenerate
    nor near-useless (current recall under ``USEFUL_SHARE`` of the best of ``cells``):
    another cell dominates when it is no worse beyond the metric's margin on every axis
    and better beyond it on one (so a lead of 0.001 against intervals of ±0.01 decides
    nothing)."""
    from runner.metrics import METRICS

    recalls = [r for c in cells if (r := idx.mean(c, "recall_current_at_k")) is not None]
    floor = USEFUL_SHARE * max(recalls, default=0.0)
    pts: dict[Cell, list[float]] = {}
    for c in cells:
        vals = [idx.mean(c, m) for m, _ in FRONTIER3]
        if (not degenerate(idx, c) and all(v is not None for v in vals)
                and float(vals[1] or 0.0) >= floor):
            pts[c] = [sign * float(v) for (_, sign), v in zip(FRONTIER3, vals, strict=True)
                      if v is not None]

    def margin(j: int, a: list[float]) -> float:
        m = METRICS[FRONTIER3[j][0]]
        return m.margin * abs(a[j]) if m.relative else m.margin

    def dominates(b: list[float], a: list[float]) -> bool:
        no_worse = all(b[j] >= a[j] - margin(j, a) for j in range(3))
        return no_worse and any(b[j] > a[j] + margin(j, a) for j in range(3))

    return [c for c, a in pts.items() if not any(dominates(b, a) for d, b in pts.items()
                                                 if d != c)]


# --- curves: a policy over one parameter or budget ----------------------------------------

# store parameters a curve may run over, besides any policy.* parameter: the budget axes
LINE_STORE_KEYS = ("store.budget", "store.budget_tokens")


def _line_key(key: str) -> bool:
    return key.startswith("policy.") or key in LINE_STORE_KEYS


def sweeps(variants: Iterable[Variant]) -> dict[tuple[str, str, str], list[Variant]]:
    """Variants of one policy (same other overrides) that differ in exactly one
    ``policy.*`` parameter or budget (``store.budget``), keyed by (policy, the other
    params, parameter)."""
    groups: dict[tuple[str, str], list[Variant]] = {}
    for policy, params in variants:
        rest = json.dumps({k: v for k, v in json.loads(params).items()
                           if not _line_key(k)}, sort_keys=True)
        groups.setdefault((policy, rest), []).append((policy, params))
    out: dict[tuple[str, str, str], list[Variant]] = {}
    for (policy, rest), vs in groups.items():
        keys = {k for _, p in vs for k in json.loads(p) if _line_key(k)}
        if len(vs) >= 2 and len(keys) == 1:
            out[(policy, rest, keys.pop())] = vs
    return out


# --- at equal memory ----------------------------------------------------------------------

BUDGET_METRICS = ("recall_at_k", "false_forget_rate")


@dataclass(frozen=True)
class EqualMemory:
    """A policy's own means of ``BUDGET_METRICS`` vs a capacity policy's at its final size."""

    variant: Variant
    size: float  # the policy's mean final size
    curve: Variant  # the capacity policy and its other params
    values: list[tuple[float | None, float | None]]  # per metric: own mean, the curve's


def equal_memory(idx: ReportIndex, setting: Setting) -> list[EqualMemory]:
    """Each capacity policy run at several capacities, read at every other policy's final
    size: its metrics interpolated linearly between the two capacities that bracket it."""
    variants = [(c[3], c[4]) for c in idx.in_setting(setting)]
    curves = {line: vs for line, vs in sweeps(variants).items() if "capacity" in line[2]}
    if not curves:
        return []
    in_curve = {v for vs in curves.values() for v in vs}
    found = []
    for v in variants:
        size = idx.mean((*setting, *v), "final_size")
        if v in in_curve or size is None:
            continue
        for (policy, rest, _key), vs in sorted(curves.items()):
            values = _read_at(idx, setting, v, vs, size)
            if values is not None:
                found.append(EqualMemory(v, size, (policy, rest), values))
    return found


def _read_at(idx: ReportIndex, setting: Setting, v: Variant, curve: list[Variant],
             size: float) -> list[tuple[float | None, float | None]] | None:
    """Per metric of ``BUDGET_METRICS``: ``v``'s own mean, and the ``curve``'s
    interpolated at ``size`` (None where a point of it has none). None if the curve's
    final sizes do not bracket ``size``."""
    pts = sorted(
        (s, [idx.mean((*setting, *u), m) for m in BUDGET_METRICS])
        for u in curve if (s := idx.mean((*setting, *u), "final_size")) is not None)
    xs = [p[0] for p in pts]
    if len(xs) < 2 or not xs[0] <= size <= xs[-1]:
        return None
    values = []
    for j, m in enumerate(BUDGET_METRICS):
        ys = [p[1][j] for p in pts]
        own = idx.mean((*setting, *v), m)
        known = [y for y in ys if y is not None]
        there = float(np.interp(size, xs, known)) if len(known) == len(ys) else None
        values.append((own, there))
    return values
