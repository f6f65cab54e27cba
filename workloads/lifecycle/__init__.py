"""The lifecycle family (from the Lethe seed): a simulated agent session over days.

The seed's harness is not available; this stream is designed from its write-up and
avoids the seeds' measured flaws (docs/reference.md, "Known flaws of the seeds").
Every choice, in one place (this package's modules: ``vocab`` the data, ``params``
the parameters, ``stream`` the generator, ``variants`` the registered workloads):

Time
    ``t`` is the integer day index ``0 .. horizon-1`` (horizon unit: days, default 365).
    Every event of a day carries that day's ``t``; the day's captures come first, then
    its questions, and a ``Tick(t)`` closes the day (where a store consolidates). The
    store never reads a wall clock, so its recency term and a policy's ages are in days.

Captures (``Observe``)
    ``meta = {"tags": ..., "session": "day-<t>"}``; tags are comma-separated and drawn
    from the seeded generator per capture, by kind:

    - ``durable``: the first capture of a durable fact ("Priya's favorite drink is
      tea."). Tagged ``fact``, ``preference`` or ``preference,fact``, or
      ``instruction`` or ``instruction,fact``, by the fact's type.
    - ``update``: a durable fact's value changes, in canonical phrasing ("Priya's
      favorite drink is now chai."); the earlier values become stale. Same tags.
    - ``hard_update``: an update in a paraphrase that holds the subject and every word
      of the attribute's canonical phrase, but never the phrase itself ("As a drink,
      Priya's favorite is now chai."), so the exact-phrase keyword teacher cannot link
      it while a bag-of-words retriever finds it as well as a canonical update (the
      contradiction seed's hard updates were never retrieved at all, so its "floor"
      came from phrasing). A share ``p_paraphrase`` (default 0.2) of the updates.
      Same tags.
    - ``ephemeral``: an item true only for ``ephemeral_days`` days (default 3) from its
      capture: a moved standup, today's wifi code, tonight's deploy window. It has a
      slot and a value (8 recurring topics), so it is asked while valid. Once expired
      it is never asked again but stays its topic's current value until the topic
      comes back with a new value (re-capturing a valid topic supersedes it and
      restarts its validity); then it is stale. Keeping an expired item costs a store
      size, and stale clutter in its top-k. Tagged ``tool_result`` or ``remark``.
    - ``noise``: chitchat (slot and value ``None``). A share ``p_noise_mention``
      (default 0.3) names a person of the durable bank ("Marco left an umbrella by the
      door.") so bloat competes with facts in retrieval instead of being free (the
      distractors of the contradiction seed never matched a question). Noise never
      holds an attribute phrase. Tagged ``chitchat``, ``remark`` or ``small_talk``.

    Each day draws ``captures_min..captures_max`` captures (default 5..8). The day's
    scheduled first captures of durable facts are placed among them at seeded
    positions; every other capture is an update with ``p_update`` (default 0.03, once
    a durable fact exists), else ephemeral with ``p_ephemeral`` (default 0.25), else
    noise (an update drawn before the first durable capture is noise). An update
    picks a captured durable fact uniformly and a value different from its current
    one; an ephemeral capture picks a topic uniformly and a value
    different from its current one.

Durable facts
    ``n_durable`` facts (default 40) drawn without replacement from a bank of 42
    (6 people × 5 attributes, the client × 3, the project × 3, the team × 2, the
    user × 4). ``round(late_share × n_durable)`` of them (default 0.25, so 10 of
    40) are first captured uniformly in
    the second half of the horizon, the rest uniformly in the first ``early_days``
    (default 30): a policy that merely keeps the oldest items (LIFO) loses the late
    facts, so it cannot win by accident of capture order (a flaw of the seed's
    stream, where every durable fact came first).

Questions (``Query``)
    Each day asks ``questions_min..questions_max`` questions (default 3..5). With
    ``p_recent_question`` (default 0.3) a question draws from the *recent pool*
    (ephemeral items still valid, and durable facts whose current value was written
    in the last ``recent_days`` days, default 7), otherwise from every captured
    durable fact; an empty pool falls back to the other, and a day with both empty
    asks nothing. The day's questions are shuffled together and come after its
    captures, so an item can be asked the day it is captured (age 0). A durable fact
    is never asked before its capture, an ephemeral item only while valid.

    A question is never a capture sentence (held-out phrasing, two templates per
    attribute): it names the subject and at least one word of the attribute phrase,
    mostly the whole phrase, so the reference hashing retriever finds the slot (a
    keep-all store has the queried slot in its top 5 for more than 99% of
    questions), but never the value word (a question never contains its answer),
    and it avoids the function words of captures ("is", possessive "s", "now") so
    that shared filler does not decide retrieval. What a keep-all store
    gets wrong is then the stale and expired clutter, which is what the family
    measures. ``QueryTruth``: the slot, its current value (the latest write), its
    stale values (every earlier distinct value) and a category:

    - ``recent``: an ephemeral item, or a durable fact whose current value was
      written fewer than ``recent_days`` days before the question;
    - ``durable``: a durable fact whose current value is at least ``recent_days``
      old (the long-term retention the family is about).

    The category is decided by the age of the current value's write, not by the
    pool the question came from. Roughly 1,500 questions per 365 days (the seed had
    ~30 per seed, so one question moved a headline by 1.4%).

Vocabulary
    Slot keys are ``entity.attribute``: the entity is one lower-case token of the
    capture (a person's name, ``client``, ``project``, ``team``, ``user`` or an
    ephemeral topic such as ``standup``), the attribute's canonical phrase appears in
    every durable capture, canonical update and ephemeral capture. So memcore's
    keyword teacher links those to their true slot, and links nothing for noise (a
    mention names a person but no attribute phrase) nor for a hard update. Values
    are single lower-case tokens, never entity tokens, and are scored by equality.

Variants (each its own registered workload, Params subclass and defaults)
    ``lifecycle`` (the default mix above), ``lifecycle.durable_heavy`` (30 durable
    facts, every captured one asked every day, on top of 1..2 ordinary questions),
    ``lifecycle.recency_biased`` (``p_recent_question`` 0.8),
    ``lifecycle.high_freq_skew`` (one early durable fact asked 10 more times a day),
    ``lifecycle.bursty`` (each day is a burst day with probability 0.1, drawn per day
    so the stream stays lazy for any horizon, hence about and not exactly 10% of
    days: 50 captures in the same mix and 10 questions). The hot fact of
    ``high_freq_skew`` is drawn among the early facts, so it is asked most of the
    horizon; the daily sweep of ``durable_heavy`` is shuffled with the day's other
    questions. Every parameter exists on every variant, so a
    variant is a named preset of one generator.

Randomness
    One ``random.Random`` per (workload name, seed), seeded with the first 8 bytes of
    ``sha256("<name>:<seed>")`` (never Python's salted ``hash``): the same seed gives
    the same stream in every process, and two variants with the same seed differ.
    The stream is a function of (name, seed, horizon, params): the late-fact schedule
    depends on the horizon. ``events`` is a lazy generator holding per-day state
    only (current values, value histories, the schedule of ``n_durable`` first
    captures), never the horizon.
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
