"""The fbench trace format, version 1: one JSON object per line (docs/trace-format.md).

Line 1 is the header; every other line is one event, in time order::

    {"format": "fbench-trace", "version": 1, "horizon": 3000, "horizon_unit": "turns",
     "categories": {"fact": "..."}, "update_kinds": {"canonical_update": "canonical"},
     "vocabulary": {"entities": ["alice"], "phrases": [["home city", "home_city"]]},
     "distinct_facts": 60, "source": "fbench trace export contradiction --seed 0"}
    {"type": "observe", "t": 0, "text": "...", "meta": {}, "truth": {"slot": "alice.home_city",
     "value": "boston", "kind": "fact"}}
    {"type": "query", "t": 61, "text": "...", "truth": {"slot": "alice.home_city",
     "value": "boston", "stale": [], "category": "fact"}}
    {"type": "tick", "t": 61}

``parse`` reads and checks a whole file line by line, lazily; every problem is a
``TraceError`` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workloads.events import Event, Observe, ObserveTruth, Query, QueryTruth, Tick
from workloads.registry import CATEGORY_NAME

FORMAT = "fbench-trace"
VERSION = 1
UNITS = ("turns", "days")
PHRASINGS = ("canonical", "hard")


class TraceError(ValueError):
    """A trace that cannot be read: ``path:line: field: problem``."""

    def __init__(self, path: Path | str, line: int, field: str, problem: str) -> None:
        # a Parquet trace's rows are numbered like lines: its header is line 1
        where = f"{path}:{line}" if line > 0 else str(path)
        super().__init__(f"{where}: {field}: {problem}")


@dataclass(frozen=True)
class Header:
    """What line 1 declares: the horizon, its unit, the query categories, the update
    kinds, the vocabulary an extractor is configured with, and the number of distinct
    facts (the unit of a capacity given as a fraction)."""

    horizon: int
    horizon_unit: str
    categories: dict[str, str]
    update_kinds: dict[str, str]
    entities: tuple[str, ...]
    phrases: tuple[tuple[str, str], ...]
    distinct_facts: int
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "horizon": self.horizon,
                "horizon_unit": self.horizon_unit, "categories": self.categories,
                "update_kinds": self.update_kinds,
                "vocabulary": {"entities": list(self.entities),
                               "phrases": [list(p) for p in self.phrases]},
                "distinct_facts": self.distinct_facts, "source": self.source}


def _str_map(value: Any, where: str, err: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise err(where, "must be an object of strings")
    return dict(value)


def _int(value: Any, where: str, err: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise err(where, f"must be an integer >= {low}")
    return value


def read_header(path: Path, doc: dict[str, Any]) -> Header:
    """The header object (line 1, or the Parquet file's metadata), checked."""
    def err(f: str, problem: str) -> TraceError:
        return TraceError(path, 1, f, problem)

    if doc.get("format") != FORMAT:
        raise err("format", f"must be {FORMAT!r} (is this an fbench trace?)")
    if doc.get("version") != VERSION:
        raise err("version", f"is {doc.get('version')!r}; this fbench reads version {VERSION}")
    unit = doc.get("horizon_unit")
    if unit not in UNITS:
        raise err("horizon_unit", f"must be one of {', '.join(UNITS)}")
    kinds = _update_kinds(doc.get("update_kinds", {}), err)
    entities, phrases = _vocabulary(doc.get("vocabulary", {}), err)
    categories = _categories(doc.get("categories"), err)
    source = doc.get("source", "")
    if not isinstance(source, str):
        raise err("source", "must be a string")
    return Header(
        horizon=_int(doc.get("horizon"), "horizon", err, 1), horizon_unit=unit,
        categories=categories,
        update_kinds=kinds, entities=entities, phrases=phrases,
        distinct_facts=_int(doc.get("distinct_facts"), "distinct_facts", err, 1),
        source=source)


def _update_kinds(value: Any, err: Any) -> dict[str, str]:
    """The header's ``update_kinds``: each kind's phrasing, one of ``PHRASINGS``."""
    kinds = _str_map(value, "update_kinds", err)
    bad = sorted(k for k, v in kinds.items() if v not in PHRASINGS)
    if bad:
        raise err(f"update_kinds.{bad[0]}", f"must be one of {', '.join(PHRASINGS)}")
    return kinds


def _vocabulary(vocab: Any, err: Any) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The header's ``vocabulary``: its entities and its (phrase, attribute) pairs."""
    if not isinstance(vocab, dict):
        raise err("vocabulary", "must be an object with entities and phrases")
    entities = vocab.get("entities", [])
    if not isinstance(entities, list) or not all(isinstance(e, str) for e in entities):
        raise err("vocabulary.entities", "must be a list of strings")
    phrases = vocab.get("phrases", [])
    if not isinstance(phrases, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in phrases):
        raise err("vocabulary.phrases", "must be a list of [phrase, attribute] pairs")
    return tuple(entities), tuple((p[0], p[1]) for p in phrases)


def _categories(value: Any, err: Any) -> dict[str, str]:
    """The header's ``categories``: each name fit to name a metric."""
    categories = _str_map(value, "categories", err)
    bad = sorted(c for c in categories if not CATEGORY_NAME.fullmatch(c))
    if bad:
        raise err(f"categories.{bad[0]}", "must be lower-case letters, digits and _, starting "
                  "with a letter (it names metrics: recall_at_k_<category>)")
    return categories


def _object(path: Path, n: int, line: str) -> dict[str, Any]:
    try:
        doc = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TraceError(path, n, "line", f"is not JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise TraceError(path, n, "line", "must be a JSON object")
    return doc


def _opt_str(value: Any, where: str, err: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise err(where, "must be a string or null")
    return value


def event_of(path: Path, n: int, doc: dict[str, Any], header: Header) -> Event:
    """One event's object (a JSON line, or a Parquet row) as an event (checked)."""
    def err(f: str, problem: str) -> TraceError:
        return TraceError(path, n, f, problem)

    kind = doc.get("type")
    t = _int(doc.get("t"), "t", err, 0)
    if t >= header.horizon:
        raise err("t", f"{t} is not before the header's horizon {header.horizon}")
    if kind == "tick":
        return Tick(t)
    text = doc.get("text")
    if not isinstance(text, str) or not text:
        raise err("text", "must be a non-empty string")
    truth = doc.get("truth")
    if not isinstance(truth, dict):
        raise err("truth", "must be an object")
    if kind == "observe":
        meta = _str_map(doc.get("meta", {}), "meta", err)
        slot = _opt_str(truth.get("slot"), "truth.slot", err)
        value = _opt_str(truth.get("value"), "truth.value", err)
        if (slot is None) != (value is None):
            raise err("truth.value", "slot and value are both set or both null")
        obs_kind = truth.get("kind")
        if not isinstance(obs_kind, str) or not obs_kind:
            raise err("truth.kind", "must be a non-empty string")
        return Observe(t, text, ObserveTruth(slot, value, obs_kind), meta)
    if kind == "query":
        slot, value = truth.get("slot"), truth.get("value")
        if not isinstance(slot, str) or not slot:
            raise err("truth.slot", "must be a non-empty string")
        if not isinstance(value, str) or not value:
            raise err("truth.value", "must be a non-empty string")
        stale = truth.get("stale", [])
        if not isinstance(stale, list) or not all(isinstance(s, str) for s in stale):
            raise err("truth.stale", "must be a list of strings")
        category = truth.get("category")
        if category not in header.categories:
            raise err("truth.category", f"{category!r} is not one of the header's categories "
                      f"({', '.join(header.categories) or 'none'})")
        return Query(t, text, QueryTruth(slot, value, frozenset(stale), category))
    raise err("type", f"{kind!r} is not observe, query or tick")


def parse(path: Path) -> tuple[Header, Iterator[Event]]:
    """The header (read now) and the events (read lazily, each checked: time never goes
    backwards, and no query comes before the first observation). A ``.parquet`` file is
    the Parquet twin (``workloads.trace.columnar``); anything else JSON lines."""
    if path.suffix == ".parquet":
        from workloads.trace.columnar import read_parquet

        header, docs = read_parquet(path)
    else:
        header, docs = _read_lines(path)
    return header, _checked(path, header, docs)


def _read_lines(path: Path) -> tuple[Header, Iterator[tuple[int, dict[str, Any]]]]:
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    if not first.strip():
        raise TraceError(path, 1, "header", "the file is empty; line 1 must be the header")
    header = read_header(path, _object(path, 1, first))

    def docs() -> Iterator[tuple[int, dict[str, Any]]]:
        with path.open(encoding="utf-8") as lines:
            next(lines)
            for n, line in enumerate(lines, start=2):
                if not line.strip():
                    raise TraceError(path, n, "line", "is empty")
                yield n, _object(path, n, line)

    return header, docs()


def _checked(path: Path, header: Header, docs: Iterator[tuple[int, dict[str, Any]]]
             ) -> Iterator[Event]:
    last, observed = 0, False
    for n, doc in docs:
        ev = event_of(path, n, doc, header)
        if ev.t < last:
            raise TraceError(path, n, "t", f"{ev.t} comes after {last}: time must not go "
                             "backwards")
        last = ev.t
        if isinstance(ev, Query) and not observed:
            raise TraceError(path, n, "type", "a query before any observation")
        observed = observed or isinstance(ev, Observe)
        yield ev


def event_json(ev: Event) -> dict[str, Any]:
    """One event as its trace line's object."""
    if isinstance(ev, Tick):
        return {"type": "tick", "t": ev.t}
    if isinstance(ev, Observe):
        return {"type": "observe", "t": ev.t, "text": ev.text, "meta": dict(ev.meta),
                "truth": {"slot": ev.truth.slot, "value": ev.truth.value,
                          "kind": ev.truth.kind}}
    return {"type": "query", "t": ev.t, "text": ev.text,
            "truth": {"slot": ev.truth.slot, "value": ev.truth.value,
                      "stale": sorted(ev.truth.stale), "category": ev.truth.category}}
