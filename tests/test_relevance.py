"""Batched questions and kept relevances give exactly what one-by-one answers give."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import pytest

from memcore import POLICIES, MemoryStore, StoreParams
from memcore.columns import Columns
from memcore.embed import HashingEmbedder
from memcore.policies.base import Policy, Removal
from memcore.relevance import KeptRelevance
from memcore.retrieval import Ranker, ScoreBase
from runner.job import run as run_module
from runner.job.run import JobRun, run_job
from runner.spec.resolve import make_spec

WORDS = [f"w{i}" for i in range(400)]


def _texts(rng: np.random.Generator, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, int(rng.integers(2, 14)))) for _ in range(n)]


def _sequential(cols: Columns, q: np.ndarray) -> np.ndarray:
    """The reference sum: dimension by dimension, in order, one product and one add."""
    out = np.zeros(cols.n)
    for d in np.flatnonzero(q).tolist():
        rows, vals = cols.postings(d)
        out[rows] += q[d] * vals
    return out


def test_dot_is_the_sequential_sum() -> None:
    """Prevents a relevance whose rounding depends on how np.add.at or a BLAS kernel
    orders a row's terms: Columns.dot equals the one-dimension-at-a-time sum bit for bit."""
    rng = np.random.default_rng(0)
    emb, cols = HashingEmbedder(), Columns(512)
    for t in _texts(rng, 3000):
        cols.append(emb.embed(t))
    for t in _texts(rng, 50):
        q = emb.embed(t)
        nz = np.flatnonzero(q)
        assert np.array_equal(cols.dot(nz, q[nz]), _sequential(cols, q))


def test_kept_relevances_equal_fresh_sums_through_growth_compaction_and_eviction(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a kept relevance that drifts from a fresh sum: counted twice when the
    columns grow (or when a text is asked twice in a batch), misaligned after a
    compaction, stale after the columns' log is lost or its own log let go of rows a
    text still needed, wrong for a text evicted and asked again, or for texts caught up
    together in one sum. A small budget and small logs force each case."""
    monkeypatch.setattr(KeptRelevance, "BUDGET_FLOATS", 16 * 2048)
    monkeypatch.setattr(KeptRelevance, "MIN_TEXTS", 8)
    monkeypatch.setattr(KeptRelevance, "LOG_MAX", 2000)
    monkeypatch.setattr(Columns, "LOG_MAX", 900)
    rng = np.random.default_rng(1)
    emb, cols = HashingEmbedder(), Columns(512, capacity=16)
    kept = KeptRelevance()
    asked = _texts(rng, 40)
    compacted = evicted = lost = none = caught_up = behind = 0
    groups: list[int] = []  # texts caught up together (one bincount when more than one)
    catch_up_many = KeptRelevance._catch_up_many

    def spy(self: KeptRelevance, group: list, cols: Columns) -> None:  # type: ignore[type-arg]
        groups.append(len(group))
        catch_up_many(self, group, cols)

    monkeypatch.setattr(KeptRelevance, "_catch_up_many", spy)
    for step in range(160):
        for t in _texts(rng, int(rng.integers(0, 130))):
            cols.append(emb.embed(t))
        if step % 37 == 36:  # remove some rows, then squeeze them out
            cols.live[: cols.n : 3] = False
            cols.n_live = int(cols.live[: cols.n].sum())
            cols.compact()
            kept.clear()
            compacted += 1
        lost += cols._log_lost
        batch = [asked[i] for i in rng.choice(len(asked), int(rng.integers(1, 12)))]
        queries = [emb.embed(t) for t in batch]
        before = len(kept._texts)
        new = len(set(batch) - set(kept._texts))
        for t in set(batch) & set(kept._texts):
            caught_up += kept._texts[t].done >= kept._log_row
            behind += kept._texts[t].done < kept._log_row
        got = kept.get_many(cols, batch, queries)
        evicted += got is not None and len(kept._texts) < before + new
        if got is None:
            none += 1
            continue
        for row, q in zip(got, queries, strict=True):
            assert np.array_equal(row, _sequential(cols, q))
    assert compacted and lost and evicted and none and caught_up and behind  # every case
    assert max(groups) > 1


@pytest.mark.parametrize("together", [1 << 20, 50])
def test_relevance_by_text_is_the_sum_per_row_through_restarts_and_reopening(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory,
        together: int) -> None:
    """Prevents a relevance by text (``memcore.relevance_table``) that differs from the
    sum over the row's postings by a bit: a text's terms summed in another order, a row
    read with another text's id, ids void after the table started over (a small table
    forces restarts, in an add and in a question) or after a compaction, a reopened store
    whose rows carry no ids yet, two stores of one process sharing the table, and
    questions caught up together or (past ``CATCH_UP_FLOATS``) one by one; and scores
    from the weighted relevances kept by text id (``Ranker.scores_by_text``) that differ
    from the scores of the sums."""
    from memcore import relevance_table

    monkeypatch.setattr(relevance_table.RelevanceTable, "CATCH_UP_FLOATS", together)
    monkeypatch.setattr(relevance_table.RelevanceTable, "MAX_TEXTS", 400)
    monkeypatch.setattr(relevance_table.RelevanceTable, "MAX_STORE_TEXTS", 200)
    monkeypatch.setattr(relevance_table.RelevanceTable, "MAX_FLOATS", 4000)
    monkeypatch.setattr(relevance_table, "_TABLES", {})
    rng = np.random.default_rng(3)
    pool, asked = _texts(rng, 120), _texts(rng, 30)
    stores = [MemoryStore(POLICIES[p](), HashingEmbedder(), None)
              for p in ("fifo", "lru", "keep_all")]
    table = relevance_table.relevance_table(HashingEmbedder())
    assert table is not None and relevance_table.relevance_table(Columns) is None  # type: ignore[arg-type]
    generations = set()
    for step in range(60):
        for store in stores:
            for t in rng.choice(pool, int(rng.integers(1, 12))).tolist() + _texts(rng, 4):
                store.add(t, step)
            if step % 20 == 19:  # rows removed, then squeezed out
                store.forget(store.cols.obs_id[: store.cols.n : 2][
                    store.cols.live[: store.cols.n : 2]].tolist(), step, "test")
                store._compact()
            texts = rng.choice(asked, 4).tolist()
            ranker, cols = store._ranker, store.cols
            many = ranker.relevance_many(cols, texts)
            for i, t in enumerate(texts):
                q = HashingEmbedder().embed(t)
                nz = np.flatnonzero(q)
                want = cols.dot(nz, q[nz])
                assert np.array_equal(many[i], want) and np.array_equal(
                    ranker.relevance(cols, t), want)
                by_text = ranker.scores_by_text(cols, store.policy, step, t)
                assert (by_text is None) == (cols.text_generation is None)
                if by_text is not None:  # (the weighted relevances kept by text id)
                    by_text = by_text.copy()  # (both write the scratch buffer)
                    assert np.array_equal(by_text,
                                          ranker.scores(cols, store.policy, step, want))
            if store is not stores[-1]:  # (keep_all's outgrow it: summed per row then)
                assert cols.text_generation == table.generation
        generations.add(table.generation)
    assert len(generations) > 3  # (it started over, several times)
    assert stores[-1].cols.text_generation is None  # keep_all's texts outgrew it
    path = str(tmp_path) + "/s.db"  # type: ignore[operator]
    store = MemoryStore(POLICIES["keep_all"](), HashingEmbedder(), None,
                        StoreParams(backend="sqlite", path=path))
    for t in pool[:50]:
        store.add(t, 1)
    store.close()
    again = MemoryStore.open(path, POLICIES["keep_all"](), HashingEmbedder())
    assert again.cols.text_generation == -1
    for t in asked[:5]:
        q = HashingEmbedder().embed(t)
        nz = np.flatnonzero(q)
        assert np.array_equal(again.relevance(t), again.cols.dot(nz, q[nz]))
    again.close()


def test_top_k_many_is_top_k_row_by_row_ties_included() -> None:
    """Prevents a batched top-k that orders ties differently from one query's: equal
    scores go to the newer row in both (and a k past the sample of newest rows)."""
    rng = np.random.default_rng(2)
    ranker = Ranker(StoreParams(), HashingEmbedder())
    for n in (5, 40, 300, 5000):
        score = np.round(rng.random((9, n)), 1)  # many ties
        score[:, ::7] = -np.inf
        for k in (1, 5, *((257,) if n > 300 else ())):
            many = ranker.top_k_many(score, k)
            for i in range(len(score)):
                assert many[i].tolist() == ranker.top_k(score[i].copy(), k).tolist()


def test_top_k_is_the_full_sort_ties_included() -> None:
    """Prevents a shortcut in top_k (the newest rows' floor, the partition of small
    scores) from dropping or reordering a row: it equals sorting every row by score,
    the newer row first on a tie, at sizes on both sides of its sample."""
    rng = np.random.default_rng(3)
    ranker = Ranker(StoreParams(), HashingEmbedder())
    for n in (1, 5, 40, 300, 4096, 4097, 9000):
        score = np.round(rng.random(n), 2)
        score[::5] = -np.inf
        for k in (1, 5, n):
            rows = np.arange(n)
            want = rows[np.lexsort((-rows, -score))][:k]
            assert ranker.top_k(score, k).tolist() == want.tolist(), (n, k)


def test_top_k_from_the_last_answers_floor_is_the_full_sort() -> None:
    """Prevents the first floor of top_k (the least k-th best score of the last answers)
    from dropping or reordering a row: whatever that floor (above every score, below
    every one, on a tie at the k-th best, NaN, -inf, or kept from an unrelated answer),
    top_k equals sorting every row by score, the newer first on a tie."""
    rng = np.random.default_rng(6)
    ranker = Ranker(StoreParams(), HashingEmbedder())
    for n in (7, 64, 200, 1323):
        score = np.round(rng.random(n), 2)  # ties, at the k-th best too
        score[::6] = -np.inf
        rows = np.arange(n)
        for k in (1, 5, n - len(score[::6])):
            want = rows[np.lexsort((-rows, -score))][:k]
            kth = float(score[want[-1]])
            for floor in (2.0, -1.0, kth, kth - 0.01, float(np.max(score)), np.nan,
                          -np.inf, None):
                if floor is not None:  # (None: the floor the last answer left)
                    ranker._recent_kth[:] = [floor]
                got = ranker.top_k(score, k, np.isfinite(score))
                assert got.tolist() == want.tolist(), (n, k, floor)
    assert ranker._recent_kth[-1] == kth  # the last answer's k-th best is kept


def test_top_k_over_the_live_rows_is_the_full_sort() -> None:
    """Prevents the live-rows path of top_k and top_k_many (a store with many dead rows
    partitions only its live ones) from dropping or reordering a row: both equal
    sorting every row by score, the newer first on a tie, for stores mostly dead or
    barely dead, on both sides of the samples, k up to the live count."""
    rng = np.random.default_rng(4)
    ranker = Ranker(StoreParams(), HashingEmbedder())
    for n, dead in ((60, 0.9), (1100, 0.9), (1100, 0.05), (5000, 0.5), (9000, 0.95)):
        live = rng.random(n) >= dead
        score = np.where(live, np.round(rng.random((4, n)), 2), -np.inf)
        rows = np.arange(n)
        for k in (1, 5, int(live.sum())):
            many = ranker.top_k_many(score, k, live)
            for i in range(len(score)):
                want = rows[np.lexsort((-rows, -score[i]))][:k]
                assert ranker.top_k(score[i], k, live).tolist() == want.tolist(), (n, k)
                assert many[i].tolist() == want.tolist(), (n, k)


def test_recency_from_its_table_is_the_exp_of_each_age() -> None:
    """Prevents the table of weighted recencies by age, or the weighted importances kept
    by row, from giving another number than ``w_rec·recency_base ** age + w_imp·
    importance`` computed as ever (np.exp of age · ln base), for ages the table holds,
    ages past it (it grows), a negative age and one too large to tabulate (computed
    directly), rows added between two times and a compaction."""
    params = StoreParams()
    total = params.w_recency + params.w_importance + params.w_relevance
    w_rec, w_imp = params.w_recency / total, params.w_importance / total
    base, cols = ScoreBase(w_rec, w_imp, params.recency_base), Columns(512)

    def add(t: int) -> None:
        row = cols.append(HashingEmbedder().embed(f"w{t}"))
        cols.turn[row], cols.importance[row] = t, (t % 7) / 7

    log_base = np.log(params.recency_base)

    def check(now: int) -> None:
        want = (np.multiply(np.exp((now - cols.turn[: cols.n]) * log_base), w_rec)
                + np.multiply(cols.importance[: cols.n], w_imp))
        assert np.array_equal(base.at(cols, now), want), now

    for t in [0, 3, 3, 900, 1023, 1024, 2999, 5000, -7, 7000]:
        add(t)
    for now in (0, 1024, 5000, 7000, 5000 + ScoreBase.REC_TABLE_MAX):
        check(now)
    add(7001)  # a row added at a time already computed
    check(5000 + ScoreBase.REC_TABLE_MAX)
    cols.live[[1, 4]] = False
    cols.n_live -= 2
    cols.compact()
    base.rows_moved()
    for t in (7002, 7003, 7004):  # (past the rows computed before the compaction)
        add(t)
    check(7004)
    check(7005)
    # turns of a stream (from 0, none past now, now within the table): looked up by turn
    base, cols = ScoreBase(w_rec, w_imp, params.recency_base), Columns(512)
    for t in (0, 0, 5, 1000, 1023):
        add(t)
    for now in (1023, 1024, 0, 2047, 1023):  # (0: rows from the future, by age)
        check(now)
    for t in (1024, 2047):
        add(t)
        check(t)


def _store(policy: str) -> MemoryStore:
    return MemoryStore(POLICIES[policy](), HashingEmbedder(), None, StoreParams())


@pytest.mark.parametrize("policy", ["keep_all", "ebbinghaus", "learned_forget", "lru", "lfu",
                                    "ttl", "lethe"])
def test_retrieve_many_is_retrieve_one_by_one(policy: str) -> None:
    """Prevents a batch that answers, or leaves the store, differently from the same
    questions asked one by one: hits, scores, access counts and times agree, for
    policies that batch and for lethe, whose reinforcement makes it answer one by one."""
    rng = np.random.default_rng(3)
    one, many = _store(policy), _store(policy)
    for day in range(30):
        for t in _texts(rng, 12):
            one.add(t, day)
            many.add(t, day)
        questions = _texts(rng, 6) + ["w1 w2 w3"] * 2
        expected = [one.retrieve(q, day, 5) for q in questions]
        assert many.retrieve_many(questions, day, 5) == expected
        for name in ("last_access", "access_count", "live"):
            assert np.array_equal(getattr(one.cols, name)[: one.cols.n],
                                  getattr(many.cols, name)[: many.cols.n])


def test_a_policy_that_removes_on_access_must_not_declare_batching() -> None:
    """Prevents a wrong declaration passing silently: a policy that says an answer
    cannot change the next but removes entries on access stops with an error naming
    the declaration."""

    class Careless(Policy):
        name = "careless"
        access_reranks = False

        def on_access(self, cols: Columns, rows: np.ndarray, now: int,
                      relevance: np.ndarray | None = None) -> Removal:
            return Removal(rows[:1], "careless", np.zeros(1))

    store = MemoryStore(Careless(), HashingEmbedder(), None, StoreParams())
    for i in range(10):
        store.add(f"w{i} w{i + 1}", 0)
    with pytest.raises(RuntimeError, match="declares access_reranks = False"):
        store.retrieve_many(["w1", "w2"], 0, 3)


def test_in_turn_answers_survive_removals_that_move_the_rows() -> None:
    """Prevents the in-turn path (relevances computed together, answers one after
    another) from answering with relevances of rows that moved: a policy that removes
    what it returns makes the store compact mid-batch, and the answers and the store
    still equal the same questions asked one by one; the same for the answers as
    observation ids only (``obs_in_turn``)."""

    class Eater(Policy):
        name = "eater"  # removes each question's best hit (access_reranks: the default)

        def on_access(self, cols: Columns, rows: np.ndarray, now: int,
                      relevance: np.ndarray | None = None) -> Removal:
            return Removal(rows[:1], "eaten", np.zeros(1))

    rng = np.random.default_rng(5)
    one, many, ids = (MemoryStore(Eater(), HashingEmbedder(), None, StoreParams())
                      for _ in range(3))
    one.COMPACT_MIN_DEAD = many.COMPACT_MIN_DEAD = ids.COMPACT_MIN_DEAD = 4
    compactions = 0
    for day in range(12):
        for t in _texts(rng, 8):
            for store in (one, many, ids):
                store.add(t, day)
        questions = _texts(rng, 7) + ["w1 w2 w3"] * 2
        n = many.cols.n
        expected = [one.retrieve(q, day, 3) for q in questions]
        assert many.retrieve_in_turn(questions, day, 3) == expected
        assert ids.obs_in_turn(questions, day, 3).tolist() == [
            [h.obs_id for h in hits] + [-1] * (3 - len(hits)) for hits in expected]
        compactions += many.cols.n < n
        for store in (many, ids):
            assert np.array_equal(one.cols.obs_id[: one.cols.n], store.cols.obs_id[: store.cols.n])
    assert compactions  # the case this test is for happened


@runtime_checkable
class _Never(Protocol):
    def never_offered(self) -> None: ...


@pytest.mark.parametrize("workload", ["lifecycle.durable_heavy", "lifecycle.high_freq_skew"])
@pytest.mark.parametrize("policy", ["keep_all", "lru", "oracle"])
def test_a_batched_job_equals_the_one_by_one_job(workload: str, policy: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents batching from moving any number: a job whose questions are answered in
    batches (as one matrix of observation ids, judged at once: ``JobRun.judge_ids``),
    and a lone question as a one-row matrix (``JobRun.query_as_ids``), gives every
    question the same hits and the job the same metrics (timing aside) as with every
    question answered alone as hits (``query``) and judged alone."""
    from runner.metrics import METRICS

    def run() -> tuple[list[list[int]], dict[str, object], int]:
        seen: list[list[int]] = []
        batches = []
        judge, judge_ids = JobRun._judge_obs, JobRun.judge_ids

        def spy(self: JobRun, ev: object, obs: list[int]) -> None:
            seen.append(list(obs))
            judge(self, ev, obs)  # type: ignore[arg-type]

        def spy_ids(self: JobRun, evs: list, ids: np.ndarray) -> None:  # type: ignore[type-arg]
            seen.extend([o for o in row if o >= 0] for row in ids.tolist())
            batches.append(len(evs))
            judge_ids(self, evs, ids)

        monkeypatch.setattr(JobRun, "_judge_obs", spy)
        monkeypatch.setattr(JobRun, "judge_ids", spy_ids)
        result = run_job(make_spec(workload, policy, 4, 120))
        monkeypatch.setattr(JobRun, "_judge_obs", judge)
        monkeypatch.setattr(JobRun, "judge_ids", judge_ids)
        return seen, {k: None if v != v else v for k, v in result.metrics().items()
                      if k in METRICS and not METRICS[k].timing}, len(batches)

    batched = run()
    # no memory offers a batch capability now: every question is asked alone, as hits
    monkeypatch.setattr(run_module, "AnswersAsIds", _Never)
    monkeypatch.setattr(run_module, "AnswersInBatches", _Never)
    alone = run()
    assert len(batched[0]) > 500 and batched[2] > 50 and alone[2] == 0
    assert batched[:2] == alone[:2]


def test_top_k_by_the_group_floor_is_the_full_sort() -> None:
    """Prevents the floor from the groups' maxima (top_k's shortcut for stores below its
    sample) from dropping or reordering a row: with scores all distinct, tied, or mostly
    dead (the floor then -inf, and every live row ranked), top_k equals sorting every
    row by score, the newer first on a tie; and the floor is taken where it should be."""
    rng = np.random.default_rng(5)
    ranker = Ranker(StoreParams(), HashingEmbedder())
    for n in (320, 1323, 4096):
        for kind in ("distinct", "tied", "dead"):
            score = rng.random(n) if kind == "distinct" else np.round(rng.random(n), 1)
            live = np.ones(n, dtype=bool)
            if kind == "dead":  # live rows in fewer groups than k
                live[:] = False
                live[[3, 7]] = True
                score[~live] = -np.inf
            rows = np.arange(n)
            for k in (1, 5, 20):
                floor = ranker._above_group_floor(score, k)
                # (the two live rows are in two groups: a floor for k <= 2)
                taken = n // ranker.TOPK_GROUP >= 4 * k and (kind != "dead" or k <= 2)
                assert (floor is not None) == taken, (n, kind, k)
                want = rows[np.lexsort((-rows, -score))][: min(k, int(live.sum()))]
                got = ranker.top_k(score, min(k, int(live.sum())), live)
                assert got.tolist() == want.tolist(), (n, kind, k)
