"""Every metric, declared once: name, direction, description. Reports, the CLI and
the aggregator read these declarations instead of hard-coding keys."""

from __future__ import annotations

from dataclasses import dataclass

from workloads import WORKLOADS


@dataclass(frozen=True)
class Metric:
    name: str
    direction: str  # "lower", "higher" or "none" (descriptive: a count, a time)
    description: str
    timing: bool = False  # non-deterministic (excluded from determinism checks)

    @property
    def arrow(self) -> str:
        return {"lower": "↓", "higher": "↑", "none": ""}[self.direction]


METRICS: dict[str, Metric] = {}


def declare(name: str, direction: str, description: str, timing: bool = False) -> Metric:
    if name in METRICS:
        raise ValueError(f"metric {name!r} is declared twice")
    if direction not in ("lower", "higher", "none"):
        raise ValueError(f"metric {name!r}: bad direction {direction!r}")
    METRICS[name] = m = Metric(name, direction, description, timing)
    return m


# Per-query quality metrics, averaged over queries (and over each category's queries).
QUALITY = {
    "contradiction_rate": ("lower", "share of queries whose top-k holds a stale value of the slot"),
    "stale_fraction": ("lower", "stale hits / retrieved items, averaged over queries"),
    "recall_at_k": ("higher", "share of queries whose top-k holds the current value"),
    "recall_current_at_k": (
        "higher",
        "share of queries whose top-k holds the current value as asserted since the slot "
        "last took it (an older entry whose value came back does not count)",
    ),
    "recall_at_5": (
        "higher", "share of queries whose top 5 holds the current value (nan when k < 5)"
    ),
    "accuracy_at_1": ("higher", "share of queries whose top-1 item is the current value"),
    "precision": ("higher", "current-value hits / retrieved items, averaged over queries"),
    "false_forget_rate": (
        "lower",
        "share of queries whose slot's current assertion had already been deleted from memory",
    ),
}
# Query categories, as each registered workload declares them (a category a workload
# does not have is nan there).
CATEGORIES: dict[str, str] = {}
for _workload in WORKLOADS.values():
    for _cat, _cat_desc in _workload.categories.items():
        CATEGORIES.setdefault(_cat, _cat_desc)

for _name, (_direction, _desc) in QUALITY.items():
    declare(_name, _direction, _desc)
for _cat, _cat_desc in CATEGORIES.items():
    for _name, (_direction, _desc) in QUALITY.items():
        declare(f"{_name}_{_cat}", _direction, f"{_desc}; only {_cat_desc}")

declare("n_queries", "none", "queries scored")
for _cat, _cat_desc in CATEGORIES.items():
    declare(f"n_queries_{_cat}", "none", f"queries on {_cat_desc}")
declare("final_size", "lower", "live entries at the end")
declare("peak_size", "lower", "most live entries at any time")
declare("final_tokens", "lower", "whitespace tokens of live entries at the end")
declare("n_forgotten", "none", "entries removed so far")
declare(
    "extract_link_canonical", "higher",
    "share of canonical updates the memory's extractor linked to their true slot",
)
declare(
    "extract_link_hard", "higher",
    "share of hard updates the memory's extractor linked to their true slot",
)
declare(
    "extract_false_link", "lower",
    "share of observations linked to a slot they do not assert (wrong slot, or noise)",
)
declare("query_ms_mean", "none", "mean milliseconds a query took (timing)", timing=True)
declare("query_ms_p95", "none", "95th percentile of a query's milliseconds, within 0.5% (timing)",
        timing=True)
declare("wall_s", "none", "wall-clock seconds of the job so far", timing=True)
