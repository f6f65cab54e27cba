"""A library object in a process of its own whose wall clock is the stream's clock, for
libraries that read the time in native code (Rust's ``SystemTime``, SQLite's
``CURRENT_TIMESTAMP``) and offer no way to inject it: ``ClockedObject(factory, kwargs)``,
then ``at(t)`` before each call (``fbench.clock.SimulatedClock``'s times: ``EPOCH`` plus
``t`` units, one second more per call at the same ``t``) and ``use_clock(clock)`` from
the adapter's own ``use_clock``. A library whose Python reads the time needs no process:
``fbench.clock.simulate``.

The child runs under libfaketime (``LD_PRELOAD``; Debian's ``faketime`` package, or the
library named by ``FBENCH_LIBFAKETIME``) with its time read from a file on every call
(``FAKETIME_TIMESTAMP_FILE``, ``FAKETIME_NO_CACHE=1``); monotonic clocks stay real, so
timeouts and waits behave. Its ``getrandom()`` is seeded too (``FAKERANDOM_SEED``): one
fixed sequence of bytes, so a library that draws its own entropy on one thread
(YantrikDB's HNSW levels and uuid7 record ids) draws the same in every run. Threads that
draw concurrently still split the sequence in scheduler order (aura-memory's do:
docs/incumbents.md, "Not scored yet").
Before each call the parent writes the simulated time to the file, so the library sees
exactly the clock the harness gives it, whatever the real time and whichever machine runs
the job. Calls are ``(method, args, kwargs)`` over a pipe; the object is built in the
child by ``module:factory`` with keyword arguments.
"""

from __future__ import annotations

import contextlib
import gc
import os
import socket
import subprocess
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from fbench.clock import DAYS, Clock, SimulatedClock
from fbench.errors import FbenchError

LIBFAKETIME = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
               "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
               "/usr/lib/faketime/libfaketime.so.1", "/usr/local/lib/faketime/libfaketime.so.1")

# The child's getrandom() bytes (libfaketime's FAKERANDOM_SEED, hex): one fixed stream.
ENTROPY_SEED = "0x66626E63685F7264"


def libfaketime() -> str:
    """The libfaketime to preload (one line naming the package when there is none)."""
    named = os.environ.get("FBENCH_LIBFAKETIME")
    for path in ([named] if named else list(LIBFAKETIME)):
        if Path(path).is_file():
            return path
    raise FbenchError("this memory runs its library on the simulated clock through "
                      "libfaketime, which is not installed: apt-get install faketime (or "
                      "set FBENCH_LIBFAKETIME to its libfaketime.so.1)")


class ClockedObject:
    """A proxy to ``factory(**kwargs)`` built in a child process on the stream's clock
    (``clock`` until ``use_clock`` says otherwise; its time 0 while it is built)."""

    def __init__(self, factory: str, kwargs: dict[str, Any], clock: Clock = DAYS,
                 env: dict[str, str] | None = None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="fbench-clock-")
        self._file = Path(self._dir.name) / "now"
        self.clock = SimulatedClock(clock)
        self.at(0)
        ours, theirs = socket.socketpair()
        env = {**os.environ, **(env or {}), "LD_PRELOAD": libfaketime(),
               "FAKETIME_TIMESTAMP_FILE": str(self._file), "FAKETIME_NO_CACHE": "1",
               "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKERANDOM_SEED": ENTROPY_SEED}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "fbench.faketime", str(theirs.fileno()), factory],
            pass_fds=[theirs.fileno()], env=env)
        theirs.close()
        self._conn = Connection(ours.detach())
        self._conn.send(kwargs)
        self._result()

    def use_clock(self, clock: Clock) -> None:
        """Count ``t`` on ``clock`` (the workload's) from the next ``at`` on."""
        self.clock.use_clock(clock)

    def at(self, t: float) -> datetime:
        """Set the child's clock to stream time ``t`` for the next call; that time."""
        now = self.clock.at(t)
        stamp = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        self._file.write_text(stamp + "\n")
        return now

    def _result(self) -> Any:
        try:
            ok, value = self._conn.recv()
        except EOFError:
            raise RuntimeError(f"the clocked process exited ({self._proc.wait()})") from None
        if not ok:
            raise RuntimeError(f"in the clocked process: {value}")
        return value

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        self._conn.send((method, args, kwargs))
        return self._result()

    def close(self) -> None:
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._proc.wait(timeout=30)
        self._conn.close()
        self._dir.cleanup()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown: nothing to report
            self.close()


def _serve(fd: int, factory: str) -> None:
    from fbench.plugins import import_target

    conn = Connection(fd)
    kwargs = conn.recv()
    try:
        obj = import_target(factory)[1](**kwargs)
        conn.send((True, None))
    except Exception:  # sent to the parent, which raises it
        conn.send((False, traceback.format_exc()))
        return
    while True:
        try:
            msg = conn.recv()
        except EOFError:  # the parent is gone
            return
        if msg is None:  # done: release the object (its finalizers run), then exit
            # without the interpreter's teardown (costly with torch and a library
            # loaded, and nothing the parent needs)
            del obj
            gc.collect()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        method, args, kw = msg
        try:
            conn.send((True, getattr(obj, method)(*args, **kw)))
        except Exception:
            conn.send((False, traceback.format_exc()))


if __name__ == "__main__":
    _serve(int(sys.argv[1]), sys.argv[2])
