"""Executing many jobs: inline, local Ray, remote Ray cluster. The only package that
imports ``ray``, and only lazily, inside the functions that need it."""

from cluster import inline as _inline  # noqa: F401  (registers)
from cluster import ray_executor as _ray  # noqa: F401  (registers; imports ray lazily)
from cluster.base import (
    EXECUTORS,
    Executor,
    ExecutorError,
    OnOutcome,
    Outcome,
    TaskFn,
    register_executor,
)

__all__ = ["EXECUTORS", "Executor", "ExecutorError", "OnOutcome", "Outcome", "TaskFn",
           "register_executor"]
