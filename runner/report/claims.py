"""The seeds' headline claims, restated as hypotheses fbench tests on its own shards.

A claim is data: which cells, which metric, which bound (from the seed's own words,
docs/reference.md). Its verdict (held, not held, inconclusive, not run) and every number
it quotes are computed from the shards (``runner.report.evidence``), never typed in.

Each elementary test is a paired interval over seeds (``stats.interval``: the betting
interval within a rate's bounds, t otherwise) at level ``1 - 0.05 / m``, m the number of
claims (Bonferroni): the chance that any claim's verdict is wrong by chance
is at most 5%. A conjunction (``All``) holds when every part holds and fails when any
part fails (an intersection–union test, no further correction).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from runner.analysis import stats
from runner.metrics import METRICS
from runner.report.evidence import Evidence, Values, paired_values

HELD, NOT_HELD, INCONCLUSIVE, NOT_RUN = "held", "not held", "inconclusive", "not run"


@dataclass(frozen=True)
class Outcome:
    verdict: str
    effect: str  # the numbers, with their intervals
    n: int


def _ci(x: np.ndarray, level: float, bounds: stats.Bounds
        ) -> tuple[float, float, float]:
    """The mean of ``x`` and its interval (``stats.interval``) within ``bounds``."""
    lo, hi = stats.interval(x, bounds, level)
    return stats.mean(x), lo, hi


def _delta_bounds(metric: str, ratio: float = 1.0) -> stats.Bounds:
    """Where ``a - ratio · b`` lies for two values of ``metric``."""
    bounds = METRICS[metric].bounds
    if not stats.finite(bounds):
        return None
    assert bounds is not None
    return (bounds[0] - ratio * bounds[1], bounds[1] - ratio * bounds[0])


def _fmt(m: float, lo: float, hi: float, d: int | None = None) -> str:
    d = (3 if abs(m) < 10 else 0) if d is None else d
    return f"{m:+.{d}f} [{lo:+.{d}f}, {hi:+.{d}f}]"


def _missing(*labels: str) -> Outcome:
    return Outcome(NOT_RUN, "not in these shards: " + ", ".join(labels), 0)


def _pair(ev: Evidence, workload: str, a_label: str, b_label: str, metric: str
          ) -> tuple[np.ndarray, np.ndarray] | Outcome:
    """The two cells' paired values of ``metric``, or the outcome naming the missing."""
    a, b = ev.find(workload, a_label), ev.find(workload, b_label)
    if a is None or b is None:
        return _missing(*(lab for lab, v in ((a_label, a), (b_label, b)) if v is None))
    return paired_values(a, b, metric)


@dataclass(frozen=True)
class Equivalent:
    """``a`` and ``b`` differ by less than the metric's margin (interval of Δ inside it)."""

    workload: str
    a: str
    b: str
    metric: str

    def evaluate(self, ev: Evidence, level: float) -> Outcome:
        pair = _pair(ev, self.workload, self.a, self.b, self.metric)
        if isinstance(pair, Outcome):
            return pair
        x, y = pair
        m = METRICS[self.metric]
        margin = m.margin * abs(stats.mean(y)) if m.relative else m.margin
        d, lo, hi = _ci(x - y, level, _delta_bounds(self.metric))
        verdict = (HELD if -margin < lo and hi < margin else
                   NOT_HELD if lo >= margin or hi <= -margin else INCONCLUSIVE)
        return Outcome(verdict, f"{self.a} − {self.b} on {self.metric}: Δ {_fmt(d, lo, hi)}, "
                       f"margin ±{margin:.3g}", len(x))


@dataclass(frozen=True)
class Ratio:
    """mean(a) ≤ ratio · mean(b) (``at_most``) or ≥ it: the paired a − ratio·b per seed."""

    workload: str
    a: str
    b: str
    metric: str
    ratio: float
    at_most: bool

    def evaluate(self, ev: Evidence, level: float) -> Outcome:
        pair = _pair(ev, self.workload, self.a, self.b, self.metric)
        if isinstance(pair, Outcome):
            return pair
        x, y = pair
        d, lo, hi = _ci(x - self.ratio * y, level,
                        _delta_bounds(self.metric, self.ratio))
        below, above = hi < 0, lo > 0
        verdict = ((HELD if below else NOT_HELD if above else INCONCLUSIVE) if self.at_most
                   else (HELD if above else NOT_HELD if below else INCONCLUSIVE))
        ratio = stats.mean(x) / stats.mean(y) if stats.mean(y) else float("nan")
        sign = "≤" if self.at_most else "≥"
        return Outcome(verdict, f"{self.metric} {self.a} / {self.b} = {ratio:.2f} (claim "
                       f"{sign} {self.ratio:g}); {self.a} − {self.ratio:g}·{self.b} "
                       f"{_fmt(d, lo, hi)}", len(x))


@dataclass(frozen=True)
class Floor:
    """Every one of ``policies`` keeps the metric above zero (interval's low end > 0)."""

    workload: str
    policies: tuple[str, ...]
    metric: str

    def evaluate(self, ev: Evidence, level: float) -> Outcome:
        found = {p: ev.find(self.workload, p) for p in self.policies}
        if any(v is None for v in found.values()):
            return _missing(*(p for p, v in found.items() if v is None))
        cis = {p: _ci(stats.as_array(v.by_metric[self.metric]), level,
                     METRICS[self.metric].bounds)
               for p, v in found.items() if v is not None}
        low = min(cis, key=lambda p: cis[p][0])
        verdict = (HELD if all(c[1] > 0 for c in cis.values()) else
                   NOT_HELD if any(c[2] <= 0 for c in cis.values()) else INCONCLUSIVE)
        m, lo, hi = cis[low]
        return Outcome(verdict, f"lowest {self.metric}: {low} {m:.3f} [{lo:.3f}, {hi:.3f}]",
                       min(len(stats.as_array(v.by_metric[self.metric]))
                           for v in found.values() if v is not None))


@dataclass(frozen=True)
class Extreme:
    """``a`` has the highest (or lowest) metric of ``among``: paired against each."""

    workload: str
    a: str
    among: tuple[str, ...]
    metric: str
    highest: bool

    def evaluate(self, ev: Evidence, level: float) -> Outcome:
        a = ev.find(self.workload, self.a)
        others = {p: ev.find(self.workload, p) for p in self.among}
        if a is None or any(v is None for v in others.values()):
            return _missing(*([self.a] if a is None else []),
                            *(p for p, v in others.items() if v is None))
        sign = 1.0 if self.highest else -1.0
        results = {}
        for p, v in others.items():
            assert v is not None
            x, y = paired_values(a, v, self.metric)
            results[p] = (_ci(sign * (x - y), level, _delta_bounds(self.metric)), len(x))
        verdict = (HELD if all(r[0][1] > 0 for r in results.values()) else
                   NOT_HELD if any(r[0][2] < 0 for r in results.values()) else INCONCLUSIVE)
        near = min(results, key=lambda p: results[p][0][0])
        (d, lo, hi), n = results[near]
        word = "above" if self.highest else "below"
        return Outcome(verdict, f"{self.a} {word} each of {len(self.among)} on {self.metric}; "
                       f"closest {near}: by {_fmt(d, lo, hi)}", n)


@dataclass(frozen=True)
class Monotone:
    """Every metric rises with the policy's parameter: no step of the grid falls
    detectably, and the grid's ends differ detectably."""

    workload: str
    policy: str
    param: str
    metrics: tuple[str, ...]

    def _grid(self, ev: Evidence) -> list[tuple[float, Values]]:
        key = f"policy.{self.param}"
        out = []
        for v in ev.variants(self.workload, self.policy):
            if set(json.loads(v.cell[4])) <= {key} and key in v.full:
                out.append((float(v.full[key]), v))
        return sorted(out, key=lambda t: t[0])

    def evaluate(self, ev: Evidence, level: float) -> Outcome:
        grid = self._grid(ev)
        if len(grid) < 3:
            return _missing(f"{self.policy} at 3+ values of {self.param}")
        falls, ends = 0, []
        for metric in self.metrics:
            for (_, lo_cell), (_, hi_cell) in itertools.pairwise(grid):
                x, y = paired_values(hi_cell, lo_cell, metric)
                falls += _ci(x - y, level, _delta_bounds(metric))[2] < 0
            x, y = paired_values(grid[-1][1], grid[0][1], metric)
            ends.append((metric, _ci(x - y, level, _delta_bounds(metric)), len(x)))
        rises = all(c[1] > 0 for _, c, _ in ends)
        verdict = NOT_HELD if falls else HELD if rises else INCONCLUSIVE
        span = f"{self.param} {grid[0][0]:g}→{grid[-1][0]:g}"
        text = "; ".join(f"{m} {_fmt(*c)}" for m, c, _ in ends)
        return Outcome(verdict, f"{span}: {text}; {falls} of "
                       f"{(len(grid) - 1) * len(self.metrics)} steps fall detectably",
                       min(n for *_, n in ends))


Test = Equivalent | Ratio | Floor | Extreme | Monotone


@dataclass(frozen=True)
class All:
    parts: tuple[Test, ...]

    def evaluate(self, ev: Evidence, level: float) -> Outcome:
        outs = [p.evaluate(ev, level) for p in self.parts]
        verdicts = {o.verdict for o in outs}
        verdict = (NOT_RUN if NOT_RUN in verdicts else NOT_HELD if NOT_HELD in verdicts
                   else HELD if verdicts == {HELD} else INCONCLUSIVE)
        return Outcome(verdict, "; ".join(o.effect for o in outs), min(o.n for o in outs))


@dataclass(frozen=True)
class Claim:
    id: str
    source: str  # the seed write-up
    statement: str  # the hypothesis, as the seed stated it
    test: Test | All
    how: str  # the test in words


FB, LETHE = "Forgetting-Bench", "Lethe"
FB_POLICIES = ("keep_all", "last_write_wins", "ebbinghaus", "learned_forget")
CAP = "capacity_fraction=2.5"  # the lifecycle's capacity 100 (2.5 × its 40 durable facts)
LETHE_TABLE = ("keep_all", f"fifo {CAP}", f"lru {CAP}", f"lfu {CAP}", f"lifo {CAP}", "lethe")

CLAIMS = (
    Claim("FB-1", FB, "No policy reaches zero contradiction with the learned extractor",
          Floor("contradiction", FB_POLICIES, "contradiction_rate"),
          "each of the seed's four policies: interval of the mean above 0"),
    Claim("FB-2", FB, "Decay matches last-write-wins on contradiction and recall within "
          "margin while holding ≥ 40% less memory",
          All((Equivalent("contradiction", "ebbinghaus", "last_write_wins",
                          "contradiction_rate"),
               Equivalent("contradiction", "ebbinghaus", "last_write_wins", "recall_at_k"),
               Ratio("contradiction", "ebbinghaus", "last_write_wins", "final_size", 0.6,
                     True))),
          "paired Δ inside ± margin on both rates; paired ebbinghaus − 0.6 · lww size < 0"),
    Claim("FB-3", FB, "Ebbinghaus' τ trades recall for contradiction monotonically",
          Monotone("contradiction", "ebbinghaus", "tau", ("contradiction_rate",
                                                          "recall_at_k")),
          "no step up the τ grid lowers either rate detectably; the grid's ends differ"),
    Claim("FB-4", FB, "Learned-forget sits on the same contradiction floor with the least "
          "memory",
          All((Equivalent("contradiction", "learned_forget", "last_write_wins",
                          "contradiction_rate"),
               Extreme("contradiction", "learned_forget", FB_POLICIES[:3], "final_size",
                       False))),
          "paired Δ vs lww inside ± margin; final size below each other policy's"),
    Claim("L-1", LETHE, "FIFO(100) forgets at least 2× the durable facts lethe does",
          Ratio("lifecycle", f"fifo {CAP}", "lethe", "false_forget_rate", 2.0, False),
          "paired fifo − 2 · lethe false-forget rate > 0"),
    Claim("L-2", LETHE, "Lethe's recall is within 1% of keep-all's at ~36% less index",
          All((Equivalent("lifecycle", "lethe", "keep_all", "accuracy_at_1"),
               Ratio("lifecycle", "lethe", "keep_all", "final_size", 0.7, True))),
          "top-1 accuracy (the write-up's R@1): paired Δ inside ± 0.01; size ≤ 0.7× "
          "keep-all's (36% less, read as at least 30%)"),
    Claim("L-3", LETHE, "TTL has the worst false-forget rate",
          Extreme("lifecycle", "ttl", LETHE_TABLE, "false_forget_rate", True),
          "ttl's rate above each policy of the write-up's table, paired"),
    Claim("L-4", LETHE, "LIFO ties keep-all",
          Equivalent("lifecycle", f"lifo {CAP}", "keep_all", "accuracy_at_1"),
          "top-1 accuracy: paired Δ inside ± 0.01"),
    Claim("L-5", LETHE, "At capacity 100, frequency beats recency beats arrival order "
          "(R@1: LFU 0.778 > LRU 0.711 > FIFO 0.467 in the 0.1.1 table)",
          All((Extreme("lifecycle", f"lfu {CAP}", (f"lru {CAP}",), "accuracy_at_1", True),
               Extreme("lifecycle", f"lru {CAP}", (f"fifo {CAP}",), "accuracy_at_1", True))),
          "top-1 accuracy: paired lfu − lru > 0 and lru − fifo > 0"),
)


@dataclass(frozen=True)
class Result:
    claim: Claim
    outcome: Outcome
    folder: str  # the sweep whose shards tested it


def evaluate(evidence: Sequence[Evidence], claims: Sequence[Claim] = CLAIMS) -> list[Result]:
    """Each claim on the first sweep folder that ran all its cells (else: not run)."""
    level = 1 - stats.ALPHA / len(claims)
    out = []
    for claim in claims:
        outcome = Outcome(NOT_RUN, "no sweep here ran its cells", 0)
        folder = ""
        for ev in evidence:
            got = claim.test.evaluate(ev, level)
            if got.verdict != NOT_RUN:
                outcome, folder = got, ev.out.name
                break
            outcome = got
        out.append(Result(claim, outcome, folder))
    return out


def claim_level(claims: Sequence[Claim] = CLAIMS) -> float:
    return 1 - stats.ALPHA / len(claims)
