"""The current lifecycle workloads (version 2): version 1's five presets on the day
stream of ``stream2`` (interfering mentions, oblique questions, rarely asked facts)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from workloads.lifecycle.params import LifecycleParams
from workloads.lifecycle.stream import DayStream
from workloads.lifecycle.stream2 import DayStream2, LifecycleParams2
from workloads.lifecycle.variants import _COMMON, _Lifecycle
from workloads.registry import register_workload

_V2 = (
    " Version 2 adds what makes retrieval and forgetting choices matter: 25% of the "
    "chitchat is an interfering mention, one person asking about another's captured fact "
    "(\"Marco asked whether Priya's favorite drink is still tea.\": no fact, but the "
    "keyword extractor links it to the asker's slot, and it shares a question's words); "
    "30% of questions are oblique (\"Remind me, what drink for Priya?\": the subject and "
    "one attribute word); 30% of the durable facts are asked a tenth as often as the "
    "others, so access signals mislead. Version 1 is `{name}@1`."
)


class _Lifecycle2(_Lifecycle):
    version = "2"
    Params: type[LifecycleParams2] = LifecycleParams2

    def stream(self, rng: random.Random, horizon: int, params: LifecycleParams) -> DayStream:
        assert isinstance(params, LifecycleParams2)
        return DayStream2(rng, horizon, params)


@register_workload
class Lifecycle(_Lifecycle2):
    name = "lifecycle"
    description = (
        "Lethe's default mix: a simulated agent session over days, 5-8 captures and 3-5 "
        "questions a day (30% drawn from recent items): about 2,350 captures and 1,450 "
        "questions over 365 days." + _COMMON.format(n=40) + _V2.format(name=name)
    )


@dataclass(frozen=True)
class DurableHeavyParams2(LifecycleParams2):
    n_durable: int = 30
    ask_all_durable: bool = True
    questions_min: int = 1
    questions_max: int = 2


@register_workload
class DurableHeavy(_Lifecycle2):
    name = "lifecycle.durable_heavy"
    Params = DurableHeavyParams2
    description = (
        "Lethe's durable_heavy: every captured durable fact is asked every day (30 facts, "
        "about 8,900 questions over 365 days), on top of 1-2 ordinary questions a day; "
        "otherwise the default mix. Long-term retention is exercised constantly, so a "
        "frequency or access signal sees every fact." + _COMMON.format(n=30)
        + _V2.format(name=name)
    )


@dataclass(frozen=True)
class RecencyBiasedParams2(LifecycleParams2):
    p_recent_question: float = 0.8


@register_workload
class RecencyBiased(_Lifecycle2):
    name = "lifecycle.recency_biased"
    Params = RecencyBiasedParams2
    description = (
        "Lethe's recency_biased: 80% of questions are drawn from recent items (ephemeral "
        "items still valid and durable facts written in the last 7 days), the rest from all "
        "captured durable facts; otherwise the default mix. Rewards short-term memory while "
        "still charging for forgotten durable facts." + _COMMON.format(n=40)
        + _V2.format(name=name)
    )


@dataclass(frozen=True)
class HighFreqSkewParams2(LifecycleParams2):
    hot_per_day: int = 10


@register_workload
class HighFreqSkew(_Lifecycle2):
    name = "lifecycle.high_freq_skew"
    Params = HighFreqSkewParams2
    description = (
        "Lethe's high_freq_skew: one durable fact (drawn among those captured early) is "
        "asked 10 more times every day once captured, on top of the default 3-5 questions, "
        "so a frequency signal concentrates on it while the other facts go cold."
        + _COMMON.format(n=40) + _V2.format(name=name)
    )


@dataclass(frozen=True)
class BurstyParams2(LifecycleParams2):
    burst_share: float = 0.1


@register_workload
class Bursty(_Lifecycle2):
    name = "lifecycle.bursty"
    Params = BurstyParams2
    description = (
        "Lethe's bursty: each day is independently a burst day with probability 0.1 (about "
        "37 of 365), with 50 captures and 10 questions instead of 5-8 and 3-5, in the same "
        "mix; capacity-bounded policies face real overflow pressure on burst days."
        + _COMMON.format(n=40) + _V2.format(name=name)
    )
