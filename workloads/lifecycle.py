"""The lifecycle family (Lethe, issue #4): a simulated agent session over days.

The seed's harness is not available; this stream is designed from its write-up and
avoids the flaws measured in REFERENCE.md ("Known flaws"). Every choice, in one place:

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

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass

from workloads.events import Event, Observe, ObserveTruth, Query, QueryTruth, Tick
from workloads.registry import Vocabulary, register_workload


@dataclass(frozen=True)
class Attr:
    """An attribute: its slot name, canonical phrase, values and sentence templates.

    ``{E}`` is the entity's display form (``Priya``, ``the client``), ``{v}`` the value.
    """

    name: str
    phrase: str
    values: tuple[str, ...]
    capture: str
    update: str
    paraphrase: str
    questions: tuple[str, ...]
    kind: str = "fact"  # fact | preference | instruction (decides the tags)


@dataclass(frozen=True)
class Fact:
    entity: str  # the single lower-case token the teacher finds
    display: str  # how sentences name it
    attr: Attr

    @property
    def slot(self) -> str:
        return f"{self.entity}.{self.attr.name}"

    def fill(self, template: str, value: str = "") -> str:
        return template.format(E=self.display, v=value)


MONTHS = ("march", "june", "september", "december", "january", "april")

PERSON_ATTRS = (
    Attr("favorite_drink", "favorite drink",
         ("tea", "coffee", "matcha", "espresso", "cocoa", "chai"),
         "{E}'s favorite drink is {v}", "{E}'s favorite drink is now {v}",
         "As a drink, {E}'s favorite is now {v}",
         ("What favorite drink does {E} have?", "Which drink would {E} call a favorite?"),
         "preference"),
    Attr("home_city", "home city",
         ("boston", "denver", "austin", "seattle", "lisbon", "dublin"),
         "{E}'s home city is {v}", "{E}'s home city is now {v}",
         "{E} calls another city home now, {v}",
         ("Which home city does {E} have?", "What city does {E} call home?")),
    Attr("contact_channel", "contact channel",
         ("email", "slack", "phone", "signal", "sms", "whatsapp"),
         "{E}'s preferred contact channel is {v}", "{E}'s preferred contact channel is now {v}",
         "The channel to contact {E} on is now {v}",
         ("Which contact channel works for {E}?", "What channel should I use to contact {E}?"),
         "preference"),
    Attr("time_zone", "time zone",
         ("utc", "pst", "est", "cet", "ist", "jst"),
         "{E}'s time zone is {v}", "{E}'s time zone is now {v}",
         "{E} relocated, so the zone for local time is now {v}",
         ("Which time zone does {E} live in?", "What time zone applies to {E}?")),
    Attr("job_title", "job title",
         ("engineer", "designer", "manager", "analyst", "director", "recruiter"),
         "{E}'s job title is {v}", "{E}'s job title is now {v}",
         "{E} got promoted, the title of the job is now {v}",
         ("What job title does {E} hold?", "Which title does {E} have at the job?")),
)

PEOPLE = ("priya", "marco", "lena", "kenji", "sofia", "omar")

ORG_FACTS: tuple[tuple[str, Attr], ...] = (
    ("client", Attr("fiscal_year", "fiscal year", MONTHS,
                    "{E}'s fiscal year ends in {v}", "{E}'s fiscal year now ends in {v}",
                    "For {E}, the year on the fiscal calendar now ends in {v}",
                    ("When does the fiscal year of {E} end?",
                     "Which month closes the fiscal year at {E}?"))),
    ("client", Attr("billing_currency", "billing currency",
                    ("usd", "eur", "gbp", "jpy", "chf", "cad"),
                    "{E}'s billing currency is {v}", "{E}'s billing currency is now {v}",
                    "{E} wants the currency for billing to be {v} now",
                    ("Which billing currency does {E} use?",
                     "What currency should billing for {E} happen in?"))),
    ("client", Attr("main_contact", "main contact",
                    ("hana", "raj", "tom", "elif", "yusuf", "mira"),
                    "{E}'s main contact is {v}", "{E}'s main contact is now {v}",
                    "{E} named {v} as the main point of contact",
                    ("Who acts as main contact at {E}?", "Whom should we contact mainly at {E}?"))),
    ("project", Attr("launch_month", "launch month", MONTHS,
                     "{E}'s launch month is {v}", "{E}'s launch month is now {v}",
                     "{E} moved the month of its launch to {v}",
                     ("Which launch month does {E} have?", "What month should {E} launch?"))),
    ("project", Attr("main_language", "main language",
                     ("python", "rust", "elixir", "java", "kotlin", "typescript"),
                     "{E}'s main language is {v}", "{E}'s main language is now {v}",
                     "{E} now uses {v} as the language of its main codebase",
                     ("Which main language does {E} use?",
                      "What language should {E} mainly be coded in?"))),
    ("project", Attr("repo_host", "repo host",
                     ("github", "gitlab", "bitbucket", "codeberg", "gitea", "sourcehut"),
                     "{E}'s repo host is {v}", "{E}'s repo host is now {v}",
                     "{E} moved its repo to a new host, {v}",
                     ("Which repo host does {E} use?", "Where does {E} host its repo?"))),
    ("team", Attr("meeting_day", "meeting day",
                  ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday"),
                  "{E}'s meeting day is {v}", "{E}'s meeting day is now {v}",
                  "{E} picked a new day for the weekly meeting, {v}",
                  ("Which meeting day does {E} keep?", "What day does {E} hold its meeting?"))),
    ("team", Attr("sprint_length", "sprint length",
                  ("one", "two", "three", "four", "five", "six"),
                  "{E}'s sprint length is {v} weeks", "{E}'s sprint length is now {v} weeks",
                  "{E} changed the length of each sprint to {v} weeks",
                  ("How many weeks of sprint length does {E} run?",
                   "What length in weeks does a sprint of {E} take?"))),
    ("user", Attr("preferred_editor", "preferred editor",
                  ("vim", "emacs", "vscode", "nano", "helix", "zed"),
                  "{E}'s preferred editor is {v}", "{E}'s preferred editor is now {v}",
                  "{E} switched editor, the preferred one is now {v}",
                  ("Which preferred editor does {E} work with?",
                   "What editor should I set up for {E}?"),
                  "preference")),
    ("user", Attr("code_formatter", "code formatter",
                  ("black", "ruff", "yapf", "autopep8", "prettier", "isort"),
                  "{E}'s code formatter is {v}", "{E}'s code formatter is now {v}",
                  "{E} wants the formatter for all code to be {v}",
                  ("Which code formatter does {E} want?",
                   "What formatter should code from {E} go through?"),
                  "instruction")),
    ("user", Attr("report_format", "report format",
                  ("pdf", "markdown", "html", "docx", "csv", "txt"),
                  "{E}'s report format is {v}", "{E}'s report format is now {v}",
                  "{E} wants the format of every report to be {v}",
                  ("Which report format does {E} want?",
                   "What format should a report for {E} take?"),
                  "instruction")),
    ("user", Attr("reply_language", "reply language",
                  ("english", "french", "german", "spanish", "dutch", "italian"),
                  "{E}'s reply language is {v}", "{E}'s reply language is now {v}",
                  "{E} wants the language of every reply to be {v}",
                  ("Which reply language does {E} want?",
                   "What language should a reply to {E} come in?"),
                  "instruction")),
)

DURABLE_BANK: tuple[Fact, ...] = (
    *(Fact(p, p.title(), a) for p in PEOPLE for a in PERSON_ATTRS),
    *(Fact(e, f"the {e}", a) for e, a in ORG_FACTS),
)

# Ephemeral topics: (entity, attribute). Only ``capture`` and ``questions`` are used.
EPHEMERAL_BANK: tuple[Fact, ...] = tuple(
    Fact(e, e, Attr(name, phrase, values, capture, "", "", questions))
    for e, name, phrase, values, capture, questions in (
        ("standup", "start_time", "start time",
         ("9am", "10am", "11am", "2pm", "3pm", "4pm"),
         "Today the standup start time is {v}",
         ("When does the standup start?", "At what hour should the standup start?")),
        ("wifi", "access_code", "access code",
         ("maple42", "river7", "cobalt9", "tiger3", "lotus8", "ember5"),
         "The wifi access code today is {v}",
         ("Which code unlocks the wifi?", "What wifi code should I type?")),
        ("parking", "assigned_spot", "assigned spot",
         ("a1", "b4", "c2", "d7", "e3", "f5"),
         "Your assigned spot in the parking garage today is {v}",
         ("Which parking spot do I have?", "Where should I park, which parking spot?")),
        ("ci", "pipeline_status", "pipeline status",
         ("green", "red", "flaky", "pending", "broken", "queued"),
         "The ci pipeline status is {v} right now",
         ("What does the ci pipeline show?", "How does the ci pipeline look?")),
        ("release", "deploy_window", "deploy window",
         ("8pm", "9pm", "10pm", "11pm", "midnight", "1am"),
         "The release deploy window tonight opens at {v}",
         ("When does the deploy window of the release open?",
          "What hour does the release deploy window open?")),
        ("lunch", "venue", "venue",
         ("noodlebar", "tacoshop", "bistro", "canteen", "deli", "pizzeria"),
         "The lunch venue today is {v}",
         ("Which venue do we go to for lunch?", "Where should we have lunch, which venue?")),
        ("weather", "forecast", "forecast",
         ("rain", "sunny", "snow", "fog", "windy", "cloudy"),
         "The weather forecast today is {v}",
         ("What does the forecast say about the weather?",
          "How will the weather turn out, per the forecast?")),
        ("oncall", "rotation", "rotation",
         ("hana", "raj", "tom", "elif", "yusuf", "mira"),
         "Today the oncall rotation is covered by {v}",
         ("Who covers the oncall rotation?", "Who holds the oncall rotation?")),
    )
)

CAPTURE_FRAMES = ("{c}.", "Note: {c}.", "FYI: {c}.")
UPDATE_FRAMES = ("{c}.", "Update: {c}.", "Heads up: {c}.")
EPHEMERAL_FRAMES = ("{c}.", "Heads up: {c}.")

NOISE_SUBJECTS = ("Someone", "A neighbour", "The barista", "A courier", "The intern",
                  "A visitor", "The cleaner", "Somebody upstairs")
NOISE_PREDICATES = (
    "brought donuts into the kitchen",
    "said traffic was terrible this morning",
    "was humming a tune all afternoon",
    "talked about a movie last night",
    "spotted a heron by the river",
    "complained that the elevator is slow",
    "left an umbrella by the door",
    "mentioned a new bakery downtown",
)
NOISE_LINES = (
    "Good morning, everyone.", "Happy friday!", "Thanks, that helps.", "Ha, nice one.",
    "Sounds good.", "Lovely light outside right now.", "Back from a short break.",
    "Anyone else hungry already?",
    *(f"{s} {p}." for s in NOISE_SUBJECTS for p in NOISE_PREDICATES),
)

TAGS = {
    "fact": ("fact",),
    "preference": ("preference", "preference,fact"),
    "instruction": ("instruction", "instruction,fact"),
}
EPHEMERAL_TAGS = ("tool_result", "remark")
NOISE_TAGS = ("chitchat", "remark", "small_talk")

CATEGORIES = {
    "durable": "durable facts whose current value was written at least recent_days "
               "(default 7) days before the question",
    "recent": "ephemeral items asked while valid, and durable facts whose current value "
              "was written in the last recent_days (default 7) days",
}


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def stream_seed(name: str, seed: int) -> int:
    """The generator seed of (workload name, seed): stable across processes."""
    return int.from_bytes(hashlib.sha256(f"{name}:{seed}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class LifecycleParams:
    """Parameters of the lifecycle family (the defaults are the ``lifecycle`` mix)."""

    n_durable: int = 40
    late_share: float = 0.25
    early_days: int = 30
    captures_min: int = 5
    captures_max: int = 8
    p_update: float = 0.03
    p_paraphrase: float = 0.2
    p_ephemeral: float = 0.25
    p_noise_mention: float = 0.3
    ephemeral_days: int = 3
    questions_min: int = 3
    questions_max: int = 5
    p_recent_question: float = 0.3
    recent_days: int = 7
    ask_all_durable: bool = False
    hot_per_day: int = 0
    burst_share: float = 0.0
    burst_captures: int = 50
    burst_questions: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.n_durable <= len(DURABLE_BANK):
            raise ValueError(
                f"n_durable must be in [1, {len(DURABLE_BANK)}] (the size of the fact bank), "
                f"got {self.n_durable}"
            )
        for name in ("late_share", "p_update", "p_paraphrase", "p_ephemeral",
                     "p_noise_mention", "p_recent_question", "burst_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v}")
        if self.p_update + self.p_ephemeral > 1.0:
            raise ValueError(
                f"p_update + p_ephemeral must be at most 1, got {self.p_update + self.p_ephemeral}"
            )
        for name in ("early_days", "ephemeral_days", "recent_days"):
            v = getattr(self, name)
            if v < 1:
                raise ValueError(f"{name} must be at least 1 day, got {v}")
        for name in ("captures_min", "questions_min", "hot_per_day", "burst_captures",
                     "burst_questions"):
            v = getattr(self, name)
            if v < 0:
                raise ValueError(f"{name} must be non-negative, got {v}")
        for lo, hi in (("captures_min", "captures_max"), ("questions_min", "questions_max")):
            if getattr(self, hi) < getattr(self, lo):
                raise ValueError(
                    f"{hi} must be at least {lo}, got {hi}={getattr(self, hi)} < "
                    f"{lo}={getattr(self, lo)}"
                )


class _Stream:
    """The state of one stream while it flows: one day at a time."""

    def __init__(self, rng: random.Random, horizon: int, p: LifecycleParams) -> None:
        self.rng = rng
        self.p = p
        facts = rng.sample(DURABLE_BANK, p.n_durable)
        n_late = round(p.late_share * p.n_durable)
        self.schedule: dict[int, list[Fact]] = {}
        early_end = min(p.early_days, horizon)
        for i, fact in enumerate(facts):
            day = rng.randrange(horizon // 2, horizon) if i < n_late else rng.randrange(early_end)
            self.schedule.setdefault(day, []).append(fact)
        self.late = frozenset(f.slot for f in facts[:n_late])
        self.hot: Fact | None = rng.choice(facts[n_late:] or facts) if p.hot_per_day else None
        self.current: dict[str, str] = {}
        self.history: dict[str, set[str]] = {}
        self.written: dict[str, int] = {}  # slot -> day its current value was written
        self.captured: list[Fact] = []  # durable facts in capture order
        self.valid_until: dict[str, int] = {}  # ephemeral slot -> last valid day

    def _write(self, fact: Fact, value: str, t: int) -> None:
        self.current[fact.slot] = value
        self.history.setdefault(fact.slot, set()).add(value)
        self.written[fact.slot] = t

    def _new_value(self, fact: Fact) -> str:
        old = self.current.get(fact.slot)
        return self.rng.choice([v for v in fact.attr.values if v != old])

    def _observe(self, t: int, text: str, fact: Fact | None, value: str | None, kind: str,
                 tags: str) -> Observe:
        slot = fact.slot if fact is not None else None
        return Observe(t, text, ObserveTruth(slot, value, kind),
                       {"tags": tags, "session": f"day-{t}"})

    def durable(self, fact: Fact, t: int) -> Observe:
        rng = self.rng
        value = self._new_value(fact)
        text = rng.choice(CAPTURE_FRAMES).format(c=fact.fill(fact.attr.capture, value))
        tags = rng.choice(TAGS[fact.attr.kind])
        self._write(fact, value, t)
        self.captured.append(fact)
        return self._observe(t, _capitalize(text), fact, value, "durable", tags)

    def update(self, t: int) -> Observe:
        rng = self.rng
        fact = rng.choice(self.captured)
        value = self._new_value(fact)
        if rng.random() < self.p.p_paraphrase:
            kind, template = "hard_update", fact.attr.paraphrase
        else:
            kind, template = "update", fact.attr.update
        text = rng.choice(UPDATE_FRAMES).format(c=fact.fill(template, value))
        tags = rng.choice(TAGS[fact.attr.kind])
        self._write(fact, value, t)
        return self._observe(t, _capitalize(text), fact, value, kind, tags)

    def ephemeral(self, t: int) -> Observe:
        rng = self.rng
        fact = rng.choice(EPHEMERAL_BANK)
        value = self._new_value(fact)
        text = rng.choice(EPHEMERAL_FRAMES).format(c=fact.fill(fact.attr.capture, value))
        tags = rng.choice(EPHEMERAL_TAGS)
        self._write(fact, value, t)
        self.valid_until[fact.slot] = t + self.p.ephemeral_days - 1
        return self._observe(t, _capitalize(text), fact, value, "ephemeral", tags)

    def noise(self, t: int) -> Observe:
        rng = self.rng
        if rng.random() < self.p.p_noise_mention:
            text = f"{rng.choice(PEOPLE).title()} {rng.choice(NOISE_PREDICATES)}."
        else:
            text = rng.choice(NOISE_LINES)
        return self._observe(t, text, None, None, "noise", rng.choice(NOISE_TAGS))

    def question(self, fact: Fact, t: int) -> Query:
        slot = fact.slot
        value = self.current[slot]
        ephemeral = slot in self.valid_until
        recent = ephemeral or t - self.written[slot] < self.p.recent_days
        text = fact.fill(self.rng.choice(fact.attr.questions))
        return Query(t, _capitalize(text), QueryTruth(
            slot, value, frozenset(self.history[slot] - {value}),
            "recent" if recent else "durable",
        ))

    def recent_pool(self, t: int) -> list[Fact]:
        pool = [f for f in EPHEMERAL_BANK if self.valid_until.get(f.slot, -1) >= t]
        pool += [f for f in self.captured if t - self.written[f.slot] < self.p.recent_days]
        return pool

    def day(self, t: int) -> Iterator[Event]:
        rng, p = self.rng, self.p
        burst = p.burst_share > 0 and rng.random() < p.burst_share
        n_captures = p.burst_captures if burst else rng.randint(p.captures_min, p.captures_max)
        plan: list[Fact | None] = list(self.schedule.pop(t, []))
        plan += [None] * max(0, n_captures - len(plan))
        rng.shuffle(plan)
        for fact in plan:
            if fact is not None:
                yield self.durable(fact, t)
                continue
            r = rng.random()
            if r < p.p_update and self.captured:
                yield self.update(t)
            elif p.p_update <= r < p.p_update + p.p_ephemeral:
                yield self.ephemeral(t)
            else:
                yield self.noise(t)

        targets: list[Fact] = list(self.captured) if p.ask_all_durable else []
        if self.hot is not None and self.hot.slot in self.current:
            targets += [self.hot] * p.hot_per_day
        n_questions = p.burst_questions if burst else rng.randint(p.questions_min,
                                                                   p.questions_max)
        for _ in range(n_questions):
            recent = self.recent_pool(t)
            if rng.random() < p.p_recent_question:
                pool = recent or self.captured
            else:
                pool = self.captured or recent
            if pool:
                targets.append(rng.choice(pool))
        rng.shuffle(targets)
        for fact in targets:
            yield self.question(fact, t)
        yield Tick(t)


class _Lifecycle:
    """Shared body of the lifecycle variants; each subclass is one registered preset."""

    name = "lifecycle"
    version = "1"
    horizon_unit = "days"
    default_horizon = 365
    description = ""
    categories = CATEGORIES
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

    def events(self, seed: int, horizon: int, params: LifecycleParams) -> Iterator[Event]:
        rng = random.Random(stream_seed(self.name, seed))
        if horizon <= 0:
            return
        stream = _Stream(rng, horizon, params)
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


@register_workload
class Lifecycle(_Lifecycle):
    name = "lifecycle"
    description = (
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


@register_workload
class DurableHeavy(_Lifecycle):
    name = "lifecycle.durable_heavy"
    Params = DurableHeavyParams
    description = (
        "Lethe's durable_heavy: every captured durable fact is asked every day (30 facts, "
        "about 8,900 questions over 365 days), on top of 1-2 ordinary questions a day; "
        "otherwise the default mix. Long-term retention is exercised constantly, so a "
        "frequency or access signal sees every fact." + _COMMON.format(n=30)
    )


@dataclass(frozen=True)
class RecencyBiasedParams(LifecycleParams):
    p_recent_question: float = 0.8


@register_workload
class RecencyBiased(_Lifecycle):
    name = "lifecycle.recency_biased"
    Params = RecencyBiasedParams
    description = (
        "Lethe's recency_biased: 80% of questions are drawn from recent items (ephemeral "
        "items still valid and durable facts written in the last 7 days), the rest from all "
        "captured durable facts; otherwise the default mix. Rewards short-term memory while "
        "still charging for forgotten durable facts." + _COMMON.format(n=40)
    )


@dataclass(frozen=True)
class HighFreqSkewParams(LifecycleParams):
    hot_per_day: int = 10


@register_workload
class HighFreqSkew(_Lifecycle):
    name = "lifecycle.high_freq_skew"
    Params = HighFreqSkewParams
    description = (
        "Lethe's high_freq_skew: one durable fact (drawn among those captured early) is "
        "asked 10 more times every day once captured, on top of the default 3-5 questions, "
        "so a frequency signal concentrates on it while the other facts go cold."
        + _COMMON.format(n=40)
    )


@dataclass(frozen=True)
class BurstyParams(LifecycleParams):
    burst_share: float = 0.1


@register_workload
class Bursty(_Lifecycle):
    name = "lifecycle.bursty"
    Params = BurstyParams
    description = (
        "Lethe's bursty: each day is independently a burst day with probability 0.1 (about "
        "37 of 365), with 50 captures and 10 questions instead of 5-8 and 3-5, in the same "
        "mix; capacity-bounded policies face real overflow pressure on burst days."
        + _COMMON.format(n=40)
    )
