"""The executor interface and registry.

An executor runs jobs given as canonical spec JSON and calls ``on_outcome`` in
the driver, once per job, as results arrive (in any order). The job function is
``runner.shard.execute_batch``; an exception inside a job comes back as a failed
outcome, never as a crashed sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from runner.shard import Outcome

OnOutcome = Callable[["Outcome"], None]


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


EXECUTORS: dict[str, Callable[..., Executor]] = {}


def register_executor(name: str) -> Callable[[Callable[..., Executor]], Callable[..., Executor]]:
    def deco(factory: Callable[..., Executor]) -> Callable[..., Executor]:
        if name in EXECUTORS:
            raise ValueError(f"executor {name!r} is registered twice")
        EXECUTORS[name] = factory
        return factory

    return deco
