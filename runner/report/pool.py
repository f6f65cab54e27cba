"""A report's figures drawn on every core: this process and spawned helper processes
share them.

A report's figures are independent (each a function of the tables and its own file),
and matplotlib draws one on one core, so most of a report's time is its figures.
``share`` hands them out from both
ends of the list, helpers from the front and this process from the back, so neither
waits on the other; a helper's start-up (a fresh interpreter importing matplotlib, about
as long as two figures) is paid only when there are enough figures
(``MIN_PER_HELPER`` each). Helpers are spawned, never forked: a sweep's driver holds
Ray's threads; their start-up arguments should be small (file names, not tables: a
spawn writes them down a pipe the helper must read). A helper that dies (its start-up
failed) leaves its tasks to this process. Each result comes back in its task's place,
so the output does not depend on who drew what (``tests/test_aggregate_report.py``
checks the files are the same bytes either way).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_PER_HELPER = 6  # figures a helper must have to be worth its start-up


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def helpers_for(tasks: int) -> int:
    """How many helper processes ``tasks`` figures get: one per other core, each with at
    least ``MIN_PER_HELPER`` of them."""
    return max(0, min(cores() - 1, tasks // MIN_PER_HELPER - 1))


def share(tasks: Sequence[T], here: Callable[[T], R], there: Callable[[T], R],
          start: Callable[..., None], args: tuple[Any, ...], helpers: int) -> list[R]:
    """``here(task)`` for every task, in task order, some of them computed as
    ``there(task)`` by ``helpers`` spawned processes, each started with ``start(*args)``
    (module-level functions: a helper imports them). ``helpers`` 0: all here."""
    if helpers <= 0 or len(tasks) < 2:
        return [here(task) for task in tasks]
    out: dict[int, R] = {}
    front, back = 0, len(tasks)
    running: dict[Future[R], int] = {}
    try:
        with ProcessPoolExecutor(helpers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=start, initargs=args) as pool:
            while front < back:
                while front < back and len(running) < 2 * helpers:  # one queued behind each
                    running[pool.submit(there, tasks[front])] = front
                    front += 1
                if front < back:
                    back -= 1
                    out[back] = here(tasks[back])
                for done in [f for f in running if f.done()]:
                    out[running.pop(done)] = done.result()
            for future, i in running.items():
                out[i] = future.result()
    except BrokenProcessPool:  # a helper died: what it had not done is done here
        pass
    return [out[i] if i in out else here(task) for i, task in enumerate(tasks)]
