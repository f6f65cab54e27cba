"""A process's recent streams: the jobs of one stream, whatever their memory, share its
events.

A sweep runs every policy on each (workload, seed) stream, and a workload's events are
a function of its job's workload, version, code (a plugin's, a trace's data), seed,
horizon and workload parameters only (the workload contract, which ``fbench check``
tests): so the jobs of a stream that one process runs one after another can read the
events the first of them generated. The driver orders a sweep's jobs stream by stream
(``runner.sweep.grid.Subset.run_order``) for this.

``events`` hands a job its stream (``blocks``: in lists of events): the kept events of
its stream, or a fresh generation that is kept once it has been read to the end (the
last ``STREAMS_KEPT`` streams of at most ``EVENTS_KEPT`` events each; a longer one is
never held whole). Events are frozen: a job cannot change what the next one reads.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from runner.spec.jobspec import JobSpec

STREAMS_KEPT = 3
EVENTS_KEPT = 200_000
BLOCK = 256  # ``events`` reads its stream in blocks of this many

_kept: OrderedDict[tuple[Any, ...], list[Any]] = OrderedDict()


def stream_key(spec: JobSpec) -> tuple[Any, ...]:
    """What a job's stream depends on: everything of the spec but its memory's."""
    return (spec.workload, spec.workload_version, spec.seed, spec.horizon,
            tuple(p for p in spec.params if p[0].startswith("workload.")),
            tuple(c for c in spec.code if c[0] != "memory"))


def events(spec: JobSpec, generate: Iterable[Any]) -> Iterator[Any]:
    """The events of ``spec``'s stream: kept ones, else ``generate`` (an iterable of
    the stream, read lazily), kept once it is read to its end."""
    return itertools.chain.from_iterable(blocks(spec, generate, BLOCK))


def blocks(spec: JobSpec, generate: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``events`` in lists of ``size`` events, the last one shorter (no layer of
    Python per event between the stream and the job)."""
    key = stream_key(spec)
    kept = _kept.get(key)
    if kept is not None:
        _kept.move_to_end(key)
        return (kept[at:at + size] for at in range(0, len(kept), size))
    return _keeping(key, iter(generate), size)


def _keeping(key: tuple[Any, ...], generate: Iterator[Any], size: int
             ) -> Iterator[list[Any]]:
    held: list[Any] | None = []
    while block := list(itertools.islice(generate, size)):
        if held is not None:
            held += block
            if len(held) > EVENTS_KEPT:
                held = None
        yield block
    if held is not None:
        _kept[key] = held
        while len(_kept) > STREAMS_KEPT:
            _kept.popitem(last=False)


def clear() -> None:
    """Forget every kept stream (a benchmark that times generation)."""
    _kept.clear()
