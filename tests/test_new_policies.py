"""The capacity, time and pinned policies (fifo, lru, lfu, lifo, ttl, window, pinned.*)
on hand-built sequences: exact survivors and exact forget-log entries."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from memcore import POLICIES, HashingEmbedder, Lexicon, MemoryStore
from memcore.extract.teacher import KeywordTeacher
from memcore.policies.capacity import lowest

LEX = Lexicon(("alice", "bob"), (("home city", "home_city"), ("salary", "salary")))
# Disjoint words: a query equal to one text retrieves that entry first.
TEXTS = ["apple banana", "cherry date", "elder fig", "grape honeydew", "kiwi lemon"]


def make(name: str, slots: bool = False, **params: object) -> MemoryStore:
    cls = POLICIES[name]
    return MemoryStore(cls(cls.Params(**params)), HashingEmbedder(),
                       KeywordTeacher(LEX) if slots else None)


def survivors(store: MemoryStore) -> list[int]:
    cols = store.cols
    return sorted(int(o) for o in cols.obs_id[: cols.n][cols.live[: cols.n]])


def log(store: MemoryStore) -> list[tuple[int, str, float]]:
    return [(r.obs_id, r.reason, r.score) for r in store.forget_log.records()]


def add(store: MemoryStore, obs: int, t: int, text: str | None = None, tags: str = "") -> None:
    store.add(TEXTS[obs] if text is None else text, t, obs, meta={"tags": tags})


def capacity_run(name: str) -> MemoryStore:
    """Capacity 3. After the retrievals: obs 0 has 2 accesses (last at 4), obs 1 one
    (last at 5), obs 2 none (last access = its insert, 2). Then two more adds."""
    s = make(name, capacity=3)
    for obs in range(3):
        add(s, obs, obs)
    for text, now in ((TEXTS[0], 3), (TEXTS[0], 4), (TEXTS[1], 5)):
        (hit,) = s.retrieve(text, now, 1)
        assert hit.obs_id == TEXTS.index(text)
    add(s, 3, 6)
    add(s, 4, 7)
    return s


@pytest.mark.parametrize(
    ("name", "alive", "forgotten"),
    [
        ("fifo", [2, 3, 4], [(0, "capacity", 0.0), (1, "capacity", 1.0)]),
        ("lru", [1, 3, 4], [(2, "capacity", 2.0), (0, "capacity", 4.0)]),
        ("lfu", [0, 1, 4], [(2, "capacity", 0.0), (3, "capacity", 0.0)]),
        ("lifo", [0, 1, 2], [(3, "capacity", 6.0), (4, "capacity", 7.0)]),
    ],
)
def test_capacity_policies_evict_by_their_key(
    name: str, alive: list[int], forgotten: list[tuple[int, str, float]]
) -> None:
    """Prevents a capacity policy ranking by the wrong key (or ignoring retrievals): the
    same adds and retrievals leave four different survivor sets, logged with the key
    each victim was ranked by (fifo insert turn, lru last access, lfu access count, lifo
    insert turn); lfu breaks its access-count tie by the less recent access."""
    s = capacity_run(name)
    assert s.policy.capacity == 3
    assert s.size == 3
    assert survivors(s) == alive
    assert log(s) == forgotten


@pytest.mark.parametrize(("name", "victim"), [("fifo", 0), ("lru", 0), ("lfu", 0), ("lifo", 2)])
def test_capacity_ties_go_by_entry_id(name: str, victim: int) -> None:
    """Prevents an unstable tie-break when every key is equal (same turn, no access): the
    lowest entry id goes, except for lifo, which refuses the newest."""
    s = make(name, capacity=2)
    for obs in range(3):
        add(s, obs, 5)
    assert survivors(s) == sorted({0, 1, 2} - {victim})
    assert [r.obs_id for r in s.forget_log.records()] == [victim]


def test_lfu_breaks_count_ties_by_last_access_before_entry_id() -> None:
    """Prevents an LFU tie-break by entry id alone. With nondecreasing times an unread
    entry's last access is its insert time (same order as its id), so the times here
    go backwards to tell the two apart."""
    s = make("lfu", capacity=2)
    add(s, 0, 5)
    add(s, 1, 3)
    add(s, 2, 6)
    assert survivors(s) == [0, 2]
    assert log(s) == [(1, "capacity", 0.0)]


def test_lifo_keeps_its_oldest_entries() -> None:
    """Prevents a LIFO that evicts old entries: once full it refuses every new one."""
    s = make("lifo", capacity=2)
    for obs in range(5):
        add(s, obs, obs)
    assert survivors(s) == [0, 1]
    assert [r.obs_id for r in s.forget_log.records()] == [2, 3, 4]


def test_lowest_is_lexicographic_with_ties_across_the_partition() -> None:
    """Prevents the partition shortcut from dropping a tied candidate that the secondary
    key ranks first (k > 1, ties at the k-th primary value)."""
    primary = np.array([3, 1, 2, 2, 2, 0])
    eid = np.array([0, 1, 5, 3, 4, 2])
    assert lowest((primary, eid), 3).tolist() == [5, 1, 3]
    assert lowest((primary, eid), 10).tolist() == [5, 1, 3, 4, 2, 0]


def test_ttl_removes_exactly_the_entries_older_than_max_age() -> None:
    """Prevents an off-by-one expiry (age == max_age survives) and a TTL that ignores
    ticks or adds; the logged score is the age."""
    s = make("ttl", max_age=2.0)
    for obs in range(3):
        add(s, obs, obs)
    assert survivors(s) == [0, 1, 2]
    s.tick(4)
    assert survivors(s) == [2]
    assert log(s) == [(0, "expired", 4.0), (1, "expired", 3.0)]
    add(s, 3, 5)
    assert survivors(s) == [3]
    assert log(s)[-1] == (2, "expired", 3.0)


def test_window_removes_superseded_at_once_and_expired_past_the_window() -> None:
    """Prevents a window without last-write-wins (a superseded fact lingering until it
    ages out) or with an off-by-one window."""
    s = make("window", slots=True, window=10.0)
    add(s, 0, 0, "Alice's home city is boston.")
    add(s, 1, 1, "Bob's salary is 90k.")
    add(s, 2, 2, "The team talked about a movie.")
    add(s, 3, 5, "Alice's home city is now denver.")
    assert survivors(s) == [1, 2, 3]
    assert log(s) == [(0, "superseded", 0.0)]
    s.tick(12)  # ages 11, 10, 7: only obs 1 is past the window
    assert survivors(s) == [2, 3]
    assert log(s)[1:] == [(1, "expired", 11.0)]
    add(s, 4, 13, "Bob's salary is now 100k.")
    assert survivors(s) == [3, 4]
    assert log(s)[2:] == [(2, "expired", 11.0)]


def test_window_removes_superseded_and_expired_at_one_add() -> None:
    """Prevents a removal of a dead row or a lost expiry when both kinds are due at one
    add: the superseded entry and the expired one go together, each with its reason."""
    s = make("window", slots=True, window=10.0)
    add(s, 0, 0, "The team talked about a movie.")
    add(s, 1, 1, "Alice's home city is boston.")
    add(s, 2, 20, "Alice's home city is now denver.")
    assert survivors(s) == [2]
    assert log(s) == [(1, "superseded", 0.0), (0, "expired", 20.0)]
    # At a tick both kinds go at once.
    s2 = make("window", slots=True, window=10.0)
    add(s2, 0, 0, "The team talked about a movie.")
    s2.tick(11)
    assert log(s2) == [(0, "expired", 11.0)]


def test_pinned_inner_capacity_still_evicts_unpinned_entries() -> None:
    """Prevents the seed library's bug (pinning disabled eviction) and pinned entries
    being evicted: the inner fifo bounds the unpinned entries and evicts the oldest of
    them, so the size is capacity + pinned count."""
    s = make("pinned.fifo", capacity=2, pin_tags="fact")
    tags = ["fact", "", "fact", "", "remark", "fact", ""]
    for obs, tag in enumerate(tags):
        add(s, obs, obs, text=f"entry number {obs}", tags=tag)
    assert s.policy.capacity == 2
    assert survivors(s) == [0, 2, 4, 5, 6]
    assert s.size == 2 + 3
    assert log(s) == [(1, "capacity", 1.0), (3, "capacity", 3.0)]


def test_pinned_ttl_still_expires_unpinned_entries() -> None:
    """Prevents a pinned wrapper that stops a time-based inner policy (the seed's pinned
    TTL never expired anything): unpinned entries expire on add and on tick."""
    s = make("pinned.ttl", max_age=2.0)
    add(s, 0, 0, tags="instruction")
    add(s, 1, 0)
    add(s, 2, 3)  # obs 1 is 3 old: expires at this add; pinned obs 0 stays
    assert survivors(s) == [0, 2]
    s.tick(10)
    assert survivors(s) == [0]
    assert log(s) == [(1, "expired", 3.0), (2, "expired", 7.0)]


def test_pin_tag_first_seen_later_is_honoured() -> None:
    """Prevents a pin mask computed once (before the tag had a bit): an entry carrying a
    pin tag seen for the first time later is pinned, and unpinned ones still go."""
    s = make("pinned.lru", capacity=1, pin_tags="instruction")
    add(s, 0, 0, tags="remark")
    add(s, 1, 1, tags="remark")
    assert survivors(s) == [1]
    add(s, 2, 2, tags="remark,instruction")
    add(s, 3, 3)
    add(s, 4, 4, tags="instruction")
    assert survivors(s) == [2, 3, 4]
    assert [r.obs_id for r in s.forget_log.records()] == [0, 1]


def test_pinned_superseded_entry_is_kept_by_pinned_window() -> None:
    """Prevents a pinned fact being dropped by supersession, while an unpinned superseded
    entry still goes at once."""
    s = make("pinned.window", slots=True, pin_tags="fact")
    add(s, 0, 0, "Alice's home city is boston.", tags="fact")
    add(s, 1, 1, "Bob's salary is 90k.")
    add(s, 2, 2, "Alice's home city is now denver.")
    add(s, 3, 3, "Bob's salary is now 100k.")
    assert survivors(s) == [0, 2, 3]
    assert log(s) == [(1, "superseded", 0.0)]


@pytest.mark.parametrize("name", ["fifo", "lfu", "window", "ttl"])
def test_pinned_without_pinned_tags_equals_its_inner_policy(name: str) -> None:
    """Prevents the wrapper changing behaviour when nothing is pinned."""
    runs = []
    for policy in (name, f"pinned.{name}"):
        s = make(policy, slots=True)
        for i in range(150):
            add(s, i, i, f"Alice's home city is now {i % 7} and word{i % 11}")
            if i % 5 == 0:
                s.retrieve("What is Alice's home city?", i, 3)
            if i % 40 == 0:
                s.tick(i)
        runs.append((survivors(s), log(s)))
    assert runs[0] == runs[1]


def test_every_policy_has_one_pinned_wrapper_with_the_inner_params() -> None:
    """Prevents a missing or doubly wrapped pinned policy, or a wrapper whose parameters
    differ from the inner policy's plus pin_tags."""
    plain = sorted(n for n in POLICIES if not n.startswith("pinned."))
    assert sorted(n for n in POLICIES if n.startswith("pinned.")) == [
        f"pinned.{n}" for n in plain
    ]
    for name in plain:
        inner = dataclasses.asdict(POLICIES[name].Params())
        wrapped = POLICIES[f"pinned.{name}"].Params()
        assert dataclasses.asdict(wrapped) == inner | {"pin_tags": "fact,instruction"}
        assert POLICIES[f"pinned.{name}"]().capacity == POLICIES[name]().capacity


def test_pinned_params_pickle() -> None:
    """Prevents generated classes that cannot be shipped to a Ray worker by pickle."""
    p = POLICIES["pinned.fifo"].Params(capacity=7, pin_tags="fact")
    assert pickle.loads(pickle.dumps(p)) == p
    assert pickle.loads(pickle.dumps(POLICIES["pinned.fifo"])) is POLICIES["pinned.fifo"]


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("fifo", {"capacity": 0}, "capacity must be >= 1"),
        ("lru", {"capacity": 2.5}, "capacity must be an integer"),
        ("lfu", {"capacity": True}, "capacity must be an integer"),
        ("lifo", {"capacity": -3}, "capacity must be >= 1"),
        ("ttl", {"max_age": 0.0}, "max_age must be positive"),
        ("window", {"window": -1.0}, "window must be positive"),
        ("pinned.fifo", {"capacity": 0}, "capacity must be >= 1"),
        ("pinned.ebbinghaus", {"tau": 0.0}, "tau must be positive"),
        ("pinned.keep_all", {"pin_tags": ""}, "pin_tags must be comma-separated"),
        ("pinned.ttl", {"pin_tags": "fact,,instruction"}, "pin_tags must be comma-separated"),
    ],
)
def test_params_are_validated(name: str, params: dict[str, object], message: str) -> None:
    """Prevents a nonsensical parameter from building a policy silently (the pinned
    wrappers keep the inner policy's validation)."""
    with pytest.raises(ValueError, match=message):
        POLICIES[name].Params(**params)


@pytest.mark.parametrize("name", ["fifo", "lifo"])
@pytest.mark.parametrize("turns", ["in order", "out of order"])
def test_insert_order_victims_are_the_ranked_ones(name: str, turns: str) -> None:
    """Prevents fifo's and lifo's shortcut (the first or last live rows, while turns
    never decrease along the rows: ``TurnOrder``) from evicting other entries, or other
    scores, than ranking every live row by (turn, entry id) does, including after the
    rows are compacted and when a turn goes back (then every eviction ranks)."""
    cls = POLICIES[name]

    class Ranked(cls):  # type: ignore[misc, valid-type]
        def in_order(self, cols: object, k: int) -> None:
            return None

    rng = np.random.default_rng(7)
    t_of = np.cumsum(rng.integers(0, 3, 400))
    if turns == "out of order":
        t_of[250] = 3  # a turn back, after the shortcut has run
    stores = [MemoryStore(p(p.Params(capacity=40)), HashingEmbedder(), None)
              for p in (cls, Ranked)]
    for i, t in enumerate(t_of.tolist()):
        for store in stores:
            store.add(f"note {i % 97} about thing {i % 13}", t)
    logs = [[(r.eid, r.score, r.turn) for r in s.forget_log.records()] for s in stores]
    assert logs[0] == logs[1] and len(logs[0]) == 400 - 40
    assert survivors(stores[0]) == survivors(stores[1])
