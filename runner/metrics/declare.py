"""Every metric, declared once: name, direction, description, and (for a per-query
quality metric) how one query is valued. Reports, the CLI and the aggregator read
these declarations instead of hard-coding keys.

``METRICS`` is the generic registry: fbench's metrics in declaration order (the shard's
column order), then the per-category variants, derived at lookup from the query
categories of fbench's own workloads (``<metric>_<category>``, ``n_queries_<category>``),
then installed plugins (entry points in ``fbench.metrics``: a ``Metric`` with a
``per_query`` function of the query's ``QueryScore``, averaged over queries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fbench.registry import Registry
from runner.metrics.scoring import QueryScore
from workloads.registry import CATEGORY_NAME, WORKLOADS, FromData

DIRECTIONS = ("lower", "higher", "none")
RATE_MARGIN = 0.01  # rates: one point
SIZE_MARGIN = 0.05  # sizes and tokens: 5% of the baseline's mean
RATE = (0.0, 1.0)
COUNT = (0.0, float("inf"))


@dataclass(frozen=True)
class Metric:
    name: str
    direction: str  # "lower", "higher" or "none" (descriptive: a count, a time)
    description: str
    timing: bool = False  # non-deterministic (excluded from determinism checks)
    per_query: Callable[[QueryScore], float] | None = None  # a quality metric's value
    # The practical margin: a difference smaller than this does not matter (a comparison
    # whose interval lies inside ± margin is "equivalent"); relative: a share of the
    # baseline's mean. A per-query metric is a rate: 0.01 absolute by default.
    margin: float = RATE_MARGIN
    relative: bool = False
    # The values the metric can take, when bounded. Finite bounds give its intervals the
    # betting method (runner.analysis.stats.interval); a comparison against a baseline
    # that sits at the bound in the metric's direction cannot come out better.
    bounds: tuple[float, float] | None = None

    @property
    def arrow(self) -> str:
        return {"lower": "↓", "higher": "↑", "none": ""}[self.direction]


def as_metric(obj: object, name: str) -> Metric:
    """A plugin object as a metric: a per-query ``Metric`` (TypeError otherwise)."""
    if not isinstance(obj, Metric) or obj.per_query is None:
        raise TypeError(f"{obj!r} is not a runner.metrics.Metric with a per_query function")
    if obj.direction not in DIRECTIONS:
        raise TypeError(f"bad direction {obj.direction!r}")
    return Metric(name, obj.direction, obj.description, per_query=obj.per_query,
                  margin=obj.margin, relative=obj.relative, bounds=obj.bounds)


def _nan_unless(flag: bool | None) -> float:
    return float("nan") if flag is None else float(flag)


# Per-query quality metrics, averaged over queries (and over each category's queries).
QUALITY_METRICS = (
    Metric("contradiction_rate", "lower",
           "share of queries whose top-k holds a stale value of the slot",
           per_query=lambda s: float(s.stale > 0), bounds=RATE),
    Metric("stale_fraction", "lower", "stale hits / retrieved items, averaged over queries",
           per_query=lambda s: s.stale / s.retrieved if s.retrieved else 0.0, bounds=RATE),
    Metric("recall_at_k", "higher", "share of queries whose top-k holds the current value",
           per_query=lambda s: float(s.correct > 0), bounds=RATE),
    Metric("recall_current_at_k", "higher",
           "share of queries whose top-k holds the current value as asserted since the slot "
           "last took it (an older entry whose value came back does not count)",
           per_query=lambda s: float(s.current > 0), bounds=RATE),
    Metric("recall_at_5", "higher",
           "share of queries whose top 5 holds the current value (nan when k < 5)",
           per_query=lambda s: _nan_unless(s.top5_correct), bounds=RATE),
    Metric("accuracy_at_1", "higher", "share of queries whose top-1 item is the current value",
           per_query=lambda s: float(s.top1_correct), bounds=RATE),
    Metric("precision", "higher", "current-value hits / retrieved items, averaged over queries",
           per_query=lambda s: s.correct / s.retrieved if s.retrieved else 0.0, bounds=RATE),
    Metric("false_forget_rate", "lower",
           "share of queries whose slot's current assertion had already been deleted from "
           "memory", per_query=lambda s: float(s.current_forgotten), bounds=RATE),
)
QUALITY = {m.name: m for m in QUALITY_METRICS}

# Query categories, as fbench's own generators declare them (a category a workload does
# not have is nan there): every shard has their split columns. A workload with categories
# of its own (a trace's, a plugin's) adds their columns to its shards (``category_columns``,
# ``runner.results.shard.shard_schema``); their metrics are derived from the name.
CATEGORIES: dict[str, str] = {}
for _name in WORKLOADS.builtin_names():
    if isinstance(WORKLOADS[_name], FromData):  # a trace's, StateBench's: the data's own
        continue
    for _cat, _cat_desc in WORKLOADS[_name].categories.items():
        CATEGORIES.setdefault(_cat, _cat_desc)


def category_columns(category: str) -> list[str]:
    """The split metrics of one category: each quality metric's, then its query count."""
    return [f"{q}_{category}" for q in QUALITY] + [f"n_queries_{category}"]


def own_categories(categories: Iterable[str]) -> tuple[str, ...]:
    """Of a workload's categories, those fbench's workloads do not have (sorted)."""
    return tuple(sorted(set(categories) - CATEGORIES.keys()))


def split_name(name: str) -> tuple[str, str] | None:
    """``(base, category)`` of a split metric's name (``recall_at_k_fact``), the base a
    quality metric or ``n_queries``; None for any other name."""
    bases = sorted((b for b in (*QUALITY, "n_queries") if name.startswith(f"{b}_")),
                   key=len, reverse=True)
    for base in bases:
        cat = name[len(base) + 1:]
        if CATEGORY_NAME.fullmatch(cat):
            return base, cat
    return None


def _per_category(name: str) -> Metric | None:
    """``<quality>_<category>`` or ``n_queries_<category>``, for any category."""
    split = split_name(name)
    if split is None:
        return None
    base, cat = split
    cat_desc = CATEGORIES.get(cat, f"queries of the category {cat!r}")
    if base == "n_queries":
        return Metric(name, "none", f"queries on {cat_desc}", bounds=COUNT)
    q = QUALITY[base]
    return Metric(name, q.direction, f"{q.description}; only {cat_desc}",
                  margin=q.margin, bounds=q.bounds)


def _per_category_names() -> list[str]:
    return ([f"{q}_{c}" for c in CATEGORIES for q in QUALITY]
            + [f"n_queries_{c}" for c in CATEGORIES])


METRICS: Registry[Metric] = Registry(
    "metric", group="fbench.metrics", adapt=as_metric, derive=_per_category,
    derived_names=_per_category_names, sort=False)


def declare(name: str, direction: str, description: str, timing: bool = False,
            per_query: Callable[[QueryScore], float] | None = None, *,
            margin: float = RATE_MARGIN, relative: bool = False,
            bounds: tuple[float, float] | None = None) -> Metric:
    """Register a metric of fbench's (a duplicate or an unknown direction raises)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"metric {name!r}: bad direction {direction!r}")
    if name in METRICS:
        raise ValueError(f"metric {name!r} is declared twice")
    return METRICS.add(name, Metric(name, direction, description, timing, per_query,
                                    margin, relative, bounds))


def quality_metrics() -> list[Metric]:
    """Every per-query metric, fbench's then installed plugins' (what a job averages)."""
    return [m for m in (METRICS[n] for n in METRICS.names()) if m.per_query is not None
            and not any(m.name.endswith(f"_{c}") for c in CATEGORIES)]


for _m in QUALITY_METRICS:
    METRICS.add(_m.name, _m)
def _size(name: str, description: str) -> Metric:
    return declare(name, "lower", description, margin=SIZE_MARGIN, relative=True,
                   bounds=COUNT)


declare("n_queries", "none", "queries scored", bounds=COUNT)
_size("final_size", "live entries at the end")
_size("peak_size", "most live entries at any time")
_size("final_tokens", "whitespace tokens of live entries at the end")
declare("n_forgotten", "none", "entries removed so far", bounds=COUNT)
declare(
    "extract_link_canonical", "higher",
    "share of canonical updates the memory's extractor linked to their true slot", bounds=RATE,
)
declare(
    "extract_link_hard", "higher",
    "share of hard updates the memory's extractor linked to their true slot", bounds=RATE,
)
declare(
    "extract_false_link", "lower",
    "share of observations linked to a slot they do not assert (wrong slot, or noise)",
    bounds=RATE,
)
declare("query_ms_mean", "none", "mean milliseconds a query took (timing)", timing=True)
declare("query_ms_p95", "none", "95th percentile of a query's milliseconds, within 0.5% (timing)",
        timing=True)
declare("wall_s", "none", "wall-clock seconds of the job so far", timing=True)
