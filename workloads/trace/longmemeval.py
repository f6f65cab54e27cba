"""LongMemEval's knowledge-update questions as an fbench trace (``fbench trace import
longmemeval FILE --output TRACE``).

LongMemEval (Wu et al., ICLR 2025) gives each question its own haystack: dated chat
sessions (``haystack_dates``, ``haystack_session_ids``, ``haystack_sessions``, each a
list of ``{role, content}`` turns, the evidence turns marked ``has_answer``), the
``answer_session_ids`` holding the evidence, a ``question_type`` and a
``question_date``. Only ``knowledge-update`` questions are imported (not the ``_abs``
abstention ones): their evidence is an old value and a newer one.

The mapping, one question after another on one clock (days):

- each question is a slot, ``q<question_id>.fact``; each evidence turn is an observation
  of it, whose value is its session's label (``s<session_id>``); with ``haystack``, every
  other turn is an observation without a slot (noise);
- the question is a query at its ``question_date``: its current value is the label of
  the evidence session with the latest date, its stale values the earlier sessions';
- a question whose evidence sits in fewer than two sessions, or whose two latest evidence
  sessions share a date, cannot tell old from new and is left out (counted);
- days are counted from the first question's first session; each question's haystack
  starts the day after the previous question, a ``tick`` closes every day with events.

The vocabulary is empty (no entity or phrase is known), so the keyword extractor links
nothing: a memory must tell the current value by what it keeps and how it ranks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from workloads.events import Event, Observe, ObserveTruth, Query, QueryTruth, Tick
from workloads.trace.format import Header

KIND = "knowledge-update"
CATEGORY = "knowledge_update"
CATEGORIES = {CATEGORY: "LongMemEval knowledge-update questions: a value stated, then "
                        "changed in a later session"}
UPDATE_KINDS = {"update": "hard"}  # a later evidence turn: phrased freely


class LongMemEvalError(ValueError):
    """A LongMemEval file fbench cannot read: one line naming the question and field."""


@dataclass
class Imported:
    header: Header
    events: list[Event]
    kept: list[str] = field(default_factory=list)     # question ids imported
    left_out: list[str] = field(default_factory=list)  # old and new could not be told apart


def _day(raw: Any, where: str) -> date:
    """``"2023/05/20 (Sat) 02:21"`` (LongMemEval's dates) to its day."""
    if not isinstance(raw, str):
        raise LongMemEvalError(f"{where}: not a date string")
    try:
        return datetime.strptime(raw.split(" ")[0], "%Y/%m/%d").date()
    except ValueError:
        raise LongMemEvalError(f"{where}: {raw!r} is not a LongMemEval date (YYYY/MM/DD ...)"
                           ) from None


def _get(item: dict[str, Any], key: str, qid: str, kind: type) -> Any:
    value = item.get(key)
    if not isinstance(value, kind):
        raise LongMemEvalError(f"question {qid}: {key} is missing or not a {kind.__name__}")
    return value


def _events(item: dict[str, Any], qid: str, offset: int, haystack: bool
            ) -> tuple[list[tuple[int, Event]], int] | None:
    """The question's events as (day, event), and its last day; None when old and new
    cannot be told apart."""
    dates = _get(item, "haystack_dates", qid, list)
    ids = _get(item, "haystack_session_ids", qid, list)
    sessions = _get(item, "haystack_sessions", qid, list)
    if not len(dates) == len(ids) == len(sessions):
        raise LongMemEvalError(f"question {qid}: haystack_dates, haystack_session_ids and "
                           "haystack_sessions differ in length")
    days = [_day(d, f"question {qid}: haystack_dates[{i}]") for i, d in enumerate(dates)]
    asked = _day(item.get("question_date"), f"question {qid}: question_date")
    first = min([*days, asked])
    slot = f"q{qid}.fact"
    evidence: dict[str, date] = {}
    out: list[tuple[int, Event]] = []
    order = sorted(range(len(sessions)), key=lambda i: (days[i], i))
    for i in order:
        t = offset + (days[i] - first).days
        label = f"s{ids[i]}"
        turns = sessions[i]
        if not isinstance(turns, list):
            raise LongMemEvalError(f"question {qid}: haystack_sessions[{i}] is not a list of turns")
        for j, turn in enumerate(turns):
            if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
                raise LongMemEvalError(
                    f"question {qid}: haystack_sessions[{i}][{j}] has no content")
            text = turn["content"].strip()
            if not text:
                continue
            meta = {"session": str(ids[i]), "tags": str(turn.get("role", ""))}
            if turn.get("has_answer") is True:
                evidence.setdefault(label, days[i])
                kind = "fact" if next(iter(evidence)) == label else "update"
                out.append((t, Observe(t, text, ObserveTruth(slot, label, kind), meta)))
            elif haystack:
                out.append((t, Observe(t, text, ObserveTruth(None, None, "noise"), meta)))
    by_date = sorted(evidence.items(), key=lambda kv: kv[1])
    if len(by_date) < 2 or by_date[-1][1] == by_date[-2][1]:
        return None
    current = by_date[-1][0]
    stale = frozenset(label for label, _ in by_date[:-1])
    question = _get(item, "question", qid, str)
    t_q = offset + (asked - first).days
    out.append((t_q, Query(t_q, question, QueryTruth(slot, current, stale, CATEGORY))))
    return out, max(t for t, _ in out)


def convert(path: Path, haystack: bool = False) -> Imported:
    """The trace of LongMemEval's knowledge-update questions in ``path``."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LongMemEvalError(f"{path}: not a LongMemEval JSON file ({exc})") from None
    if not isinstance(items, list):
        raise LongMemEvalError(f"{path}: not a LongMemEval JSON file (a list of questions)")
    timed: list[tuple[int, Event]] = []
    kept, left_out = [], []
    offset = 0
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise LongMemEvalError(f"{path}: item {n} is not a question object")
        qid = str(item.get("question_id", f"#{n}"))
        if item.get("question_type") != KIND or qid.endswith("_abs"):
            continue
        got = _events(item, qid, offset, haystack)
        if got is None:
            left_out.append(qid)
            continue
        evs, last = got
        timed += evs
        kept.append(qid)
        offset = last + 1
    events: list[Event] = []
    day = None
    for t, ev in sorted(timed, key=lambda te: (te[0], isinstance(te[1], Query))):
        if day is not None and t != day:
            events.append(Tick(day))
        day = t
        events.append(ev)
    if day is not None:
        events.append(Tick(day))
    header = Header(horizon=max(offset, 1), horizon_unit="days", categories=CATEGORIES,
                    update_kinds=UPDATE_KINDS, entities=(), phrases=(),
                    distinct_facts=max(len(kept), 1),
                    source=f"fbench trace import longmemeval {path.name}"
                           + (" --haystack" if haystack else ""))
    return Imported(header, events, kept, left_out)
