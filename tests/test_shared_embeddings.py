"""The process-wide embedding caches: MiniLM's batches (``memcore.minilm``) and a
library's own embedder's texts (``runner.adapters.embed_cache``). A job gets the very
vectors it would compute in a fresh process, whatever other jobs ran there before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from runner.adapters.embed_cache import CachedEmbed

LONG = ("the quarterly budget meeting was moved to tuesday afternoon after a long review "
        "of every line item")
BLOCKS = [["alice lives in paris", "bob likes tea"],
          ["where does alice live", "alice lives in paris", "carol is 31", LONG]]
OTHER_JOB = [["alice lives in paris", LONG], ["bob likes tea"], ["carol is 31"]]

VECTORS = """
import json, sys
from memcore.minilm import MiniLMEmbedder
def vectors(blocks):
    e = MiniLMEmbedder()
    for block in blocks:
        e.prefetch(block)
    return {t: e.embed(t).tobytes().hex() for block in blocks for t in block}
"""


@pytest.mark.minilm
def test_minilm_vectors_after_other_jobs_are_a_fresh_process_s() -> None:
    """Prevents sharing a vector a job would not compute itself: a text's MiniLM vector
    depends on the batch it is encoded in (padding), so after another job encoded the
    same texts in other batches, a job's vectors still equal a fresh process's, bit for
    bit."""
    scope: dict[str, object] = {}
    exec(VECTORS, scope)
    vectors = scope["vectors"]
    vectors(OTHER_JOB)  # type: ignore[operator]
    warm = vectors(BLOCKS)  # type: ignore[operator]
    code = VECTORS + f"print(json.dumps(vectors({BLOCKS!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert warm == json.loads(out.stdout)
    assert len({warm[t] for t in warm}) == 5


def test_a_library_embedder_is_called_once_per_text_in_the_process() -> None:
    """Prevents a library's embedder re-encoding the texts every job repeats, or two
    encoders sharing vectors: jobs of one named encoder share its cache (same values),
    a differently named one has its own."""
    calls: list[str] = []

    def encode(text: str, *args: object) -> list[float]:
        calls.append(text)
        return [float(len(text)), 0.5]

    first = CachedEmbed(encode, "test encoder a")
    assert first("alice") == [5.0, 0.5] and first.embed("alice") == [5.0, 0.5]
    second = CachedEmbed(encode, "test encoder a")  # the next job
    assert second("alice") == [5.0, 0.5] and calls == ["alice"]
    assert CachedEmbed(encode, "test encoder b")("alice") == [5.0, 0.5]
    assert calls == ["alice", "alice"]
    assert second("alice", "search") == [5.0, 0.5] and len(calls) == 3


FRESH_LIBRARIES = """
import json, os
os.environ["HF_HUB_OFFLINE"] = "1"
from memcore.minilm import local_model
from memcore.torch_threads import one_torch_thread
from lethe.integrations.sentence_transformers_embedder import SentenceTransformersEmbedder
from mem0.configs.embeddings.base import BaseEmbedderConfig
from mem0.embeddings.huggingface import HuggingFaceEmbedding
texts = json.loads(os.environ["TEXTS"])
lethe = SentenceTransformersEmbedder(local_model())
mem0 = HuggingFaceEmbedding(BaseEmbedderConfig(model=local_model()))
with one_torch_thread():
    print(json.dumps({"lethe": [lethe.embed(t) for t in texts],
                      "mem0": [mem0.embed(t) for t in texts]}))
"""


@pytest.mark.incumbents
def test_mem0_and_lethe_agent_share_forward_passes_and_keep_their_vectors() -> None:
    """Prevents the two one-text-at-a-time libraries from paying twice for a text, or
    from getting any vector other than their own: lethe-agent's and mem0's embedders, as
    their adapters build them, run on the process's one model; a text lethe-agent encoded
    costs mem0 no forward pass, and each library's vectors equal its own embedder's in a
    fresh process (lethe-agent normalises again, mem0 does not), bit for bit."""
    import os

    from memcore.minilm import shared_model
    from runner.adapters import lethe_agent, mem0
    from runner.adapters.lethe_agent import LetheAgentParams

    texts = [f"{LONG} memo check {i}" for i in range(3)] + ["memo check short"]
    lethe = lethe_agent.library_embedder(None, LetheAgentParams(embedder="minilm"))
    job = mem0.build(mem0.Mem0Params(), None, None)  # type: ignore[arg-type]
    memo = shared_model().forward
    before = memo.runs
    got_lethe = [lethe.embed(t) for t in texts]
    assert memo.runs == before + len(texts)
    got_mem0 = [job.memory.embedding_model.embed(t) for t in texts]
    assert memo.runs == before + len(texts)  # every forward pass served from memory
    env = {**os.environ, "TEXTS": json.dumps(texts)}
    out = subprocess.run([sys.executable, "-c", FRESH_LIBRARIES], capture_output=True,
                         text=True, check=True, env=env)
    fresh = json.loads(out.stdout)
    assert got_lethe == fresh["lethe"] and got_mem0 == fresh["mem0"]
