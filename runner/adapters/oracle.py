"""``oracle``: the best any policy could do with fbench's retriever, given ground truth.

It is an adapter of the harness (it reads the truth, which memcore never sees): the
reference store with nothing forgotten by a policy, where the oracle removes

- a fact exactly when ground truth supersedes it (a newer assertion of its slot), and
- under a memory budget (``capacity`` or ``store.budget`` entries, ``capacity_fraction``
  of the workload's distinct facts, ``store.budget_tokens`` tokens; 0 = unlimited),
  whenever the store is over it:
  distractors first (oldest first), then Belady's rule over the future questions: the
  still-valid entry whose slot is asked next the latest (never again: first), the
  older first on a tie.

The job tells it each observation's true slot before the store reads the text
(``hint_truth``) and lets it read the stream's questions ahead (``foresee``: a second
pass over the same seeded stream, keeping only each question's time and slot).
Retrieval is the reference store's, unchanged (``store.*`` parameters apply).
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memcore import EMBEDDERS, POLICIES, MemoryStore, StoreParams
from memcore.embed import BatchEmbedder
from runner.adapters.base import Hit, MemoryKind, store_embedder
from runner.adapters.reference import PrefetchingMixin, StoreAdapter
from runner.errors import FbenchError, lookup

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "oracle"
SUPERSEDED = "superseded (oracle)"
BUDGET = "budget (oracle)"


@dataclass(frozen=True)
class OracleParams:
    """The memory budget the oracle works under (0: unlimited)."""

    capacity: int = 0
    capacity_fraction: float = 0.0

    def __post_init__(self) -> None:
        if self.capacity < 0 or self.capacity_fraction < 0:
            raise ValueError("oracle capacity and capacity_fraction must be >= 0 (0: no budget)")


class OracleAdapter(StoreAdapter):
    """The reference store, with removals decided by ground truth (no extractor, so no
    extractor diagnostics)."""

    def __init__(self, store: MemoryStore, capacity: int, token_capacity: int = 0) -> None:
        super().__init__(store)
        self.capacity = capacity
        self.token_capacity = token_capacity
        self._next_slot: str | None = None
        self._holder: dict[str, int] = {}      # slot -> the live observation asserting it
        self._slot_of: dict[int, str] = {}     # live slot-asserting observation -> slot
        self._distractors: deque[int] = deque()  # live observations asserting no slot
        self._asked: dict[str, deque[int]] = {}  # slot -> times it is asked, from now on
        self._questions: deque[str] = deque()    # slots of the questions still to come

    # the harness's side channel -------------------------------------------------------
    def hint_truth(self, slot: str | None, seed: int, obs_id: int) -> None:
        self._next_slot = slot

    def foresee(self, events: Iterable[Any]) -> None:
        from workloads import Query  # here: `fbench list` loads this module

        for ev in events:
            if isinstance(ev, Query):
                self._asked.setdefault(ev.truth.slot, deque()).append(ev.t)
                self._questions.append(ev.truth.slot)

    # the adapter interface ------------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        slot, self._next_slot = self._next_slot, None
        self.store.add(text, t, obs_id, meta)
        if slot is None:
            self._distractors.append(obs_id)
        else:
            old = self._holder.get(slot)
            if old is not None:
                self.store.forget([old], t, SUPERSEDED)
                del self._slot_of[old]
            self._holder[slot] = obs_id
            self._slot_of[obs_id] = slot
        if self.capacity or self.token_capacity:
            self._fit(t)

    def _over(self) -> bool:
        return bool((self.capacity and self.store.size > self.capacity)
                    or (self.token_capacity and self.store.live_tokens > self.token_capacity))

    def _next_ask(self, obs: int) -> tuple[float, int]:
        """When the entry's slot is asked next (never: infinity); the older ranks later."""
        times = self._asked.get(self._slot_of[obs])
        return (times[0] if times else math.inf, -obs)

    def _fit(self, t: int) -> None:
        while self._over():
            if self._distractors:
                victim = self._distractors.popleft()
            else:  # Belady: the entry asked next the latest
                victim = max(self._slot_of, key=self._next_ask)
                del self._holder[self._slot_of.pop(victim)]
            self.store.forget([victim], t, BUDGET)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        if self._questions:  # this question is now past: its slot's next ask moves on
            slot = self._questions.popleft()
            self._asked[slot].popleft()
        return super().query(t, text, k)

    def _asked_now(self, n: int) -> None:
        """``n`` questions are past, as ``query`` moves each on."""
        for _ in range(n):
            if self._questions:
                self._asked[self._questions.popleft()].popleft()

    def query_many(self, t: int, texts: list[str], k: int) -> list[list[Hit]]:
        self._asked_now(len(texts))
        return super().query_many(t, texts, k)

    def query_ids(self, t: int, texts: list[str], k: int) -> np.ndarray:
        self._asked_now(len(texts))
        return super().query_ids(t, texts, k)


def build(policy_params: OracleParams, store_params: StoreParams, vocab: Vocabulary) -> Any:
    make_embedder = lookup(EMBEDDERS, store_params.embedder, "embedder")
    # the oracle meets a budget itself (store.budget is its capacity already, see
    # runner.spec.resolve.with_budget; store.budget_tokens here): the store's cap stays off
    plain = dataclasses.replace(store_params, budget=0, budget_tokens=0)
    try:
        store = MemoryStore(POLICIES["keep_all"](), make_embedder(), None, plain)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None
    cls = PrefetchingOracle if isinstance(store.embedder, BatchEmbedder) else OracleAdapter
    return cls(store, policy_params.capacity, store_params.budget_tokens)


class PrefetchingOracle(PrefetchingMixin, OracleAdapter):
    """The oracle with a batching embedder."""


# Registered through fbench's own entry point (fbench.memories: oracle), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="oracle",
    description="the bound: removes what ground truth supersedes and, under a budget, "
                "distractors then the entry asked next the latest (Belady), same retriever",
    Params=OracleParams, StoreParams=StoreParams, build=build,
    embedder=store_embedder))

