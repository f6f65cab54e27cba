"""The trace format's Parquet twin: the header as the file's key-value metadata
(``fbench-trace``: the header's JSON), and one row per event with the columns ``type``,
``t``, ``text``, ``meta`` (its JSON), ``slot``, ``value``, ``kind``, ``stale`` and
``category`` (null where an event has no such field). Rows are numbered like the JSON
lines' lines: the first event is 2, the header being 1. Read lazily, by row groups."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.events import Event
from workloads.trace.format import FORMAT, Header, TraceError, event_json, read_header

META_KEY = FORMAT.encode()
SCHEMA = pa.schema([("type", pa.string()), ("t", pa.int64()), ("text", pa.string()),
                    ("meta", pa.string()), ("slot", pa.string()), ("value", pa.string()),
                    ("kind", pa.string()), ("stale", pa.list_(pa.string())),
                    ("category", pa.string())])
ROWS_PER_GROUP = 65_536


def _row(ev: Event) -> dict[str, Any]:
    doc = event_json(ev)
    truth = doc.get("truth", {})
    return {"type": doc["type"], "t": doc["t"], "text": doc.get("text"),
            "meta": json.dumps(doc["meta"], sort_keys=True) if "meta" in doc else None,
            "slot": truth.get("slot"), "value": truth.get("value"), "kind": truth.get("kind"),
            "stale": truth.get("stale"), "category": truth.get("category")}


def write_parquet(path: Path, header: Header, events: Iterable[Event]) -> int:
    """Write the trace; the number of events written."""
    schema = SCHEMA.with_metadata({META_KEY: json.dumps(header.to_json(), sort_keys=True)})
    n = 0
    with pq.ParquetWriter(path, schema) as writer:
        batch: list[dict[str, Any]] = []
        for ev in events:
            batch.append(_row(ev))
            if len(batch) == ROWS_PER_GROUP:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                n, batch = n + len(batch), []
        if batch or n == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
    return n


def _doc(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the event object of a JSON line (the same checks then apply)."""
    doc: dict[str, Any] = {"type": row["type"], "t": row["t"]}
    if row["type"] == "tick":
        return doc
    doc["text"] = row["text"]
    if row["type"] == "observe":
        doc["meta"] = json.loads(row["meta"]) if row["meta"] is not None else {}
        doc["truth"] = {"slot": row["slot"], "value": row["value"], "kind": row["kind"]}
    else:
        doc["truth"] = {"slot": row["slot"], "value": row["value"],
                        "stale": row["stale"] or [], "category": row["category"]}
    return doc


def read_parquet(path: Path) -> tuple[Header, Iterator[tuple[int, dict[str, Any]]]]:
    try:
        f = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceError(path, 0, "file", f"is not a Parquet file ({exc})") from None
    meta = f.schema_arrow.metadata or {}
    if META_KEY not in meta:
        raise TraceError(path, 1, "header", f"the file has no {FORMAT!r} metadata; write it "
                         "with `fbench trace export --output FILE.parquet`")
    try:
        header_doc = json.loads(meta[META_KEY])
    except json.JSONDecodeError as exc:
        raise TraceError(path, 1, "header", f"is not JSON ({exc.msg})") from None
    header = read_header(path, header_doc if isinstance(header_doc, dict) else {})
    missing = [c for c in SCHEMA.names if c not in f.schema_arrow.names]
    if missing:
        raise TraceError(path, 1, "columns", f"missing {', '.join(missing)}")

    def docs() -> Iterator[tuple[int, dict[str, Any]]]:
        n = 2
        for batch in f.iter_batches(columns=SCHEMA.names):
            for row in batch.to_pylist():
                try:
                    yield n, _doc(row)
                except json.JSONDecodeError as exc:
                    raise TraceError(path, n, "meta", f"is not JSON ({exc.msg})") from None
                n += 1

    return header, docs()
