"""The lifecycle family's vocabulary, data only: the durable-fact bank (people, the
client, the project, the team, the user and their attributes), the ephemeral topics,
the capture frames, the noise lines, the tags, the query categories and the update
kinds."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


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

    @cached_property
    def slot(self) -> str:
        return f"{self.entity}.{self.attr.name}"

    def fill(self, template: str, value: str = "") -> str:
        return template.format(E=self.display, v=value)

    @cached_property
    def questions(self) -> tuple[str, ...]:
        """The attribute's questions about this fact, filled in and capitalized (in the
        attribute's order: a draw among them is a draw among its templates)."""
        return tuple(capitalize(self.fill(q)) for q in self.attr.questions)


def capitalize(text: str) -> str:
    """``text`` with its first character upper-cased."""
    return text[:1].upper() + text[1:]


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

# Observation kinds that change a durable fact's value, and how each is phrased
# (``durable``, ``ephemeral`` and ``noise`` captures are not updates).
UPDATE_KINDS = {"update": "canonical", "hard_update": "hard"}
