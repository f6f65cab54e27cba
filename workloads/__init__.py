"""Seeded synthetic event streams with ground truth. Imports nothing of fbench's."""

import importlib
import pkgutil

from workloads.events import Event, Observe, ObserveTruth, Query, QueryTruth, Tick
from workloads.registry import (
    WORKLOADS,
    FromData,
    Vocabulary,
    Workload,
    current_builtin_names,
    is_retired,
    register_retired_workload,
    register_workload,
)

# Adding a workload is one module here: each is imported (in name order) and its
# ``@register_workload`` registers it.
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module not in ("events", "registry"):
        importlib.import_module(f"{__name__}.{_module}")

__all__ = [
    "WORKLOADS",
    "Event",
    "FromData",
    "Observe",
    "ObserveTruth",
    "Query",
    "QueryTruth",
    "Tick",
    "Vocabulary",
    "Workload",
    "current_builtin_names",
    "is_retired",
    "register_retired_workload",
    "register_workload",
]
