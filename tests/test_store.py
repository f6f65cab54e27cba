"""The reference store's mechanics: scoring, tie-break, supersession, removal, compaction."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from memcore import POLICIES, HashingEmbedder, Lexicon, MemoryStore
from memcore.embed import fnv1a_32
from memcore.extract.teacher import KeywordTeacher
from memcore.importance import heuristic_importance
from memcore.text import tokenize

LEX = Lexicon(("alice", "bob"), (("home city", "home_city"), ("salary", "salary")))


def store(policy: str = "keep_all", **params: float) -> MemoryStore:
    cls = POLICIES[policy]
    return MemoryStore(cls(cls.Params(**params)), HashingEmbedder(), KeywordTeacher(LEX))


def test_fnv1a_is_the_32_bit_variant() -> None:
    """Prevents FNV-1 (or another offset/prime) being used: bucket numbers would move."""
    assert fnv1a_32(b"") == 2166136261
    assert fnv1a_32(b"a") == 0xE40C292C
    assert fnv1a_32(b"foobar") == 0xBF9CF968


def test_embedding_is_unit_bag_of_words_with_log_counts() -> None:
    """Prevents a wrong weighting: a repeated token weighs 1 + ln(count) before normalising."""
    v = HashingEmbedder().embed("ramen ramen tacos")
    w = np.array([1 + math.log(2), 1.0])
    w /= np.linalg.norm(w)
    assert sorted(v[v > 0]) == sorted(w)
    assert not HashingEmbedder().embed("!!").any()


def test_importance_heuristic() -> None:
    """Prevents drift of the seed's importance formula (salient words and length bonus)."""
    # 7 tokens (alice s home city is now denver), one salient ("now")
    assert heuristic_importance(tokenize("Alice's home city is now denver.")) == 0.55 + 0.02 * 7
    assert heuristic_importance([]) == 0.3
    assert heuristic_importance(["now"] * 30) == 1.0


def test_score_is_the_weighted_trio() -> None:
    """Prevents a wrong retrieval score: (0.15 recency + 0.15 importance + 0.7 relevance)."""
    s = store()
    s.add("Alice's home city is boston.", 0)
    (hit,) = s.retrieve("What is Alice's home city?", 10, 5)
    q, e = s.embedder.embed("What is Alice's home city?"), s.embedder.embed(
        "Alice's home city is boston.")
    imp = heuristic_importance(tokenize("Alice's home city is boston."))
    assert math.isclose(hit.score, 0.15 * 0.999**10 + 0.15 * imp + 0.7 * float(q @ e))


def test_ties_go_to_the_newer_entry() -> None:
    """Prevents an unstable or oldest-first tie-break (the seed sorts by -score, then -id)."""
    s = store()
    for t in range(3):
        s.add("The team talked about a movie.", 0, obs_id=t)
    assert [h.obs_id for h in s.retrieve("movie", 0, 2)] == [2, 1]


def test_canonical_update_supersedes_and_lww_removes() -> None:
    """Prevents supersession by anything but the extracted slot, and LWW keeping stale facts."""
    s = store("last_write_wins")
    s.add("Alice's home city is boston.", 0, obs_id=0)
    s.add("Alice relocated to denver.", 1, obs_id=1)      # unlinked: nothing superseded
    assert s.holds(0) and s.holds(1)
    s.add("Alice's home city is now miami.", 2, obs_id=2)  # linked: boston goes
    assert not s.holds(0) and s.holds(1) and s.holds(2)
    (rec,) = s.forget_log.records()
    assert (rec.obs_id, rec.reason, rec.age, rec.turn) == (0, "superseded", 2, 2)


def test_ebbinghaus_suppresses_superseded_then_prunes() -> None:
    """Prevents time decay leaking into ranking, or supersession not ranking at all."""
    s = store("ebbinghaus")
    s.add("Alice's home city is boston.", 0, obs_id=0)
    s.add("Alice's home city is now denver.", 50, obs_id=1)
    hits = s.retrieve("What is Alice's home city?", 60, 2)
    assert [h.obs_id for h in hits] == [1, 0]
    assert hits[1].score < 0.1 < hits[0].score
    s.add("Bob's salary is 90k.", 5000, obs_id=2)
    assert not s.holds(0) and not s.holds(1)
    assert s.forget_log.counts() == {"decayed": 2}


def _replay(st: MemoryStore, seed: int, horizon: int) -> list[list[Any]]:
    """A ``contradiction`` stream through ``st``: each question's hits, in turn."""
    from workloads import WORKLOADS, Observe, Query

    w = WORKLOADS["contradiction"]
    answers = []
    for i, ev in enumerate(w.events(seed, horizon, w.Params())):
        if isinstance(ev, Observe):
            st.add(ev.text, ev.t, obs_id=i)
        elif isinstance(ev, Query):
            answers.append(st.retrieve(ev.text, ev.t, 5))
    return answers


def test_compaction_changes_nothing_observable() -> None:
    """Prevents compaction bugs (stale row maps) from changing retrievals or holds()."""
    from workloads import WORKLOADS

    w = WORKLOADS["contradiction"]
    lex = Lexicon(w.vocabulary().entities, w.vocabulary().phrases)

    def run(min_dead: int) -> tuple[list[list[int]], list[bool]]:
        cls = POLICIES["ebbinghaus"]
        st = MemoryStore(cls(cls.Params(tau=30)), HashingEmbedder(), KeywordTeacher(lex))
        st.COMPACT_MIN_DEAD = min_dead
        out = [[h.obs_id for h in hits] for hits in _replay(st, 2, 2000)]
        return out, [st.holds(i) for i in range(2000)]

    assert run(1) == run(10**9)


class _WriteableEmbedder(HashingEmbedder):
    """The hashing embedder handing out a vector of its own each time (writeable)."""

    def embed(self, text: str) -> np.ndarray:
        return super().embed(text).copy()


def test_entries_of_a_known_text_are_the_entries_made_anew() -> None:
    """Prevents the per-text entries a store keeps (``memcore.bookkeeping.KnownTexts``)
    from giving an entry another vector, importance or token count than a store that
    knows nothing: the same stream through stores that keep every text, almost none, and
    an embedder whose vectors are never kept, gives the same columns and answers."""
    from workloads import WORKLOADS

    w = WORKLOADS["contradiction"]
    lex = Lexicon(w.vocabulary().entities, w.vocabulary().phrases)

    def run(known: int, embedder: HashingEmbedder) -> tuple[Any, ...]:
        st = MemoryStore(POLICIES["keep_all"](), embedder, KeywordTeacher(lex))
        st._known.limit = known
        out = [[(h.obs_id, h.score) for h in hits] for hits in _replay(st, 4, 1200)]
        cols = st.cols
        return (out, cols.importance[: cols.n].tolist(), cols.ntok[: cols.n].tolist(),
                [d.tolist() for d in cols.dims], [len(st._known.kept)])

    kept, few, never = (run(4096, HashingEmbedder()), run(2, HashingEmbedder()),
                        run(4096, _WriteableEmbedder()))
    assert kept[:4] == few[:4] == never[:4]
    assert kept[4][0] > 100 and few[4][0] <= 2 and never[4] == [0]
    # the process keeps the last store's entries of each text (``bookkeeping._PROCESS``):
    # a store whose embedder gives other vectors (another dimension) must not take them
    from memcore import bookkeeping

    bookkeeping._PROCESS.clear()  # (what earlier tests in this process left: not ours)
    assert run(4096, HashingEmbedder())[:4] == kept[:4]
    assert len(bookkeeping._PROCESS) > 100
    other_dim = run(4096, HashingEmbedder(dim=256))
    bookkeeping._PROCESS.clear()
    assert run(4096, HashingEmbedder(dim=256))[:4] == other_dim[:4]
    assert other_dim[3] != kept[3]


def test_the_columns_know_their_dead_rows() -> None:
    """Prevents a ranking that masks the dead rows by their numbers (``Columns.
    dead_rows``) from missing one or masking a live one: through a job's removals and
    compactions the rows ``kill`` recorded are exactly the dead ones, and a ``live``
    written otherwise makes the columns say they do not know."""
    from workloads import WORKLOADS, Observe

    w = WORKLOADS["contradiction"]
    lex = Lexicon(w.vocabulary().entities, w.vocabulary().phrases)
    cls = POLICIES["ebbinghaus"]
    st = MemoryStore(cls(cls.Params(tau=30)), HashingEmbedder(), KeywordTeacher(lex))
    st.COMPACT_MIN_DEAD = 64
    layouts, dead_seen = set(), 0
    for i, ev in enumerate(w.events(1, 1500, w.Params())):
        if isinstance(ev, Observe):
            st.add(ev.text, ev.t, obs_id=i)
            cols = st.cols
            dead = cols.dead_rows()
            assert dead is not None
            assert sorted(dead.tolist()) == np.flatnonzero(~cols.live[: cols.n]).tolist()
            layouts.add(cols.layout)
            dead_seen = max(dead_seen, len(dead))
    assert len(layouts) > 2 and dead_seen > 10
    row = int(np.flatnonzero(cols.live[: cols.n])[0])
    cols.live[row] = False  # (not through ``kill``)
    cols.n_live -= 1
    assert cols.dead_rows() is None


def test_sizes_and_tokens_track_live_entries() -> None:
    """Prevents drift between the incremental counters and the live entries."""
    s = store("last_write_wins")
    s.add("Alice's home city is boston.", 0)
    s.add("Alice's home city is now denver.", 1)
    s.add("Bob's salary is 90k.", 2)
    assert s.size == 2
    assert s.live_tokens == len("Alice's home city is now denver.".split()) + 4
    assert s.peak_size == 2


def test_top_k_over_many_entries_equals_a_full_sort() -> None:
    """Prevents the large-store shortcuts (a floor from the newest rows before the
    partial sort, recencies kept between queries of the same time, scratch buffers)
    from returning anything but the exact top k of a full sort, ties to the newer."""
    import numpy as np

    from memcore import POLICIES, HashingEmbedder, MemoryStore

    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(40)]
    store = MemoryStore(POLICIES["ebbinghaus"](), HashingEmbedder(), None)
    for t in range(9000):
        # few distinct texts: many exact ties
        store.add(" ".join(rng.choice(words, 3)), t // 3)
        if t % 500 == 499:
            for _ in range(3):  # several queries at one time, adds in between
                q = " ".join(rng.choice(words, 2))
                now = t // 3
                expected = store.scores(q, now)
                n = len(expected)
                rows = np.arange(n)
                order = rows[np.lexsort((-rows, -expected))][:5]
                got = [h.eid for h in store.retrieve(q, now)]
                assert got == [int(store.cols.eid[r]) for r in order]
                store.add(q + " again", now)
    assert store.cols.n > 4096
