"""The ``trace`` workload: replay a recorded stream (docs/trace-format.md) instead of
generating one. ``--param workload.path=FILE``; a ``{seed}`` in the path names one file
per seed (``traces/s{seed}.jsonl``), else every seed replays the same file.

It is a workload whose horizon, unit, categories, update kinds and vocabulary live in the
data: ``bind(params, seed)`` reads the file's header and returns the workload of that
file, and ``data_identity(params, seed)`` is the file's SHA-256, which is part of a job's
identity (an edited trace reruns). fbench's own ``trace`` is registered like any
workload and reaches the harness through the same protocol an outside one would.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workloads.events import Event
from workloads.registry import Vocabulary, register_workload
from workloads.trace.format import Header, TraceError, parse


@dataclass(frozen=True)
class TraceParams:
    """``path``: the trace file (JSON lines); ``{seed}`` in it is replaced by the seed."""

    path: str = ""

    def __post_init__(self) -> None:
        if self.path.count("{") != self.path.count("{seed}") or "}" in self.path.replace(
                "{seed}", ""):
            raise ValueError(f"path may hold only {{seed}} in braces, got {self.path!r}")


def trace_path(params: TraceParams, seed: int) -> Path:
    if not params.path:
        raise ValueError("the trace workload needs a file: --param workload.path=FILE")
    return Path(params.path.replace("{seed}", str(seed)))


def file_sha256(path: Path) -> str:
    """The file's SHA-256 (read once per size and modification time: a sweep asks for it
    once per job)."""
    st = path.stat()
    return _sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class BoundTrace:
    """The workload of one trace file, as its header declares it."""

    name = "trace"
    version = "1"
    Params = TraceParams

    def __init__(self, path: Path, header: Header) -> None:
        self.path = path
        self.header = header
        self.horizon_unit = header.horizon_unit
        self.default_horizon = header.horizon
        self.categories = header.categories
        self.update_kinds = header.update_kinds
        self.description = f"the trace {path}" + (f" ({header.source})" if header.source
                                                  else "")

    def events(self, seed: int, horizon: int, params: TraceParams) -> Iterator[Event]:
        _, events = parse(self.path)
        for ev in events:
            if ev.t >= horizon:
                return
            yield ev

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(self.header.entities, self.header.phrases)

    def distinct_facts(self, params: TraceParams) -> int:
        return self.header.distinct_facts


@functools.lru_cache(maxsize=256)
def _checked(path: str, size: int, mtime_ns: int) -> Header:
    """The header of a trace whose every line has been read and checked."""
    header, events = parse(Path(path))
    for _ in events:
        pass
    return header


@register_workload
class Trace:
    """Replay a trace file (``--param workload.path=FILE``)."""

    name = "trace"
    version = "1"
    horizon_unit = "the trace's"
    default_horizon = 1
    Params = TraceParams
    description = (
        "Replays a recorded stream: one JSON-lines file in fbench's trace format "
        "(docs/trace-format.md: a header with the horizon, its unit, the query categories, "
        "the update kinds and the vocabulary, then observe, query and tick events with "
        "their truth). --param workload.path=FILE; {seed} in the path picks one file per "
        "seed. The file's SHA-256 is part of each job's identity, so an edited trace "
        "reruns; `fbench trace export` writes any workload as a trace, `fbench trace "
        "validate` checks one."
    )
    def __init__(self) -> None:
        self.categories: dict[str, str] = {}  # a trace's are in its header (bind)
        self.update_kinds: dict[str, str] = {}

    def bind(self, params: TraceParams, seed: int) -> BoundTrace:
        """The workload of the trace file for ``seed``: the whole file is checked here,
        before any job runs (once per file version), so a bad line stops the sweep that
        names it before anything is written."""
        path = trace_path(params, seed)
        if not path.is_file():
            raise TraceError(path, 0, "workload.path", "no such file")
        st = path.stat()
        return BoundTrace(path, _checked(str(path), st.st_size, st.st_mtime_ns))

    def data_identity(self, params: TraceParams, seed: int) -> str:
        return "sha256:" + file_sha256(trace_path(params, seed))

    def events(self, seed: int, horizon: int, params: TraceParams) -> Iterator[Event]:
        return self.bind(params, seed).events(seed, horizon, params)

    def vocabulary(self) -> Vocabulary:
        return Vocabulary((), ())

    def distinct_facts(self, params: TraceParams) -> int:
        return 1


__all__ = ["BoundTrace", "Header", "Trace", "TraceError", "TraceParams", "parse"]
