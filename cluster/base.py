"""The executor interface and registry.

An executor runs jobs given as spec JSON strings and calls ``on_outcome`` in the
driver, once per job, as results arrive (in any order). It is handed the task
function by reference (``task(spec_jsons, node) -> [Outcome]``; fbench's is
``runner.job.execute.job_task()``) and knows nothing of what a job is: an exception
inside a job comes back from the task as a failed outcome, and a task that dies for
good becomes a failed outcome per job, never a crashed sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fbench.registry import Registry


@dataclass(frozen=True)
class Outcome:
    """What one job came back with: its result (a shard table), or the error's text;
    ``stored``: the worker wrote the shard itself (shared OUT): the shard's (size,
    mtime_ns) as written, for the commit log, and ``table`` is then None."""

    spec_json: str
    table: Any
    error: str | None = None
    stored: tuple[int, int] | None = None
    samples: Any = None  # the job's evidence, for the driver to write (``runner.results.samples``)


TaskFn = Callable[[Sequence[str], str], list[Outcome]]  # (spec JSONs, node id) -> outcomes
OnOutcome = Callable[[Outcome], None]


class ExecutorError(Exception):
    """A one-line, user-facing problem with the execution backend (e.g. unreachable)."""


class Executor(Protocol):
    name: str

    def start(self) -> None:
        """Acquire the backend (start or connect); raise ``ExecutorError`` if it cannot.
        Called before the sweep writes anything, so a bad address leaves no trace."""
        ...

    def run(self, spec_jsons: Sequence[str], on_outcome: OnOutcome) -> None: ...

    def close(self) -> None: ...


EXECUTORS: Registry[Callable[..., Executor]] = Registry("executor")

register_executor = EXECUTORS.register
