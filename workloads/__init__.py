"""Seeded synthetic event streams with ground truth. Imports nothing of fbench's."""

from workloads import contradiction as _contradiction  # noqa: F401  (registers)
from workloads import lifecycle as _lifecycle  # noqa: F401  (registers)
from workloads.events import Event, Observe, ObserveTruth, Query, QueryTruth, Tick
from workloads.registry import WORKLOADS, Vocabulary, Workload, register_workload

__all__ = [
    "WORKLOADS",
    "Event",
    "Observe",
    "ObserveTruth",
    "Query",
    "QueryTruth",
    "Tick",
    "Vocabulary",
    "Workload",
    "register_workload",
]
