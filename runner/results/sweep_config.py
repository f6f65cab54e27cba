"""What a sweep's folder says about how to read it: the baseline and the declared
comparisons its config named (``OUT/sweep.json``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from runner.results.where import Loc, location, text_lines

HEAD_END = '"jobs": ['  # sweep.json written one job per line: its first line ends so


def read_sweep_record(path: Loc) -> tuple[Any, dict[str, Any], Iterator[Any]]:
    """``sweep.json``'s format, spec and jobs (as dicts). Written one job per line
    (``runner.sweep.run.sweep_record``), its jobs are decoded a line at a time as they
    are iterated, so a million jobs are never held at once; an older layout is decoded
    whole. ``ValueError``, ``KeyError`` or ``TypeError`` if it is not a sweep record."""
    lines = text_lines(path)
    head = next(lines, "").rstrip("\n")
    if head.endswith(HEAD_END):
        doc = json.loads(head + "]}")
        jobs: Iterator[Any] = _job_lines(lines)
    else:
        doc = json.loads(head + "\n" + "".join(lines))
        jobs = iter(doc["jobs"])
    spec = doc["spec"]
    if not isinstance(spec, dict):
        raise TypeError("spec is not a table")
    return doc.get("format", 1), spec, jobs  # (before "format", sweep.json was format 1)


def _job_lines(lines: Iterator[str]) -> Iterator[Any]:
    """The jobs of a one-per-line record: ``{...},`` lines, the last without the comma,
    then ``]}``."""
    for line in lines:
        text = line.strip().removesuffix(",")
        if text == "]}":
            return
        if text:
            yield json.loads(text)
    raise ValueError("sweep.json ends before its jobs do")


def recorded_spec(out: Loc) -> dict[str, Any]:
    """The spec ``OUT/sweep.json`` records (its jobs left unread when it is written one
    job per line)."""
    return read_sweep_record(location(out) / "sweep.json")[1]


def sweep_family(out: Loc) -> tuple[list[tuple[str, str]], list[str]]:
    """The sweep config's declared comparisons and primary metrics (defaults: none, and
    ``runner.results.comparisons.PRIMARY_METRICS``)."""
    from runner.results.comparisons import PRIMARY_METRICS

    try:
        spec = recorded_spec(out)
    except (OSError, ValueError, KeyError, TypeError):
        spec = {}
    pairs = [(str(a), str(b)) for a, b in spec.get("compare", [])]
    return pairs, [str(m) for m in spec.get("primary_metrics", PRIMARY_METRICS)]


def sweep_baseline(out: Loc) -> str:
    """The baseline the sweep's config named (``baseline = "oracle"``), else keep_all."""
    try:
        spec = recorded_spec(out)
    except (OSError, ValueError, KeyError, TypeError):
        return "keep_all"
    return str(spec.get("baseline", "keep_all"))
