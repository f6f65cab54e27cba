"""``OUT/summary.parquet`` read back: whether it is current (made from exactly these
shards, after each of them, with the sweep's declared comparisons), and reading it,
recomputed first when it is not (``runner.results.aggregate``)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from runner.results.aggregate import SUMMARY, aggregate, fingerprint, summary_baseline
from runner.results.layout import Layout
from runner.results.sweep_config import sweep_baseline, sweep_family
from runner.results.where import Loc, arrow_source, location


def summary_is_current(out: Loc) -> bool:
    """The summary exists, was made from exactly these shards, and is newer than each
    (a compacted job counts as the shard it came from)."""
    out = location(out)
    path = out / SUMMARY
    if not path.is_file():
        return False
    stamps = Layout(out).stamps()
    meta = pq.read_schema(arrow_source(path)).metadata or {}
    if meta.get(b"fbench.shards", b"").decode() != fingerprint(stamps):
        return False
    if meta.get(b"fbench.family", b"").decode() != json.dumps(sweep_family(out)):
        return False  # the sweep's declared comparisons changed: the family did
    from runner.results.comparisons import COMPARISONS

    if not (out / COMPARISONS).is_file():
        return False
    made = path.stat().st_mtime_ns
    return all(s.mtime_ns <= made for s in stamps)


def read_summary(out: Loc) -> pa.Table:
    """``OUT/summary.parquet``, recomputed first if missing or stale (with the same baseline;
    if there was none, the sweep config's ``baseline`` or ``keep_all``, and then no
    comparisons if that policy did not run)."""
    out = location(out)
    path = out / SUMMARY
    if summary_is_current(out):
        return pq.read_table(arrow_source(path))
    if path.is_file():
        return aggregate(out, summary_baseline(pq.read_table(arrow_source(path))))
    return aggregate(out, sweep_baseline(out), require_baseline=False)
