"""``memware``: memware's belief ledger (``pip install memware``), driven as its
``remember`` and ``recall`` tools drive it, offline, on the simulated clock.

memware keeps two stores in one SQLite file: transcript turns (immutable evidence, which
it indexes from an agent harness's transcript files and never forgets) and a
bi-temporal ledger of beliefs, ``(subject, relation) -> value``, where a newer value for
a key supersedes the current one and recall only returns current beliefs. The ledger is
what forgets, so it is what this adapter exercises.

- **Observe** → ``assert_belief(store, subject, relation, value, valid_from=<stream
  time>, source="fbench:obs=<id>", reliability=0.5, policy=...)``, what the
  ``remember`` tool calls. memware takes the triple from its caller (an agent, or its
  LLM ``derive``, not used: no LLM here); the caller here is fbench's own extractor
  (``policy.extractor``, built from the workload's vocabulary, never its truth): the
  slot ``entity.attribute`` it finds is the subject and the relation, and the whole
  observation text is the value. An observation the extractor links to no slot is no
  belief: it is not stored (forgotten at once, ``not_a_belief``).
- **Outcomes** (the ledger's own rule): a new key is created; the same value
  (normalised text) reinforces the current belief, which then stands for both
  observations (its newest is returned); a newer different value supersedes it (its
  observations are forgotten, ``superseded``); a challenger the policy gates
  (``await_confirmation``, or a weaker one under ``gate_conflicts``) is parked as a
  review candidate, which recall never returns (``pending_review``).
- **Query** → ``search_beliefs_multi(store, [text], k=k)``, the ``recall`` tool on
  beliefs: FTS5 BM25 over subject, relation and value, times reliability, times its
  activation ``(1 + age_days)^-decay * (1 + 0.5 ln(1 + uses))``; it records each use.
- **Tick**: nothing (the ledger has no maintenance: supersession happens at assert).
- **Clock.** memware reads ``datetime.now(UTC)`` in ``memware.store`` (``now_iso``:
  ``recorded_at``, ``last_used``), ``memware.index`` (the activation's age) and
  ``memware.volatile``; those modules run on the stream's clock
  (``fbench.clock.simulate``), set before every call, and ``valid_from`` is the same time.
  The store is SQLite ``:memory:``, one per job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fbench.clock import DAYS, Clock, simulate
from fbench.extras import import_module
from memcore import EXTRACTORS, Lexicon
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "memware"
SOURCE = "fbench:obs="
EXTRACTOR_NAMES = ("auto", "keyword", "tagger")
CONFLICTS = ("gate_conflicts", "auto", "await_confirmation")


@dataclass(frozen=True)
class MemwareParams:
    """``extractor``: fbench's, naming each observation's (subject, relation);
    ``conflicts``: the ledger's policy for a newer value (memware's ``Policy``);
    ``decay``: the activation's age exponent in belief recall (memware's 0.1);
    ``reliability``: each assertion's (the ``remember`` tool's 0.5)."""

    extractor: str = "auto"
    conflicts: str = "gate_conflicts"
    decay: float = 0.1
    reliability: float = 0.5

    def __post_init__(self) -> None:
        for name, value, choices in (("extractor", self.extractor, EXTRACTOR_NAMES),
                                     ("conflicts", self.conflicts, CONFLICTS)):
            if value not in choices:
                raise ValueError(f"{NAME} {name} {value!r} is not one of {', '.join(choices)}")
        if self.decay < 0:
            raise ValueError(f"{NAME} decay must be >= 0, got {self.decay}")
        if not 0.0 <= self.reliability <= 1.0:
            raise ValueError(f"{NAME} reliability must be within [0, 1], got {self.reliability}")


class MemwareAdapter:
    """One job's memware ``Store`` (SQLite in memory) behind the harness's interface."""

    def __init__(self, memware: Any, extractor: Any, p: MemwareParams) -> None:
        from memware import index, ledger, store, volatile

        self.p = p
        self._index, self._ledger = index, ledger
        self._time = simulate(store, DAYS, index, volatile)
        self._policy = ledger.Policy(p.conflicts)
        self.extractor = extractor
        self.store = memware.Store(":memory:")
        self._obs_of: dict[int, list[int]] = {}  # belief id -> its observations, oldest first
        self._belief_of: dict[int, int] = {}     # observation id -> belief id
        self._slot_of: dict[int, str] = {}
        self._current: set[int] = set()          # beliefs recall may return
        self._tokens_of: dict[int, int] = {}
        self._size = self._tokens = 0
        self._counts: dict[str, int] = {}

    # the simulated clock -------------------------------------------------------------
    def use_clock(self, clock: Clock) -> None:
        self._time.use_clock(clock)

    def _forget(self, obs: list[int], reason: str) -> None:
        self._counts[reason] = self._counts.get(reason, 0) + len(obs)

    def _retire(self, belief: int, reason: str) -> None:
        if belief in self._current:
            self._current.discard(belief)
            gone = self._obs_of.get(belief, [])
            self._size -= len(gone)
            self._tokens -= sum(self._tokens_of[o] for o in gone)
            self._forget(gone, reason)

    # the adapter interface -----------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        slot = self.extractor.extract(text)
        n = self._tokens_of[obs_id] = whitespace_tokens(text)
        if slot is None:
            self._forget([obs_id], "not_a_belief")
            return
        self._slot_of[obs_id] = slot
        subject, _, relation = slot.partition(".")
        when = self._time.at(t).strftime("%Y-%m-%dT%H:%M:%SZ")
        r = self._ledger.assert_belief(
            self.store, subject, relation.replace("_", " "), text, valid_from=when,
            source=f"{SOURCE}{obs_id}", reliability=self.p.reliability, policy=self._policy)
        outcome = self._ledger.Outcome
        self._belief_of[obs_id] = r.belief_id
        self._obs_of.setdefault(r.belief_id, []).append(obs_id)
        if r.outcome in (outcome.PENDING_REVIEW, outcome.HISTORICAL):
            self._forget([obs_id], "pending_review" if r.outcome is outcome.PENDING_REVIEW
                         else "historical")
            return
        if r.outcome is outcome.SUPERSEDED and r.incumbent_id is not None:
            self._retire(r.incumbent_id, "superseded")
        if r.outcome is outcome.REINFORCED and r.belief_id not in self._current:
            raise RuntimeError(f"memware reinforced belief {r.belief_id}, which is not current")
        self._current.add(r.belief_id)
        self._size += 1
        self._tokens += n

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._time.at(t)
        hits = self._index.search_beliefs_multi(self.store, [text], k=k, decay=self.p.decay)
        # a belief stands for every observation that asserted its value: its newest
        return [Hit(self._obs_of[h.id][-1], float(h.score)) for h in hits[:k]]

    def tick(self, t: int) -> None:
        """The ledger has no maintenance: it supersedes when a value is asserted."""

    def ignores_ticks(self) -> bool:
        return True

    def linked_slot(self, obs_id: int) -> str | None:
        return self._slot_of.get(obs_id)

    def holds(self, obs_id: int) -> bool:
        return self._belief_of.get(obs_id, -1) in self._current

    def size(self) -> int:
        return self._size

    def stored(self) -> int:
        """The ledger's own count of the observations its current committed beliefs
        stand for (the contract test checks it against ``size``)."""
        rows = self.store.conn.execute(
            "SELECT id FROM belief WHERE valid_to IS NULL AND status='committed'").fetchall()
        return sum(len(self._obs_of.get(int(r[0]), ())) for r in rows)

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)


def build(policy_params: MemwareParams, store_params: Any, vocab: Vocabulary) -> Any:
    memware = import_module("memware", f"policy {NAME!r}")
    try:
        extractor = EXTRACTORS[policy_params.extractor](Lexicon(vocab.entities, vocab.phrases))
        return MemwareAdapter(memware, extractor, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


def _rule(p: MemwareParams) -> str:
    gate = {"gate_conflicts": "a newer value supersedes (a weaker one goes to review)",
            "auto": "a newer value supersedes",
            "await_confirmation": "a newer value waits for review (never supersedes)"}
    return (f"belief ledger by (subject, relation): {gate[p.conflicts]}; recall ranks by "
            f"BM25 x activation (decay {p.decay:g}); unlinked observations are not kept")


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = MemoryKind(
    name=NAME, family="incumbent",
    description="memware's belief ledger (0.11.0): deterministic supersession by "
                "(subject, relation) from fbench's extractor, BM25 x activation recall, "
                "on the simulated clock",
    Params=MemwareParams, StoreParams=None, build=build,
    library=("memware",), imports=("memware",), forgets=_rule)
