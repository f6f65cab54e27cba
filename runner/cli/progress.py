"""A run of jobs' progress on stderr: rich's bar on a terminal; anywhere else (a log file,
a pipe) one plain line every ``FBENCH_PROGRESS_SECONDS`` (default 30) seconds, whether or
not a job has finished since, and one when the run ends; nothing when quiet."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from runner.errors import FbenchError

if TYPE_CHECKING:
    from rich.console import Console

SECONDS_VARIABLE = "FBENCH_PROGRESS_SECONDS"
DEFAULT_SECONDS = 30.0


@dataclass(frozen=True)
class Tally:
    """Where a run of jobs stands.

    ``done`` counts the jobs with a result (run now, or ``skipped``: done before) of
    ``total`` (None: not known yet); ``ran`` the job runs this run has finished, done or
    failed, reruns too (what the rate counts). ``skipped`` and ``failed`` are None for a run that
    does not count them apart."""

    done: int
    total: int | None
    ran: int = 0
    skipped: int | None = None
    failed: int | None = None


Update = Callable[[Tally], None]


def clock(seconds: float) -> str:
    """A duration as ``42s``, ``4m07s`` or ``1h02m09s``."""
    hours, rest = divmod(int(seconds + 0.5), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def rate_text(rate: float | None) -> str:
    """Jobs per second with two decimals, ``-`` before any job has finished."""
    return "-" if rate is None else f"{rate:.2f}"


def eta(tally: Tally, rate: float | None) -> str:
    """The time left for the jobs without an outcome at ``rate``; ``?`` unknown."""
    if tally.total is None:
        return "?"
    left = tally.total - tally.done - (tally.failed or 0)
    if left <= 0:
        return "0s"
    return "?" if rate is None else clock(left / rate)


def progress_line(label: str, tally: Tally, elapsed: float, rate: float | None) -> str:
    """One progress line: ``elapsed`` seconds since the run began, at ``rate`` jobs per
    second (None: none finished yet). E.g. ``sweep: 120/480 done, 100 skipped, 2 failed,
    0.26 jobs/s, 1m25s elapsed, ETA 22m57s``."""
    total = "?" if tally.total is None else str(tally.total)
    fields = [f"{label}: {tally.done}/{total} done"]
    fields += [f"{n} {name}" for name, n in (("skipped", tally.skipped),
                                             ("failed", tally.failed)) if n is not None]
    fields += [f"{rate_text(rate)} jobs/s", f"{clock(elapsed)} elapsed",
               f"ETA {eta(tally, rate)}"]
    return ", ".join(fields)


class Pace:
    """Jobs per second since the first tally (a run's first tally comes when its
    executor is up)."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.ran_before = 0

    def note(self, tally: Tally, now: float) -> None:
        if self.since is None:
            self.since, self.ran_before = now, tally.ran

    def rate(self, tally: Tally, now: float) -> float | None:
        ran = tally.ran - self.ran_before
        if self.since is None or not ran or now <= self.since:
            return None
        return ran / (now - self.since)


def interval() -> float:
    """The seconds between two progress lines: ``FBENCH_PROGRESS_SECONDS``, else 30."""
    text = os.environ.get(SECONDS_VARIABLE, "").strip()
    if not text:
        return DEFAULT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not (math.isfinite(seconds) and seconds > 0):
        raise FbenchError(f"{SECONDS_VARIABLE}={text!r} is not a positive number of seconds")
    return seconds


class Lines:
    """Writes a progress line every ``seconds`` from a daemon thread, and one more when
    the run ends without an error; each line is flushed as it is written."""

    def __init__(self, label: str, console: Console, first: Tally, seconds: float) -> None:
        self.label, self.console, self.seconds = label, console, seconds
        self.tally, self.pace = first, Pace()
        self.began = time.perf_counter()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="fbench-progress", daemon=True)

    def update(self, tally: Tally) -> None:
        with self.lock:
            self.tally = tally
            self.pace.note(tally, time.perf_counter())

    def write(self) -> None:
        now = time.perf_counter()
        with self.lock:
            line = progress_line(self.label, self.tally, now - self.began,
                                 self.pace.rate(self.tally, now))
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _tick(self) -> None:
        while not self.stopped.wait(self.seconds):
            self.write()

    def __enter__(self) -> Lines:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stopped.set()
        self.thread.join()
        if kind is None:
            self.write()


class Bar:
    """rich's progress bar, shown from the first tally on and left on screen at the end."""

    def __init__(self, label: str, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"), TextColumn("{task.fields[rate]} jobs/s"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False)
        self.task = self.bar.add_task(label, total=None, counts="", rate="-")
        self.pace = Pace()

    def update(self, tally: Tally) -> None:
        now = time.perf_counter()
        if self.pace.since is None:
            self.bar.start()
        self.pace.note(tally, now)
        counts = "  ".join(f"{name} {n}" for name, n in (("skipped", tally.skipped),
                                                         ("failed", tally.failed))
                           if n is not None)
        self.bar.update(self.task, completed=tally.done + (tally.failed or 0),
                        total=tally.total, counts=counts,
                        rate=rate_text(self.pace.rate(tally, now)))

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.bar.stop()


@contextmanager
def progress(label: str, console: Console, quiet: bool, first: Tally) -> Iterator[Update]:
    """Yields the function a run calls with each new tally. On a terminal it moves rich's
    bar; elsewhere a line goes out every ``interval()`` seconds (``first`` until the run's
    first tally) and once at the end; ``quiet`` shows nothing."""
    if quiet:
        yield lambda tally: None
        return
    shown: Bar | Lines = (Bar(label, console) if console.is_terminal
                          else Lines(label, console, first, interval()))
    with shown:
        yield shown.update
