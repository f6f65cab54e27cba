"""The lifecycle workloads of version 1 (retired: ``lifecycle@1`` and the variants'
``@1`` names): the shared ``Workload`` body and one named preset (a ``Params`` subclass
and a description) per variant. A retired version's streams never change."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from workloads.events import Event
from workloads.lifecycle.params import LifecycleParams
from workloads.lifecycle.stream import DayStream, stream_seed
from workloads.lifecycle.vocab import CATEGORIES, DURABLE_BANK, EPHEMERAL_BANK, UPDATE_KINDS
from workloads.registry import Vocabulary, register_retired_workload


class _Lifecycle:
    """Shared body of the lifecycle variants; each subclass is one registered preset."""

    name = "lifecycle"
    version = "1"
    horizon_unit = "days"
    default_horizon = 365
    description = ""
    categories = CATEGORIES
    update_kinds = UPDATE_KINDS
    Params: type[LifecycleParams] = LifecycleParams

    def vocabulary(self) -> Vocabulary:
        entities: dict[str, None] = {}
        phrases: dict[tuple[str, str], None] = {}
        for fact in (*DURABLE_BANK, *EPHEMERAL_BANK):
            entities[fact.entity] = None
            phrases[(fact.attr.phrase, fact.attr.name)] = None
        return Vocabulary(tuple(entities), tuple(phrases))

    def distinct_facts(self, params: LifecycleParams) -> int:
        """The number of distinct durable-fact slots of a stream (ephemeral topics excluded)."""
        return params.n_durable

    def stream(self, rng: random.Random, horizon: int, params: LifecycleParams) -> DayStream:
        return DayStream(rng, horizon, params)

    def events(self, seed: int, horizon: int, params: LifecycleParams) -> Iterator[Event]:
        rng = random.Random(stream_seed(self.name, seed))
        if horizon <= 0:
            return
        stream = self.stream(rng, horizon, params)
        for t in range(horizon):
            yield from stream.day(t)



_COMMON = (
    " Each day (t = day index, horizon in days, default 365) has captures tagged like "
    "Lethe's (fact, preference, instruction, tool_result, remark, chitchat, small_talk), "
    "then questions, then a Tick where a store consolidates. {n} durable facts: 75% "
    "captured in the first 30 days, 25% uniformly in the second half (so keeping the oldest "
    "items cannot win by capture order); 3% of ordinary captures update a fact (a fifth of "
    "them in a paraphrase the keyword extractor cannot link), 25% are ephemeral items valid "
    "for 3 days, the rest chitchat (30% of it naming a person). Questions are held-out "
    "paraphrases sharing the subject and attribute nouns with the capture, never the "
    "answer; category 'recent' (ephemeral, or current value written in the last 7 days) "
    "or 'durable'."
)


@register_retired_workload
class LifecycleV1(_Lifecycle):
    name = "lifecycle"
    description = (
        "Version 1 of the lifecycle family. "
        "Lethe's default mix: a simulated agent session over days, 5-8 captures and 3-5 "
        "questions a day (30% drawn from recent items): about 2,350 captures and 1,450 "
        "questions over 365 days." + _COMMON.format(n=40)
    )


@dataclass(frozen=True)
class DurableHeavyParams(LifecycleParams):
    n_durable: int = 30
    ask_all_durable: bool = True
    questions_min: int = 1
    questions_max: int = 2


@register_retired_workload
class DurableHeavyV1(_Lifecycle):
    name = "lifecycle.durable_heavy"
    Params = DurableHeavyParams
    description = (
        "Version 1 of the lifecycle family. "
        "Lethe's durable_heavy: every captured durable fact is asked every day (30 facts, "
        "about 8,900 questions over 365 days), on top of 1-2 ordinary questions a day; "
        "otherwise the default mix. Long-term retention is exercised constantly, so a "
        "frequency or access signal sees every fact." + _COMMON.format(n=30)
    )


@dataclass(frozen=True)
class RecencyBiasedParams(LifecycleParams):
    p_recent_question: float = 0.8


@register_retired_workload
class RecencyBiasedV1(_Lifecycle):
    name = "lifecycle.recency_biased"
    Params = RecencyBiasedParams
    description = (
        "Version 1 of the lifecycle family. "
        "Lethe's recency_biased: 80% of questions are drawn from recent items (ephemeral "
        "items still valid and durable facts written in the last 7 days), the rest from all "
        "captured durable facts; otherwise the default mix. Rewards short-term memory while "
        "still charging for forgotten durable facts." + _COMMON.format(n=40)
    )


@dataclass(frozen=True)
class HighFreqSkewParams(LifecycleParams):
    hot_per_day: int = 10


@register_retired_workload
class HighFreqSkewV1(_Lifecycle):
    name = "lifecycle.high_freq_skew"
    Params = HighFreqSkewParams
    description = (
        "Version 1 of the lifecycle family. "
        "Lethe's high_freq_skew: one durable fact (drawn among those captured early) is "
        "asked 10 more times every day once captured, on top of the default 3-5 questions, "
        "so a frequency signal concentrates on it while the other facts go cold."
        + _COMMON.format(n=40)
    )


@dataclass(frozen=True)
class BurstyParams(LifecycleParams):
    burst_share: float = 0.1


@register_retired_workload
class BurstyV1(_Lifecycle):
    name = "lifecycle.bursty"
    Params = BurstyParams
    description = (
        "Version 1 of the lifecycle family. "
        "Lethe's bursty: each day is independently a burst day with probability 0.1 (about "
        "37 of 365), with 50 captures and 10 questions instead of 5-8 and 3-5, in the same "
        "mix; capacity-bounded policies face real overflow pressure on burst days."
        + _COMMON.format(n=40)
    )
