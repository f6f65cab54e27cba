"""The lifecycle family (from the Lethe seed): a simulated agent's days of tagged
captures, questions and a closing ``Tick``, as five registered presets in two versions.
This package exports the workloads, their parameters and the fact banks.

Its modules: ``vocab`` the data, ``params`` the parameters, ``stream`` and ``stream2``
the generators of versions 1 and 2, ``variants`` and ``variants2`` the registered
workloads (version 1 retired, version 2 current). Every choice and default of the stream
is specified in docs/lifecycle.md ("The lifecycle stream").
"""

from workloads.lifecycle.params import LifecycleParams
from workloads.lifecycle.stream import stream_seed
from workloads.lifecycle.stream2 import LifecycleParams2
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
)
from workloads.lifecycle.variants2 import (
    Bursty,
    BurstyParams2,
    DurableHeavy,
    DurableHeavyParams2,
    HighFreqSkew,
    HighFreqSkewParams2,
    Lifecycle,
    RecencyBiased,
    RecencyBiasedParams2,
)
from workloads.lifecycle.vocab import CATEGORIES, DURABLE_BANK, EPHEMERAL_BANK, Attr, Fact

__all__ = [
    "CATEGORIES",
    "DURABLE_BANK",
    "EPHEMERAL_BANK",
    "Attr",
    "Bursty",
    "BurstyParams",
    "BurstyParams2",
    "BurstyV1",
    "DurableHeavy",
    "DurableHeavyParams",
    "DurableHeavyParams2",
    "DurableHeavyV1",
    "Fact",
    "HighFreqSkew",
    "HighFreqSkewParams",
    "HighFreqSkewParams2",
    "HighFreqSkewV1",
    "Lifecycle",
    "LifecycleParams",
    "LifecycleParams2",
    "LifecycleV1",
    "RecencyBiased",
    "RecencyBiasedParams",
    "RecencyBiasedParams2",
    "RecencyBiasedV1",
    "stream_seed",
]
