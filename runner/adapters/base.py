"""The public interface between the harness and any memory under test.

A memory is anything implementing ``MemoryAdapter``: ``observe`` / ``query`` / ``tick``
plus the bookkeeping the metrics read (``holds``, ``size``, ``tokens``,
``forgotten``). Hits carry the opaque observation id the harness passed in. Optional
capabilities are their own small Protocols, checked with ``isinstance``:

- ``Prefetches``: sees each block of upcoming texts first (a batching embedder);
- ``AnswersInBatches``: answers the questions of one time in one call;
- ``AnswersAsIds``: gives those answers as one matrix of observation ids (the harness
  judges them in array operations, with no ``Hit`` per answer), and a lone question's
  as a one-row matrix;
- ``IgnoresTicks``: says a tick changes nothing in it (the harness then skips them);
- ``LinksSlots``: tells which slot its extractor gave an observation (diagnostics);
- ``TakesTruthHints``: is told each observation's true slot (harness-side
  extractors only: memcore's memory never sees ground truth);
- ``Foresees``: reads the stream ahead (the oracle only);
- ``UsesClock``: is given the workload's clock (``fbench.clock.Clock``: what ``t``
  counts, turns or days, and the turns a day holds where defined) before the first
  event; a library that reads the wall clock runs on it with ``fbench.clock.simulate``;
- ``ReportsDeletions``: says what it removed, why, and with what score (for a job's
  evidence, ``runner.job.samples``; without it the harness records only the removals it
  sees when a slot is asked).

A plugin (an entry point in ``fbench.memories`` or ``fbench.policies``, or a
``module:attr`` name) is one of: a ``MemoryFactory`` (a class or callable with an
optional ``Params`` frozen dataclass, called with its parameters), a memcore
``Policy`` subclass (run inside the reference store: fbench's retrieval, extractors
and embedders), or a ``MemoryKind``. ``MEMORIES`` tells them apart by type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from fbench.clock import Clock
from fbench.registry import Registry
from memcore.policies import POLICIES, NoParams, Policy
from runner.spec.params import OWN

if TYPE_CHECKING:  # `fbench list policies` starts without the workloads
    from workloads import Vocabulary


def store_embedder(policy_params: Any, store_params: Any) -> str:
    """The reference store's embedder: its ``store.embedder`` parameter."""
    return str(store_params.embedder)


@dataclass(frozen=True)
class Hit:
    """A retrieved item, carrying the observation id the harness passed in."""

    obs_id: int
    score: float


class HasObsId(Protocol):
    """A hit of any kind: the harness's ``Hit`` or memcore's."""

    @property
    def obs_id(self) -> int: ...


def hit_ids(answers: Sequence[Sequence[HasObsId]]) -> np.ndarray:
    """The observation ids of each question's hits as one int64 matrix, a row per
    question, best first, -1 past its last hit (what ``AnswersAsIds`` gives)."""
    ids = np.full((len(answers), max(map(len, answers), default=0)), -1, dtype=np.int64)
    for i, hits in enumerate(answers):
        ids[i, : len(hits)] = [h.obs_id for h in hits]
    return ids


@runtime_checkable
class MemoryAdapter(Protocol):
    """What every memory under test implements."""

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        """Store an observation (``meta``: session, source, tags; never its truth)."""
        ...

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        """At most ``k`` distinct observations it holds, best first."""
        ...

    def tick(self, t: int) -> None:
        """A day boundary: consolidate, decay, prune."""
        ...

    def holds(self, obs_id: int) -> bool:
        """Whether the observation is still stored (not deleted)."""
        ...

    def size(self) -> int:
        """Live entries: as many as observations it ``holds``."""
        ...

    def tokens(self) -> int:
        """Whitespace tokens of its live entries."""
        ...

    def forgotten(self) -> dict[str, int]:
        """Removals so far, per reason."""
        ...


ADAPTER_METHODS = ("observe", "query", "tick", "holds", "size", "tokens", "forgotten")


@runtime_checkable
class Prefetches(Protocol):
    def prefetch(self, texts: list[str]) -> None:
        """The texts of the next block of events, before they arrive (batch them)."""
        ...


@runtime_checkable
class AnswersInBatches(Protocol):
    def query_many(self, t: int, texts: list[str], k: int) -> list[list[Hit]]:
        """What ``[query(t, text, k) for text in texts]`` returns, leaving the memory as
        those calls would: the questions of one time with nothing observed between them
        (answered in one batch where one answer cannot change the next)."""
        ...


@runtime_checkable
class AnswersAsIds(Protocol):
    def query_ids(self, t: int, texts: list[str], k: int) -> np.ndarray:
        """The observation ids of ``query_many(t, texts, k)``'s hits as one int64 matrix,
        a row per text, best first, -1 past a question's last hit; leaving the memory as
        ``query_many`` would. The harness asks a lone question this way too (one text:
        ``query``'s hits)."""
        ...


@runtime_checkable
class IgnoresTicks(Protocol):
    def ignores_ticks(self) -> bool:
        """True when ``tick`` changes nothing, now or later (asked once a job, after the
        memory is built): the harness then does not call it."""
        ...


@runtime_checkable
class LinksSlots(Protocol):
    def linked_slot(self, obs_id: int) -> str | None:
        """The slot the memory's extractor gave a stored observation; ``None`` if none."""
        ...


@runtime_checkable
class TakesTruthHints(Protocol):
    def hint_truth(self, slot: str | None, seed: int, obs_id: int) -> None:
        """The true slot of the observation about to be observed (harness-side
        extractors only)."""
        ...


@dataclass(frozen=True)
class Deletion:
    """One removal a memory reports: the observation removed, why (a short word of the
    memory's own: ``capacity``, ``decay``, ``superseded``...), and the score its policy
    gave the entry when it removed it, where it has one."""

    obs_id: int
    reason: str
    score: float | None = None


@runtime_checkable
class ReportsDeletions(Protocol):
    def deletions(self) -> list[Deletion]:
        """The removals since the last call, oldest first. The harness calls it only
        while it records a job's evidence: once before the first event (the memory may
        start keeping them then), then after each event (a removal is dated by the
        event it followed)."""
        ...


@runtime_checkable
class UsesClock(Protocol):
    def use_clock(self, clock: Clock) -> None:
        """The workload's clock, once, before the first event: ``t`` in ``observe``,
        ``query`` and ``tick`` counts its ``unit``."""
        ...


@runtime_checkable
class Foresees(Protocol):
    def foresee(self, events: Iterable[Any]) -> None:
        """The whole stream, ahead of the run (the oracle only)."""
        ...


class MemoryFactory(Protocol):
    """A plugin memory: ``factory(params)`` (or ``factory()`` without ``Params``) makes
    one job's ``MemoryAdapter``. ``Params`` is a frozen dataclass (the ``policy.*``
    parameters, defaults and validation in ``__post_init__``); ``description`` a
    line for ``fbench list policies``; ``family`` a label (default ``plugin``);
    ``embedder`` the name of the embedder it ranks with, if one of fbench's (default
    ``own``: its own retrieval), which the report pairs it on; ``library`` the
    distributions it drives (their versions go into every shard); ``forgetting`` its
    forgetting rule in words (family ``incumbent``: the report's incumbents table)."""

    Params: ClassVar[type]
    description: ClassVar[str]
    family: ClassVar[str]
    embedder: ClassVar[str]  # the embedder it ranks with (default "own": its own retrieval)
    library: ClassVar[tuple[str, ...]]
    forgetting: ClassVar[str]

    def __call__(self, params: Any) -> MemoryAdapter: ...


@dataclass(frozen=True)
class MemoryKind:
    """A registered memory under test: its parameters and how to build it.

    ``Params`` is the ``policy.*`` namespace; ``StoreParams`` the ``store.*``
    namespace, or ``None`` when the memory has no reference store. ``embedder`` names
    the embedder a job of it ranks with, given its (policy, store) parameters: a
    first-class axis of every memory, written to each shard, on which the report pairs
    a memory with its baseline (``OWN``: the memory's own retrieval, no shared embedder).
    ``library``: the distributions it drives (their versions go into every shard);
    ``forgets``: its forgetting rule in words, given its ``policy.*`` parameters (the
    report's incumbents table); ``imports``: the modules a job of it imports from an
    optional extra, checked before any job runs (``fbench.extras``).
    """

    name: str
    family: str
    description: str
    Params: type
    StoreParams: type | None
    build: Callable[[Any, Any, Vocabulary], MemoryAdapter]
    embedder: Callable[[Any, Any], str] = field(default=lambda policy, store: OWN)
    library: tuple[str, ...] = ()
    forgets: Callable[[Any], str] = field(default=lambda policy: "")
    imports: tuple[str, ...] = ()


def reference_kind(name: str, policy: type[Policy]) -> MemoryKind:
    """The reference store running ``policy`` (its retrieval, extractors, embedders)."""
    from memcore import StoreParams
    from runner.adapters.reference import build_reference

    return MemoryKind(name, "reference", policy.description, policy.Params, StoreParams,
                      build_reference(policy), store_embedder)


def factory_kind(name: str, factory: Any) -> MemoryKind:
    """A ``MemoryFactory`` as a ``MemoryKind`` (its optional attributes are the ones
    ``MemoryFactory`` declares)."""
    params = getattr(factory, "Params", None)
    doc = (factory.__doc__ or "").strip().splitlines()
    description = getattr(factory, "description", doc[0] if doc else name)

    def build(policy_params: Any, store_params: Any, vocab: Vocabulary) -> MemoryAdapter:
        memory = factory(policy_params) if params is not None else factory()
        if not isinstance(memory, MemoryAdapter):
            missing = [m for m in ADAPTER_METHODS if not callable(getattr(memory, m, None))]
            raise TypeError(f"{name} made {type(memory).__name__}, which lacks "
                            f"{', '.join(missing)} (runner.adapters.MemoryAdapter)")
        return memory

    embedder = str(getattr(factory, "embedder", OWN))
    rule = str(getattr(factory, "forgetting", ""))
    return MemoryKind(name, getattr(factory, "family", "plugin"), description,
                      params or NoParams, None, build, lambda policy, store: embedder,
                      tuple(getattr(factory, "library", ())), lambda policy: rule)


def as_memory(obj: Any, name: str) -> MemoryKind:
    """A plugin object as a memory, told apart by type (TypeError if it is none)."""
    if isinstance(obj, MemoryKind):
        return replace(obj, name=name)
    if isinstance(obj, type) and issubclass(obj, Policy):
        return reference_kind(name, obj)
    if isinstance(obj, type):  # a class: it must be the adapter itself
        missing = [m for m in ADAPTER_METHODS if not callable(getattr(obj, m, None))]
        if missing:
            raise TypeError(f"{obj.__name__} lacks {', '.join(missing)} of "
                            "runner.adapters.MemoryAdapter (and is no memcore Policy)")
        return factory_kind(name, obj)
    if callable(obj):  # a factory function: checked when it builds
        return factory_kind(name, obj)
    raise TypeError(f"{obj!r} is neither a memory (a class or factory making a "
                    "MemoryAdapter), a memcore Policy subclass, nor a MemoryKind")


def _derive(name: str) -> MemoryKind | None:
    """The reference memory of a policy name (built in, derived, or installed; a
    ``pinned.`` wrapper of a ``module:attr`` policy too: a bare ``module:attr`` is
    resolved as a plugin instead, which may be either kind)."""
    if (":" in name and not name.startswith("pinned.")) or name not in POLICIES:
        return None
    return reference_kind(name, POLICIES[name])


MEMORIES: Registry[MemoryKind] = Registry(
    "policy", group="fbench.memories", adapt=as_memory, derive=_derive,
    derived_names=POLICIES.names, derived_origin=POLICIES.origin)


def register_memory(kind: MemoryKind) -> MemoryKind:
    return MEMORIES.add(kind.name, kind)
