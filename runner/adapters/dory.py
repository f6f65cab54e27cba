"""``dory``: the dory-memory library (``pip install dory-memory``, module ``dory``), its
``DoryMemory`` driven as it is, on the simulated clock.

- **Offline.** No extraction model (``extract_model=None``: ``observe`` only, no LLM),
  and its vector path stays off (it needs a running Ollama; the adapter refuses to
  build if ``dory.vector.available()``): retrieval is its FTS5 BM25 seeds, spreading
  activation over its graph and its supplementary FTS sweep. Each job has its own
  SQLite file in a temporary folder, closed and removed with the job.
- **Clock.** Dory reads ``datetime.now(timezone.utc)`` in ``dory.schema`` (every
  timestamp), ``dory.graph`` (salience recency), ``dory.consolidation`` (edge decay) and
  ``dory.pipeline.decayer`` (zone scores): ``fbench.clock.simulate`` runs those modules
  on the stream's clock, set before every call (a second per call within a step). Its
  ids are ``uuid4()[:8]``; the adapter draws them from a generator seeded per job.
- **Observe** → ``observe(text, node_type="CONCEPT", tags=<meta tags>)`` (its default
  type; it auto-links the node to FTS matches and saves); the observation id is kept in
  a map from dory's node id.
- **Query** → ``query(text)``, its one retrieval path (it returns a context string). The
  observation ids are taken from its own API: the ``activated`` map its query hands to
  its serializer (``dory.session._serialize_structured``, wrapped to see its
  argument), ranked and filtered exactly as that serializer renders them (current
  values first, then context, by activation; only active nodes above its salience
  floor), the first ``k`` returned with their activation as the score. Querying
  activates the seeds and what the activation reaches (its reinforcement).
- **Consolidate** → ``consolidate()`` at each ``Tick`` (a stream without Ticks:
  every ``consolidate_every`` steps): edge decay and pruning, core promotion, its
  ``Decayer`` (active → archived → expired zones by recency, frequency and salience;
  only nodes activated at least twice) and its ``Reflector`` (exact-duplicate merge,
  Jaccard supersession that archives the older node). Archived and expired nodes are
  never returned by ``query``, so they are forgotten: reasons ``superseded``,
  ``archived``, ``expired`` and ``merged`` (a hard-deleted duplicate); a node the
  decayer restores to active is held again.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import types
import uuid
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fbench.clock import DAYS, Clock, simulate
from fbench.extras import import_module
from memcore.store import parse_tags
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "dory"
NODE_TYPES = ("CONCEPT", "EVENT", "ENTITY", "BELIEF")


@dataclass(frozen=True)
class DoryParams:
    """Dory's defaults (observe as CONCEPT, its DecayConfig); how it is driven."""

    node_type: str = "CONCEPT"
    consolidate_every: int = 1

    def __post_init__(self) -> None:
        if self.node_type not in NODE_TYPES:
            raise ValueError(f"{NAME} node_type {self.node_type!r} is not one of "
                             f"{', '.join(NODE_TYPES)}")
        if self.consolidate_every < 0:
            raise ValueError(f"consolidate_every must be >= 0 (0: only at Ticks), "
                             f"got {self.consolidate_every}")


_capture: list[Any] = []  # the adapter whose query is running (one job per process)


def _wrap_serializer(session: Any) -> None:
    """See the ``activated`` map ``dory.session.query`` serializes (once a process)."""
    original = session._serialize_structured
    if getattr(original, "fbench_wrapped", False):
        return

    def serialize(activated: dict[str, float], graph: Any, max_nodes: int = 50,
                  reference_date: str = "") -> Any:
        if _capture:
            _capture[-1].ranked = _rendered(activated, graph, session, max_nodes)
        return original(activated, graph, max_nodes=max_nodes, reference_date=reference_date)

    serialize.fbench_wrapped = True  # type: ignore[attr-defined]
    session._serialize_structured = serialize


def _rendered(activated: dict[str, float], graph: Any, session: Any, max_nodes: int
              ) -> list[tuple[str, float]]:
    """The activated nodes in the order ``_serialize_structured`` renders them (for
    the node types the adapter stores: current values, then events, then context)."""
    from dory.schema import EdgeType

    floor = session.act.SALIENCE_FLOOR
    superseding = {e.source_id for e in graph.all_edges() if e.type == EdgeType.SUPERSEDES}

    def salience(nid: str) -> float:
        node = graph.get_node(nid)
        return node.salience if node else 0

    ranked = sorted(activated.items(), key=lambda kv: (kv[1], salience(kv[0])),
                    reverse=True)[:max_nodes]
    current, events, context = [], [], []
    for nid, level in ranked:
        node = graph.get_node(nid)
        if not node or node.zone != "active":
            continue
        if node.activation_count > 0 and node.salience < floor:
            continue
        if node.type.value == "EVENT":
            events.append((nid, level))
        elif nid in superseding:
            current.append((nid, level))
        else:
            context.append((nid, level))
    events.sort(key=lambda x: (graph.get_node(x[0]).metadata.get("event_date")
                               or graph.get_node(x[0]).metadata.get("start_date")
                               or graph.get_node(x[0]).created_at or ""))
    current.sort(key=lambda x: -x[1])
    context.sort(key=lambda x: -x[1])
    return current + events + context


class DoryAdapter:
    """One job's ``DoryMemory`` behind the harness's interface."""

    def __init__(self, dory: Any, p: DoryParams) -> None:
        from dory import consolidation, graph, schema, session, vector
        from dory.pipeline import decayer

        if vector.available():
            raise FbenchError(f"policy {NAME!r}: dory's vector path is available "
                              "(sqlite-vec and ollama), which would call Ollama")
        self.p = p
        self._schema = schema
        self._time = simulate(schema, DAYS, graph, consolidation, decayer)
        self._time.at(0)
        rng = random.Random(0)  # the same ids every run
        schema.uuid = types.SimpleNamespace(
            uuid4=lambda: uuid.UUID(int=rng.getrandbits(128), version=4))
        _wrap_serializer(session)
        self._dir = tempfile.mkdtemp(prefix="fbench-dory-")
        self._path = Path(self._dir) / "dory.db"
        weakref.finalize(self, _cleanup, dory, self._path, self._dir)
        self.memory = dory.DoryMemory(db_path=self._path)
        self.graph = self.memory.graph
        self.ranked: list[tuple[str, float]] = []
        self._step = -1
        self._ticked = False
        self._obs_of: dict[str, int] = {}   # dory node id -> observation id
        self._id_of: dict[int, str] = {}    # observation id -> dory node id
        self._live: set[int] = set()
        self._tokens_of: dict[int, int] = {}
        self._tokens = 0
        self._counts: dict[str, int] = {}

    # the simulated clock -------------------------------------------------------------
    def use_clock(self, clock: Clock) -> None:
        self._time.use_clock(clock)

    def _advance(self, t: int) -> None:
        if t != self._step:
            if (not self._ticked and self.p.consolidate_every and self._step >= 0
                    and t // self.p.consolidate_every > self._step // self.p.consolidate_every):
                self._consolidate(t)
            self._step = t
        self._time.at(t)

    def _consolidate(self, t: int) -> None:
        self._time.at(t)
        self.memory.consolidate()
        superseded = {e.target_id for e in self.graph.all_edges()
                      if e.type.value == "SUPERSEDES"}
        for obs in sorted(self._live):
            node = self.graph.get_node(self._id_of[obs])
            if node is None:
                reason = "merged"
            elif node.zone == "active":
                continue
            elif node.id in superseded and node.superseded_at:
                reason = "superseded"
            else:
                reason = str(node.zone)
            self._live.discard(obs)
            self._tokens -= self._tokens_of[obs]
            self._counts[reason] = self._counts.get(reason, 0) + 1
        for obs, nid in self._id_of.items():  # the decayer restores nodes to active
            if obs not in self._live:
                node = self.graph.get_node(nid)
                if node is not None and node.zone == "active":
                    self._live.add(obs)
                    self._tokens += self._tokens_of[obs]

    # the adapter interface -----------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self._advance(t)
        nid = self.memory.observe(text, node_type=self.p.node_type, tags=parse_tags(meta))
        self._obs_of[nid] = obs_id
        self._id_of[obs_id] = nid
        self._live.add(obs_id)
        n = whitespace_tokens(self.graph.get_node(nid).content)
        self._tokens_of[obs_id] = n
        self._tokens += n

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._advance(t)
        self.ranked = []
        _capture.append(self)
        try:
            self.memory.query(text)
        finally:
            _capture.remove(self)
        hits: list[Hit] = []
        for nid, level in self.ranked:
            obs = self._obs_of.get(nid)
            if obs is not None:
                hits.append(Hit(obs, float(level)))
                if len(hits) == k:
                    break
        return hits

    def tick(self, t: int) -> None:
        self._ticked = True
        self._advance(t)
        self._consolidate(t)

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._live

    def size(self) -> int:
        return len(self._live)

    def stored(self) -> int:
        """Dory's own count of active nodes (``graph.stats()``)."""
        return int(self.graph.stats()["active"])

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)


def _cleanup(dory: Any, path: Path, folder: str) -> None:
    dory.store.close_connection(path)
    shutil.rmtree(folder, ignore_errors=True)


def build(policy_params: DoryParams, store_params: Any, vocab: Vocabulary) -> Any:
    dory = import_module("dory", f"policy {NAME!r}")
    try:
        return DoryAdapter(dory, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="the dory-memory library (1.2.1) as it is: FTS5 + spreading-activation "
                "query, consolidate() (decay zones, duplicate merge, Jaccard "
                "supersession), on the simulated clock",
    Params=DoryParams, StoreParams=None, build=build, library=("dory-memory",),
    imports=("dory",),
    forgets=lambda p: "decay zones (archived/expired hidden), heuristic supersession, "
                      "duplicate merge"))
