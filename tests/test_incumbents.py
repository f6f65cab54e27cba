"""The incumbent adapters (lethe-agent, mem0) and the MiniLM embedder: offline, driven
as documented, failing in one line when their library is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fbench.clock import EPOCH, Clock
from memcore.minilm import MiniLMEmbedder
from runner.adapters import Prefetches
from runner.errors import FbenchError
from runner.job.run import run_job
from runner.spec.resolve import make_spec, materialize

pytestmark = pytest.mark.incumbents


def build(policy: str, workload: str = "contradiction", **params: object):  # type: ignore[no-untyped-def]
    spec = make_spec(workload, policy, 0, horizon=50, params=list(params.items()))
    r = materialize(spec)
    return r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())


def offline_prefix() -> list[str]:
    """A command prefix with no network at all (a fresh network namespace) when the
    machine allows it; otherwise every proxy points at a closed port."""
    if shutil.which("unshare") and subprocess.run(
            ["unshare", "-rn", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-rn"]
    return []


def offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "MEM0_TELEMETRY")}
    dead = "http://127.0.0.1:9"
    env.update(HTTP_PROXY=dead, HTTPS_PROXY=dead, http_proxy=dead, https_proxy=dead,
               NO_PROXY="", no_proxy="")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--policy", "mem0"],
    ["--policy", "lethe_agent"],
    ["--policy", "lethe_agent", "--param", "embedder=minilm"],
    ["--policy", "keep_all", "--param", "embedder=minilm"],
    ["--policy", "langgraph_store", "--param", "embedder=minilm"],
    ["--policy", "inspeximus", "--param", "key_by=teacher"],
    ["--policy", "memware"],
    ["--policy", "cognitive_memory"],
    ["--policy", "dory"],
    ["--policy", "isotope_zero"],
], ids=lambda a: " ".join(a[1:]))
@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
def test_runs_offline(args: list[str], workload: str) -> None:
    """Prevents an adapter or the MiniLM embedder reaching for the network (a hub
    download, telemetry): each runs with no network and no offline switch set."""
    horizon = "300" if workload == "contradiction" else "20"
    out = subprocess.run(
        [*offline_prefix(), sys.executable, "-m", "runner.cli", "run", "--workload",
         workload, *args, "--seed", "0", "--horizon", horizon, "--json"],
        capture_output=True, text=True, env=offline_env(), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    metrics = json.loads(out.stdout)["metrics"]
    assert metrics["n_queries"] > 0 and metrics["recall_at_k"] is not None


@pytest.mark.parametrize(("policy", "module"), [
    ("lethe_agent", "lethe"), ("mem0", "mem0"), ("mem0", "qdrant_client"),
    ("langgraph_store", "langgraph.store.memory"), ("yantrikdb", "yantrikdb"),
    ("inspeximus", "inspeximus"), ("memware", "memware"),
    ("cognitive_memory", "cognitive_memory"), ("dory", "dory"),
    ("isotope_zero", "isotope_zero")])
def test_missing_library_is_one_line_naming_the_extra(
        policy: str, module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a missing incumbent library from crashing with a traceback or being
    replaced by something else: the spec (or, for a submodule, the job) fails with one
    line naming the module and the extra."""
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError
    with pytest.raises(FbenchError) as err:
        build(policy)
    assert str(err.value) == (f"policy {policy!r} needs the incumbents extra (module "
                              f"{module!r} is missing): pip install 'fbench[incumbents]'")


def test_missing_library_exits_2_through_the_cli() -> None:
    """Prevents the CLI printing a traceback for a missing incumbent library."""
    code = ("import sys; sys.modules['lethe'] = None; from runner.cli import main; "
            "sys.argv = ['fbench', 'run', '--workload', 'contradiction', '--policy', "
            "'lethe_agent', '--seed', '0', '--horizon', '20']; main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and "fbench[incumbents]" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


class TestLetheAgent:
    def test_clock_is_simulated_and_never_ties(self) -> None:
        """Prevents driving the library on the wall clock, or with equal creation times
        within a step (the library breaks those ties by random uuid)."""
        mem = build("lethe_agent")
        for i, t in enumerate([0, 0, 0, 1, 3]):
            mem.observe(i, t, f"note number {i}", {})
        items = sorted(mem.store.backend.list_all(), key=lambda m: m.created_at)
        offsets = [(m.created_at - EPOCH).total_seconds() for m in items]
        assert offsets == [1, 2, 3, 86_401, 3 * 86_400 + 1]
        assert [m.tags for m in items] == [[f"fbench:obs={i}"] for i in range(5)]

    def test_captures_keep_their_session_and_tags(self) -> None:
        """Prevents feeding the library less than fbench's own lethe reads: the
        capture's session and tags (its source signal) go in, the id tag last."""
        mem = build("lethe_agent")
        mem.observe(0, 4, "the launch code is 1234", {"session": "day-4", "tags": "fact,pin"})
        (item,) = mem.store.backend.list_all()
        assert item.source_session_id == "day-4"
        assert item.tags == ["fact", "pin", "fbench:obs=0"]
        assert item.importance_score == pytest.approx(0.2 + 0.5 * 0.85)

    def test_never_recalled_items_are_never_forgotten_under_score_decay(self) -> None:
        """Prevents patching around the library's measured quirk: under its default
        policy an item never recalled is never promoted, so never forgotten."""
        mem = build("lethe_agent")
        for t in range(200):
            mem.observe(t, t, f"distractor remark {t} about the weather", {})
        assert mem.size() == 200 and mem.forgotten() == {}

    def test_fifo_evicts_through_consolidation_into_the_forget_log(self) -> None:
        """Prevents evictions the harness cannot see: FIFO at capacity 10 keeps the
        newest 10 and each eviction is counted from the library's forget log."""
        mem = build("lethe_agent", retention="fifo", capacity=10)
        for t in range(40):
            mem.observe(t, t, f"fact {t}", {})
        mem.tick(40)
        assert mem.size() == 10
        assert [mem.holds(i) for i in range(40)] == [False] * 30 + [True] * 10
        assert mem.forgotten() == {"retention_policy:fifo": 30}

    def test_turn_streams_consolidate_every_n_steps_and_ticks_take_over(self) -> None:
        """Prevents a turn-based stream (no Ticks) never consolidating, or a stream with
        Ticks consolidating twice."""
        mem = build("lethe_agent", retention="fifo", capacity=5, consolidate_every=10)
        for t in range(12):
            mem.observe(t, t, f"fact {t}", {})
        # consolidated once, on entering step 10 (10 items held then, 5 evicted)
        assert mem.forgotten() == {"retention_policy:fifo": 5}
        mem.tick(12)  # from now on only Ticks consolidate
        for t in range(13, 40):
            mem.observe(t, t, f"fact {t}", {})
        assert mem.size() == 5 + 27

    def test_recall_reinforces_what_it_returns(self) -> None:
        """Prevents hiding the library's reinforcement: a recalled item gains accesses."""
        mem = build("lethe_agent")
        mem.observe(0, 0, "alice lives in paris", {})
        mem.observe(1, 0, "bob likes tea", {})
        hits = mem.query(1, "where does alice live", 1)
        assert [h.obs_id for h in hits] == [0]
        item = mem.store.backend.get(mem._id_of[0])
        assert item.access_count == 1 and item.importance_score > 0.45


class TestMem0:
    def test_observation_ids_travel_in_metadata_and_nothing_is_deleted(self) -> None:
        """Prevents scoring mem0 on anything but what it stores and returns: ids come
        back from its own metadata, and its store holds every observation."""
        mem = build("mem0")
        texts = ["alice lives in paris", "bob likes green tea", "carol works at acme"]
        for i, text in enumerate(texts):
            mem.observe(i, i, text, {})
        hits = mem.query(3, "where does alice live?", 2)
        assert hits[0].obs_id == 0 and len(hits) == 2
        assert hits[0].score >= hits[1].score
        assert mem.stored() == mem.size() == 3
        assert all(mem.holds(i) for i in range(3)) and not mem.holds(7)

    def test_expiry_follows_the_simulated_clock_by_date(self) -> None:
        """Prevents mem0's expiry being judged by the real date (or by fbench instead of
        mem0): with expire_days=2 a capture of day 0 is still returned on day 2, hidden
        from day 3 on, counted as expired, and the vector store agrees."""
        mem = build("mem0", expire_days=2.0)
        mem.observe(0, 0, "alice lives in paris", {})
        mem.observe(1, 2, "bob likes green tea", {})
        assert mem.query(2, "where does alice live?", 2)[0].obs_id == 0
        assert mem.size() == 2 and mem.forgotten() == {}
        mem.tick(3)
        assert [h.obs_id for h in mem.query(3, "where does alice live?", 2)] == [1]
        assert not mem.holds(0) and mem.holds(1)
        assert mem.size() == mem.stored() == 1 and mem.forgotten() == {"expired": 1}
        assert mem.tokens() == 4
        mem.tick(5)
        assert mem.size() == mem.stored() == 0 and mem.query(5, "alice", 2) == []


class TestLangGraphStore:
    def test_ids_travel_in_keys_and_values_and_search_is_semantic(self) -> None:
        """Prevents scoring LangGraph's store on anything but what it stores and returns:
        each observation is the item ``obs-<id>`` whose value carries the id back from
        ``search``, ranked by the index's cosine on fbench's embedder, and the store's
        own count agrees; nothing is ever deleted."""
        mem = build("langgraph_store", embedder="minilm")
        texts = ["alice lives in paris", "bob likes green tea", "carol works at acme"]
        for i, text in enumerate(texts):
            mem.observe(i, i, text, {})
        hits = mem.query(3, "Where does Alice live now?", 2)
        assert hits[0].obs_id == 0 and len(hits) == 2
        assert hits[0].score >= hits[1].score
        item = mem.store.get(("fbench",), "obs-2")
        assert item.value == {"text": "carol works at acme", "obs": 2}
        mem.tick(9)
        assert mem.stored() == mem.size() == 3 and mem.forgotten() == {}
        assert all(mem.holds(i) for i in range(3)) and not mem.holds(7)


    @pytest.mark.faketime
    def test_sqlite_ttl_expires_on_the_simulated_clock_at_its_sweep(self) -> None:
        """Prevents scoring LangGraph's TTL by real elapsed time, or by fbench's rule:
        SqliteStore (on the simulated clock) with a 2-day TTL and no refresh on read drops
        a capture of day 0 at the sweep of day 2 (past its expiry by seconds) and one of
        day 2 at the sweep of day 5 (the sweep of day 4 is at its expiry, not past it),
        counted as expired; its own count agrees."""
        mem = build("langgraph_store", backend="sqlite", ttl_days=2.0, refresh_on_read=False)
        mem.observe(0, 0, "alice lives in paris", {})
        mem.observe(1, 2, "bob likes green tea", {})
        assert [h.obs_id for h in mem.query(2, "where does alice live", 2)] == [0, 1]
        mem.tick(2)
        assert [h.obs_id for h in mem.query(3, "where does alice live", 2)] == [1]
        assert mem.size() == mem.stored() == 1 and mem.forgotten() == {"expired": 1}
        mem.tick(4)  # day 4 at 00:00:01: exactly its expiry, not past it
        assert mem.size() == 1
        mem.tick(5)
        assert mem.size() == mem.stored() == 0 and mem.forgotten() == {"expired": 2}

    @pytest.mark.faketime
    def test_refresh_on_read_keeps_what_is_retrieved(self) -> None:
        """Prevents missing LangGraph's default: with refresh_on_read every item a search
        returns gets its TTL back, so what is asked about never expires."""
        mem = build("langgraph_store", backend="sqlite", ttl_days=2.0)
        mem.observe(0, 0, "alice lives in paris", {})
        for t in range(1, 8):
            mem.query(t, "where does alice live", 1)
            mem.tick(t)
        assert mem.holds(0) and mem.forgotten() == {}


def test_sqlite_store_embeds_the_text_field_only() -> None:
    """Prevents scoring SqliteStore on vectors of its whole JSON values: it reads the
    fields to embed from "text_fields", not the "fields" InMemoryStore reads, so with
    "fields" alone it embedded '{"obs": 0, "text": ...}'; it asks for the text's vector
    (the one sent with it: any other text is a KeyError) and ranks by it."""
    from runner.adapters.langgraph_sqlite import TTLStore

    store = TTLStore(2, None, True)
    store.put(0, "alice lives in paris", [1.0, 0.0])
    store.put(1, "bob likes tea", [0.0, 1.0])
    found = store.search("where does alice live", 2, [0.8, 0.6])
    assert [obs for obs, _ in found] == [0, 1]
    assert [score for _, score in found] == pytest.approx([0.8, 0.6], abs=1e-6)


class TestYantrikDB:
    @pytest.mark.faketime
    def test_the_engine_runs_on_the_simulated_clock(self) -> None:
        """Prevents driving the engine on the real clock (its decay, recency and uuid7
        ids read the time themselves): its process's wall clock is the simulated time,
        one second per event within a step."""
        mem = build("yantrikdb")
        mem.observe(0, 3, "alice lives in paris", {})
        assert mem.engine.call("clock") == pytest.approx(1_767_225_600 + 3 * 86_400 + 1)
        mem.observe(1, 3, "bob likes tea", {})
        assert mem.engine.call("clock") == pytest.approx(1_767_225_600 + 3 * 86_400 + 2)
        hits = mem.query(40, "where does alice live", 2)
        assert [h.obs_id for h in hits] == [0, 1]
        assert mem.stored() == mem.size() == 2

    @pytest.mark.faketime
    def test_evict_moves_the_excess_to_the_cold_tier_it_no_longer_serves(self) -> None:
        """Prevents reporting a bound the engine does not keep, or one it does as no
        forgetting: evict(max_active) moves the excess to the cold tier, which its
        query path no longer returns, so those records count as forgotten ("evicted")
        and the engine's own count agrees."""
        mem = build("yantrikdb", max_active=2)
        for i, text in enumerate(["alice lives in paris", "bob likes tea",
                                  "carol works at acme", "dave plays chess"]):
            mem.observe(i, i, text, {})
        mem.tick(5)
        assert mem.size() == mem.stored() == 2 and mem.forgotten() == {"evicted": 2}
        served = sorted(h.obs_id for h in mem.query(5, "alice bob carol dave", 4))
        assert len(served) == 2 and all(mem.holds(i) for i in served)

    @pytest.mark.faketime
    def test_the_engine_draws_the_same_entropy_every_run(self) -> None:
        """Prevents ids and HNSW levels that vary between runs of one job: the engine
        seeds both from getrandom(), which its process draws from a fixed seed, so two
        engines fed the same records mint the same ids."""
        runs = []
        for _ in range(2):
            mem = build("yantrikdb", max_active=2)
            for i, text in enumerate(["alice lives in paris", "bob likes tea", "carol is 31"]):
                mem.observe(i, i, text, {})
            runs.append(mem.engine.call("ids"))
        assert len(set(runs[0])) == 3 and runs[0] == runs[1]

    @pytest.mark.faketime
    def test_a_record_is_fully_derived_before_the_next_call(self) -> None:
        """Prevents hits that depend on the machine's load: record() left the entities
        and edges a record derives to background threads, so a query that came before
        they finished scored differently; each observation is derived before observe
        returns, so a drain finds nothing left to apply."""
        mem = build("yantrikdb")
        for i, text in enumerate(["Alice lives in Paris and works at Acme.",
                                  "Bob moved to London with Carol.",
                                  "Dave met Alice at Acme in Berlin."]):
            mem.observe(i, i, text, {})
        now = mem.engine.call("derived")
        assert now[0] > 0 and now == mem.engine.call("derived", drain=True)

    @pytest.mark.faketime
    def test_each_record_keeps_its_observation_time_and_half_life(self) -> None:
        """Prevents records off the simulated clock or at the engine's default half-life
        (7 days): record_batch ignores item keys it does not know, so a misspelt
        half_life would pass unnoticed; the engine stores each observation's id, the
        simulated time of its event and the half-life it was given."""
        mem = build("yantrikdb", half_life_days=3.0)
        mem.observe(0, 2, "alice lives in paris", {})
        mem.observe(1, 5, "bob likes tea", {})
        day = 86_400.0
        assert mem.engine.call("records") == [
            (0, 1_767_225_600 + 2 * day + 1, 3 * day), (1, 1_767_225_600 + 5 * day + 1, 3 * day)]

    def test_without_libfaketime_it_is_one_line(self, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
        """Prevents a traceback (or a run on the real clock) where libfaketime is
        missing: one line naming the package."""
        monkeypatch.setenv("FBENCH_LIBFAKETIME", "/nonexistent/libfaketime.so.1")
        with pytest.raises(FbenchError, match="apt-get install faketime"):
            build("yantrikdb")


class TestMiniLM:
    def test_unit_vectors_cached_by_text(self) -> None:
        """Prevents unnormalised or re-encoded vectors: 384-d unit rows, each text
        encoded once per embedder."""
        e = MiniLMEmbedder()
        v = e.embed("alice lives in paris")
        assert v.shape == (384,) and abs(float(v @ v) - 1.0) < 1e-9
        assert e.embed("alice lives in paris") is v

    def test_semantic_neighbours(self) -> None:
        """Prevents a broken model load (random weights rank paraphrases no better)."""
        e = MiniLMEmbedder()
        q = e.embed("Where does Alice live now?")
        near = e.embed("Alice relocated to Denver.")
        far = e.embed("The quarterly budget meeting was moved to Tuesday.")
        assert float(q @ near) > float(q @ far) + 0.2

    def test_same_batches_same_vectors(self) -> None:
        """Prevents embeddings that depend on anything but the job's own batches: two
        embedders fed the same prefetch blocks give bit-identical vectors."""
        blocks = [["alice lives in paris", "bob likes tea"], ["carol is 31", "alice lives"]]
        a, b = MiniLMEmbedder(), MiniLMEmbedder()
        for block in blocks:
            a.prefetch(block)
            b.prefetch(block)
        for text in {t for block in blocks for t in block}:
            assert np.array_equal(a.embed(text), b.embed(text))

    def test_only_a_batching_embedder_is_offered_the_blocks(self) -> None:
        """Prevents the job's blocks from skipping the minilm embedder's batch (or from
        building text lists for an embedder that cannot batch)."""
        minilm = build("keep_all", embedder="minilm")
        assert isinstance(minilm, Prefetches) and minilm.store.embedder.dim == 384
        assert not isinstance(build("keep_all"), Prefetches)

    def test_minilm_jobs_repeat_exactly(self) -> None:
        """Prevents a reference job on minilm whose metrics change from run to run."""
        spec = make_spec("contradiction", "ebbinghaus", 2, horizon=400,
                         params=[("embedder", "minilm")])
        a, b = run_job(spec).metrics(), run_job(spec).metrics()
        assert {k: v for k, v in a.items() if not k.startswith(("wall", "query_ms"))} == \
            pytest.approx({k: v for k, v in b.items() if not k.startswith(("wall", "query_ms"))},
                          nan_ok=True, rel=0, abs=0)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.faketime
def test_incumbent_jobs_are_the_same_inline_and_on_ray(tmp_path: Path) -> None:
    """Prevents an incumbent whose numbers depend on the executor (a clock read in the
    worker, a thread count, a library global left from another job): every incumbent
    setting, on both workload families, gives identical final metrics (timing aside)
    inline and on the embedded Ray."""
    import json
    import sys

    import pyarrow.parquet as pq

    from runner.metrics import METRICS

    finals = {}
    for executor in ("inline", "ray"):
        out = tmp_path / executor
        res = subprocess.run(
            [sys.executable, "-m", "runner.cli", "sweep", "--workloads",
             "contradiction,lifecycle", "--horizons", "0.05x", "--policies",
             "lethe_agent,mem0,langgraph_store,yantrikdb", "--param",
             "lethe_agent.retention=score_decay,fifo", "--param", "mem0.expire_days=0,7",
             "--param", "langgraph_store.embedder=hashing,minilm",
             "--param", "langgraph_store.backend=memory,sqlite", "--seeds", "1",
             "--executor", executor,
             "--out", str(out), "--no-report"],
            capture_output=True, text=True, timeout=900, check=False)
        assert res.returncode == 0, res.stderr
        rows = [pq.read_table(p).to_pylist()[-1] for p in sorted(out.rglob("*.parquet"))
                if "shards" in p.parts]
        assert len(rows) == 18
        finals[executor] = sorted(json.dumps(
            {k: v for k, v in r.items() if k in METRICS and not METRICS[k].timing}
            | {"job": r["job_id"]}, sort_keys=True) for r in rows)
    assert finals["ray"] == finals["inline"]


# Every setting the incumbents sweeps run of the libraries added after the first four.
MORE_LIBRARIES = [
    "--policies", "inspeximus,memware,cognitive_memory,dory,isotope_zero",
    "--param", "inspeximus.key_by=none,teacher", "--param", "inspeximus.retention_days=0,30",
    "--param", "memware.conflicts=gate_conflicts,await_confirmation",
    "--param", "memware.decay=0.1,0.5",
    "--param", "cognitive_memory.episodic_decay_days=45,7",
    "--param", "isotope_zero.ttl_days=0,7"]


@pytest.mark.slow
@pytest.mark.cluster
def test_more_libraries_are_the_same_inline_and_on_ray(tmp_path: Path) -> None:
    """Prevents one of the later libraries giving numbers that depend on the executor
    (a wall-clock read the simulation missed, a random id, a thread): every setting of
    each, on both workload families, gives identical final metrics (timing aside)
    inline and on the embedded Ray."""
    import pyarrow.parquet as pq

    from runner.metrics import METRICS

    finals = {}
    for executor in ("inline", "ray"):
        out = tmp_path / executor
        res = subprocess.run(
            [sys.executable, "-m", "runner.cli", "sweep", "--workloads",
             "contradiction,lifecycle", "--horizons", "0.05x", *MORE_LIBRARIES,
             "--seeds", "1", "--executor", executor, "--out", str(out), "--no-report"],
            capture_output=True, text=True, timeout=900, check=False)
        assert res.returncode == 0, res.stderr
        rows = [pq.read_table(p).to_pylist()[-1] for p in sorted(out.rglob("*.parquet"))
                if "shards" in p.parts]
        assert len(rows) == 2 * (4 + 4 + 2 + 1 + 2)
        finals[executor] = sorted(json.dumps(
            {k: v for k, v in r.items() if k in METRICS and not METRICS[k].timing}
            | {"job": r["job_id"]}, sort_keys=True) for r in rows)
    assert finals["ray"] == finals["inline"]


class TestTheWorkloadsClock:
    """Each incumbent counts ``t`` on the clock the harness gives it (``use_clock``): on
    a turn stream of 4 turns a day, a turn is 6 hours of the library's time."""

    QUARTERS = Clock("turns", turns_per_day=4)

    def test_lethe_agent_stamps_captures_on_it(self) -> None:
        """Prevents a library clock that reads a turn as a day whatever the workload
        says (lethe-agent's decay and TTL are in seconds)."""
        mem = build("lethe_agent")
        mem.use_clock(self.QUARTERS)
        mem.observe(0, 3, "alice lives in paris", {})
        (item,) = mem.store.backend.list_all()
        assert (item.created_at - EPOCH).total_seconds() == 3 * 21_600 + 1

    def test_mem0_expires_by_its_dates(self) -> None:
        """Prevents mem0's expiry in turns where the workload has days: a capture of
        turn 0 with expire_days=1 is returned through turn 7 (day 1) and hidden from
        turn 8 (day 2)."""
        mem = build("mem0", expire_days=1.0)
        mem.use_clock(self.QUARTERS)
        mem.observe(0, 0, "alice lives in paris", {})
        assert [h.obs_id for h in mem.query(7, "where does alice live?", 1)] == [0]
        mem.tick(8)
        assert mem.query(8, "where does alice live?", 1) == []
        assert mem.forgotten() == {"expired": 1}

    @pytest.mark.faketime
    def test_langgraph_sqlite_ttl_runs_on_it(self) -> None:
        """Prevents SQLite's TTL on a turn-a-day clock: with a 1-day TTL a capture of
        turn 0 survives the sweep of turn 4 (1 day + 1 s, before its expiry at 1 day +
        2 s) and is gone at the sweep of turn 5."""
        mem = build("langgraph_store", backend="sqlite", ttl_days=1.0, refresh_on_read=False)
        mem.use_clock(self.QUARTERS)
        mem.observe(0, 0, "alice lives in paris", {})
        mem.tick(4)
        assert mem.size() == 1
        mem.tick(5)
        assert mem.size() == mem.stored() == 0 and mem.forgotten() == {"expired": 1}

    @pytest.mark.faketime
    def test_yantrikdb_process_reads_it(self) -> None:
        """Prevents the engine's process counting a turn as a day (its half-life is in
        seconds): at turn 3 its wall clock is 18 hours and a second past the epoch."""
        mem = build("yantrikdb")
        mem.use_clock(self.QUARTERS)
        mem.observe(0, 3, "alice lives in paris", {})
        assert mem.engine.call("clock") == pytest.approx(EPOCH.timestamp() + 3 * 21_600 + 1)
