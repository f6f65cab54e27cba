"""The reproduction table: each seed's published number beside fbench's mean and interval
over seeds, whether the definitions agree, and the claim it bears on.

The published values are the seeds' (docs/reference.md; ``tests/test_report_claims.py``
checks each one appears there); fbench's come from the shards."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.analysis import stats
from runner.metrics import METRICS
from runner.report.claims import NOT_RUN, Result
from runner.report.evidence import Evidence


@dataclass(frozen=True)
class Published:
    seed: str
    quantity: str
    value: float
    workload: str
    label: str
    metric: str
    definition: str  # "same", or how fbench's differs
    claim: str  # the claim id it bears on


MISS_AT_1 = "1-accuracy_at_1"  # the Lethe write-up's "false-forget": a top-1 miss
FB_DEF = "same (fbench matches its seed 0 to 3 decimals)"
LETHE_WORKLOAD = ("differs: fbench's lifecycle (version 2: interfering mentions, oblique "
                  "questions, rarely asked facts), not the write-up's workload")
LETHE_011 = ("differs: the 0.1.1 table ran 30 days with every durable fact captured first; "
             "fbench's lifecycle (version 2) runs 365 days, a quarter captured late")
PUBLISHED = (
    Published("Forgetting-Bench", "contradiction, keep-everything", 0.807, "contradiction",
              "keep_all", "contradiction_rate", FB_DEF, "FB-1"),
    Published("Forgetting-Bench", "contradiction, last-write-wins", 0.330, "contradiction",
              "last_write_wins", "contradiction_rate", FB_DEF, "FB-2"),
    Published("Forgetting-Bench", "contradiction, ebbinghaus τ=150", 0.319, "contradiction",
              "ebbinghaus", "contradiction_rate", FB_DEF, "FB-2"),
    Published("Forgetting-Bench", "contradiction, learned-forget", 0.322, "contradiction",
              "learned_forget", "contradiction_rate", "same metric; fbench trains its own "
              "network", "FB-4"),
    Published("Forgetting-Bench", "recall, last-write-wins", 0.670, "contradiction",
              "last_write_wins", "recall_at_k", FB_DEF, "FB-2"),
    Published("Forgetting-Bench", "recall, ebbinghaus τ=150", 0.668, "contradiction",
              "ebbinghaus", "recall_at_k", FB_DEF, "FB-2"),
    Published("Forgetting-Bench", "final size, last-write-wins", 2325, "contradiction",
              "last_write_wins", "final_size", FB_DEF, "FB-2"),
    Published("Forgetting-Bench", "final size, ebbinghaus τ=150", 1361, "contradiction",
              "ebbinghaus", "final_size", FB_DEF, "FB-2"),
    Published("Forgetting-Bench", "final size, learned-forget", 306, "contradiction",
              "learned_forget", "final_size", "same metric; fbench trains its own network",
              "FB-4"),
    Published("Lethe", "R@1, naive (keep all)", 0.800, "lifecycle", "keep_all",
              "accuracy_at_1", LETHE_WORKLOAD, "L-2"),
    Published("Lethe", "R@1, lethe", 0.793, "lifecycle", "lethe", "accuracy_at_1",
              LETHE_WORKLOAD, "L-2"),
    Published("Lethe", "R@1, FIFO(100)", 0.493, "lifecycle", "fifo capacity_fraction=2.5",
              "accuracy_at_1", LETHE_WORKLOAD, "L-1"),
    # The 0.1.1 release table (30 days, 3 seeds) is the write-up's only one with LRU, LFU
    # and LIFO; the later write-up's table has FIFO alone among the capacity policies.
    Published("Lethe", "R@1, LRU(100), 0.1.1 table", 0.711, "lifecycle",
              "lru capacity_fraction=2.5", "accuracy_at_1", LETHE_011, "L-5"),
    Published("Lethe", "R@1, LFU(100), 0.1.1 table", 0.778, "lifecycle",
              "lfu capacity_fraction=2.5", "accuracy_at_1", LETHE_011, "L-5"),
    Published("Lethe", "R@1, LIFO(100), 0.1.1 table", 0.800, "lifecycle",
              "lifo capacity_fraction=2.5", "accuracy_at_1", LETHE_011, "L-4"),
    Published("Lethe", "final size, naive", 1677, "lifecycle", "keep_all", "final_size",
              LETHE_WORKLOAD, "L-2"),
    Published("Lethe", "final size, lethe", 1068, "lifecycle", "lethe", "final_size",
              LETHE_WORKLOAD, "L-2"),
    Published("Lethe", "false-forget, lethe", 0.207, "lifecycle", "lethe",
              "false_forget_rate", "differs: the write-up's is 1 − R@1 (0.20 for a store "
              "that deletes nothing); fbench's counts deleted current facts", "L-1"),
    Published("Lethe", "false-forget, FIFO(100)", 0.507, "lifecycle",
              "fifo capacity_fraction=2.5", "false_forget_rate", "differs: as above", "L-1"),
    Published("Lethe", "false-forget, TTL", 0.753, "lifecycle", "ttl", "false_forget_rate",
              "differs: as above", "L-3"),
    # The write-up's own "false-forget", a retrieval miss, under its own name: 1 − R@1.
    Published("Lethe", "1 − R@1 (its false-forget), naive", 0.200, "lifecycle", "keep_all",
              MISS_AT_1, "same (1 − top-1 accuracy); fbench's lifecycle", "L-2"),
    Published("Lethe", "1 − R@1 (its false-forget), lethe", 0.207, "lifecycle", "lethe",
              MISS_AT_1, "same (1 − top-1 accuracy); fbench's lifecycle", "L-2"),
    Published("Lethe", "1 − R@1 (its false-forget), FIFO(100)", 0.507, "lifecycle",
              "fifo capacity_fraction=2.5", MISS_AT_1, "same (1 − top-1 accuracy); fbench's "
              "lifecycle", "L-1"),
    Published("Lethe", "1 − R@1 (its false-forget), TTL", 0.753, "lifecycle", "ttl",
              MISS_AT_1, "same (1 − top-1 accuracy); fbench's lifecycle", "L-3"),
)


IN_KIND = {"held": "yes", "not held": "no", "inconclusive": "undecided", "not run": "not run"}


def in_kind(claim: str, verdicts: dict[str, str]) -> str:
    """"yes (L-1 held)", "no (L-2 not held)", ...; "no claim" for a number none covers."""
    if claim not in verdicts:
        return "no claim"
    return f"{IN_KIND[verdicts[claim]]} ({claim} {verdicts[claim]})"


def rows(evidence: Sequence[Evidence], results: Sequence[Result]) -> list[list[str]]:
    """seed, quantity, published, fbench mean [interval] (n), definition, claim and its
    verdict."""
    verdicts = {r.claim.id: r.outcome.verdict for r in results}
    out = []
    for p in PUBLISHED:
        found = next((v for ev in evidence if (v := ev.find(p.workload, p.label)) is not None),
                     None)
        text = NOT_RUN
        if found is not None:
            x = stats.as_array(1.0 - found.by_metric["accuracy_at_1"] if p.metric == MISS_AT_1
                               else found.by_metric[p.metric])
            base = "accuracy_at_1" if p.metric == MISS_AT_1 else p.metric
            lo, hi = stats.interval(x, METRICS[base].bounds)
            d = 3 if abs(p.value) < 10 else 0
            text = f"{stats.mean(x):.{d}f} [{lo:.{d}f}, {hi:.{d}f}] (n={len(x)})"
        pub = f"{p.value:.3f}" if abs(p.value) < 10 else f"{p.value:,.0f}"
        out.append([p.seed, p.quantity, pub, text, p.definition, in_kind(p.claim, verdicts)])
    return out
