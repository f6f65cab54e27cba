"""The current lifecycle workloads (version 2): version 1's five presets on the day
stream of ``stream2`` (interfering mentions, oblique questions, rarely asked facts).

Each preset is version 1's: its parameters are version 1's preset overrides on
``LifecycleParams2`` (a dataclass over both), its description version 1's with version
2's additions, so a preset is written once."""

from __future__ import annotations

import random
from dataclasses import dataclass

from workloads.lifecycle.params import LifecycleParams
from workloads.lifecycle.stream import DayStream
from workloads.lifecycle.stream2 import DayStream2, LifecycleParams2
from workloads.lifecycle.variants import (
    BurstyParams,
    BurstyV1,
    DurableHeavyParams,
    DurableHeavyV1,
    HighFreqSkewParams,
    HighFreqSkewV1,
    LifecycleV1,
    RecencyBiasedParams,
    RecencyBiasedV1,
    _Lifecycle,
)
from workloads.registry import register_workload

V1_PREFIX = "Version 1 of the lifecycle family. "
_V2 = (
    " Version 2 adds what makes retrieval and forgetting choices matter: 25% of the "
    "chitchat is an interfering mention, one person asking about another's captured fact "
    "(\"Marco asked whether Priya's favorite drink is still tea.\": no fact, but the "
    "keyword extractor links it to the asker's slot, and it shares a question's words); "
    "30% of questions are oblique (\"Remind me, what drink for Priya?\": the subject and "
    "one attribute word); 30% of the durable facts are asked a tenth as often as the "
    "others, so access signals mislead. Version 1 is `{name}@1`."
)


def described(v1: type[_Lifecycle]) -> str:
    """Version 1's description of the preset, with version 2's additions."""
    return v1.description.removeprefix(V1_PREFIX) + _V2.format(name=v1.name)


class _Lifecycle2(_Lifecycle):
    version = "2"
    Params: type[LifecycleParams] = LifecycleParams2

    def stream(self, rng: random.Random, horizon: int, params: LifecycleParams) -> DayStream:
        assert isinstance(params, LifecycleParams2)
        return DayStream2(rng, horizon, params)


@register_workload
class Lifecycle(_Lifecycle2):
    name = LifecycleV1.name
    description = described(LifecycleV1)


@dataclass(frozen=True)
class DurableHeavyParams2(DurableHeavyParams, LifecycleParams2):
    """durable_heavy's overrides on version 2's parameters."""


@register_workload
class DurableHeavy(_Lifecycle2):
    name = DurableHeavyV1.name
    Params = DurableHeavyParams2
    description = described(DurableHeavyV1)


@dataclass(frozen=True)
class RecencyBiasedParams2(RecencyBiasedParams, LifecycleParams2):
    """recency_biased's overrides on version 2's parameters."""


@register_workload
class RecencyBiased(_Lifecycle2):
    name = RecencyBiasedV1.name
    Params = RecencyBiasedParams2
    description = described(RecencyBiasedV1)


@dataclass(frozen=True)
class HighFreqSkewParams2(HighFreqSkewParams, LifecycleParams2):
    """high_freq_skew's overrides on version 2's parameters."""


@register_workload
class HighFreqSkew(_Lifecycle2):
    name = HighFreqSkewV1.name
    Params = HighFreqSkewParams2
    description = described(HighFreqSkewV1)


@dataclass(frozen=True)
class BurstyParams2(BurstyParams, LifecycleParams2):
    """bursty's overrides on version 2's parameters."""


@register_workload
class Bursty(_Lifecycle2):
    name = BurstyV1.name
    Params = BurstyParams2
    description = described(BurstyV1)
