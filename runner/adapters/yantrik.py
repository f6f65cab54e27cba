"""``yantrikdb``: the YantrikDB engine (``pip install yantrikdb``; Rust, Apache-2.0),
driven as it is, in a process whose wall clock is the stream's clock
(``fbench.faketime``: the engine reads the time itself, for decay, recency and its uuid7
record ids, and has no clock to inject).

- **Clock.** Step ``t`` is ``t`` of the workload's units after an epoch (a day is a day,
  a turn is a day over ``turns_per_day``, or a day where the stream has no days:
  ``fbench.clock.seconds_per_unit``), plus one second per event within the step, so
  records are created in stream order; each ``record`` also gets that time as
  ``created_at``.
- **Observe** → ``record_batch([{text, embedding, half_life=half_life_days × 1 day,
  metadata={"fbench_obs": id}, created_at}])``, one record at a time; its vectors are
  fbench's (``embedder``: hashing or MiniLM, computed in the job's process, whose
  MiniLM batches the job's other memories share, and sent with the text), so no model
  is ever fetched. Not ``record()``: it leaves what a record derives (entities,
  edges, term statistics) to two background materializer threads, so a query's scores
  would depend on whether they had finished; ``record_batch`` derives them before it
  returns (the same hits and scores as ``record()`` once its threads have finished).
- **Query** → ``query(query, embedding=…, top_k=k)``, its query builder over its recall:
  its own composite score (similarity, decay, recency, importance) and reinforcement.
  Not ``recall()``: its extra fallbacks (the cold tier by keyword among them) recall the
  same stream differently from run to run, with or without reinforcement; ``query()``
  recalls it the same every run.
- **Tick** → ``evict(max_active)`` when ``max_active`` > 0 (a bounded store: the
  excess moves to its cold tier, which ``query()`` does not serve: forgotten as
  "evicted"), then ``decay()`` (it reports what has decayed and deletes nothing). Not exercised:
  ``think()`` (consolidation and the rule-based conflict scan): it merges records into
  new ones that no single observation made, which recall then returns.
- **Index.** Its background compaction of new vectors into the HNSW tier is kept from
  firing (``NO_BACKGROUND_COMPACTION``): it runs when the machine's load lets it, so the
  same stream would recall differently run to run; every record is searched exactly.
- ``holds`` is what the engine still serves: a record whose consolidation status is
  ``active`` in its hot tier.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fbench.clock import Clock
from fbench.extras import import_module
from fbench.faketime import ClockedObject
from memcore import EMBEDDERS
from memcore.embed import BatchEmbedder
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "yantrikdb"
EMBEDDER_NAMES = ("hashing", "minilm")
# Its vector index keeps new records in an exact delta that a background thread
# compacts into its HNSW tier once 256 are waiting or the oldest has waited 60 real
# seconds: when that happens depends on the machine's load, and so would recall. Its own
# knobs (YANTRIKDB_DELTA_MAX, YANTRIKDB_MAX_DIRTY_AGE_SECS) put both triggers out of
# reach of a job, so every record stays in the exact delta.
NO_BACKGROUND_COMPACTION = {"YANTRIKDB_DELTA_MAX": str(10**9),
                            "YANTRIKDB_MAX_DIRTY_AGE_SECS": str(10**9)}


@dataclass(frozen=True)
class YantrikParams:
    """The engine's settings fbench varies (its defaults otherwise)."""

    half_life_days: float = 7.0
    max_active: int = 0
    embedder: str = "hashing"

    def __post_init__(self) -> None:
        if self.embedder not in EMBEDDER_NAMES:
            raise ValueError(f"{NAME} embedder {self.embedder!r} is not one of "
                             f"{', '.join(EMBEDDER_NAMES)}")
        if self.half_life_days <= 0:
            raise ValueError(f"{NAME} half_life_days must be > 0")
        if self.max_active < 0:
            raise ValueError(f"{NAME} max_active must be >= 0 (0: unbounded)")


class Engine:
    """The engine's side, built in the clocked process: plain values in and out."""

    def __init__(self, dims: int, half_life_days: float, max_active: int) -> None:
        import yantrikdb

        self.folder = tempfile.TemporaryDirectory(prefix="fbench-yantrik-")
        self.db = yantrikdb.YantrikDB(os.path.join(self.folder.name, "m.db"),
                                      embedding_dim=dims)
        self.half_life = half_life_days * 86_400.0
        self.max_active = max_active
        self.live: dict[str, int] = {}  # rid -> observation

    def record(self, obs_id: int, text: str, created_at: float,
               embedding: list[float]) -> None:
        # record_batch, not record(): see "Observe" in the module docstring
        [rid] = self.db.record_batch([{
            "text": text, "embedding": embedding,
            "half_life": self.half_life, "metadata": {"fbench_obs": obs_id},
            "created_at": created_at}])
        self.live[rid] = obs_id

    def recall(self, text: str, k: int, embedding: list[float]) -> list[tuple[int, float]]:
        found = self.db.query(query=text, embedding=embedding, top_k=k)
        return [(int(r["metadata"]["fbench_obs"]), float(r["score"])) for r in found]

    def tick(self) -> list[int]:
        """Evict (a bounded store), report decay; the observations no longer served."""
        if self.max_active:
            self.db.evict(self.max_active)
        self.db.decay()
        gone: list[int] = []
        if self.served() == len(self.live):  # the engine serves every record it was given
            return gone
        for rid in list(self.live):
            got = self.db.get(rid)  # served while active in the hot tier
            if (got is None or got["consolidation_status"] != "active"
                    or got["storage_tier"] != "hot"):
                gone.append(self.live.pop(rid))
        return gone

    def clock(self) -> float:
        """The engine process's wall clock (the simulated one)."""
        import time

        return time.time()

    def ids(self) -> list[str]:
        """The engine's record ids in stream order (uuid7: its clock and its own entropy)."""
        return list(self.live)

    def records(self) -> list[tuple[int, float, float]]:
        """(observation, created_at, half_life) of each record the engine serves, as it
        stores them (record_batch ignores item keys it does not know)."""
        got = [self.db.get(rid) for rid in self.live]
        return [(int(g["metadata"]["fbench_obs"]), float(g["created_at"]),
                 float(g["half_life"])) for g in got if g is not None]

    def derived(self, drain: bool = False) -> tuple[int, int]:
        """The entities and edges the engine has derived from its records so far; with
        ``drain``, after its ``think()`` has applied every derivation still pending
        (its consolidation, conflict, pattern and personality passes off; for the
        test that observe leaves none pending)."""
        if drain:
            self.db.think({"run_consolidation": False, "run_conflict_scan": False,
                           "run_pattern_mining": False, "run_personality": False,
                           "extract_attribute_claims": False})
        stats = self.db.stats()
        return int(stats["entities"]), int(stats["edges"])

    def served(self) -> int:
        """The engine's own count of the memories it serves: active, not archived to
        the cold tier (for the contract test)."""
        stats = self.db.stats()
        return int(stats["active_memories"]) - int(stats["archived_memories"])


class YantrikAdapter:
    """One job's engine, in its clocked process, behind the harness's interface."""

    def __init__(self, p: YantrikParams) -> None:
        self.p = p
        self.embedder = EMBEDDERS[p.embedder]()
        self.engine = ClockedObject(f"{__name__}:Engine", {
            "dims": int(self.embedder.dim), "half_life_days": p.half_life_days,
            "max_active": p.max_active}, env=NO_BACKGROUND_COMPACTION)
        self._tokens_of: dict[int, int] = {}
        self._counts: dict[str, int] = {}

    def use_clock(self, clock: Clock) -> None:
        self.engine.use_clock(clock)

    def prefetch(self, texts: list[str]) -> None:
        """A batching embedder (MiniLM) sees each block first; the hashing one does not
        batch."""
        if isinstance(self.embedder, BatchEmbedder):
            self.embedder.prefetch(texts)

    def _vector(self, text: str) -> list[float]:
        return list(self.embedder.embed(text).tolist())

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        when = self.engine.at(t)
        self.engine.call("record", obs_id, text, when.timestamp(), self._vector(text))
        self._tokens_of[obs_id] = whitespace_tokens(text)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self.engine.at(t)
        return [Hit(obs, score)
                for obs, score in self.engine.call("recall", text, k, self._vector(text))]

    def tick(self, t: int) -> None:
        self.engine.at(t)
        gone = self.engine.call("tick")
        for obs in gone:
            del self._tokens_of[obs]
        if gone:
            self._counts["evicted"] = self._counts.get("evicted", 0) + len(gone)

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._tokens_of

    def size(self) -> int:
        return len(self._tokens_of)

    def tokens(self) -> int:
        return sum(self._tokens_of.values())

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)

    def stored(self) -> int:
        """The engine's own count of the memories it serves (for the contract test)."""
        return int(self.engine.call("served"))


def build(policy_params: YantrikParams, store_params: Any, vocab: Vocabulary) -> Any:
    import_module("yantrikdb", f"policy {NAME!r}")
    try:
        return YantrikAdapter(policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="the YantrikDB engine (0.23) as it is, on the simulated clock: per-record "
                "half-life decay, evict(max_active) to its cold tier for a bounded store, "
                "its composite recall (query)",
    Params=YantrikParams, StoreParams=None, build=build,
    embedder=lambda policy, store: str(policy.embedder), library=("yantrikdb",),
    imports=("yantrikdb",),
    forgets=lambda p: (f"evict({p.max_active}) to its cold tier daily" if p.max_active
                       else f"none (half-life {p.half_life_days:g} days ranks only)")))
