"""What a sweep's folder says about how to read it: the baseline and the declared
comparisons its config named (``OUT/sweep.json``)."""

from __future__ import annotations

import json
from typing import Any

from runner.results.where import Loc, location


def recorded_spec(out: Loc) -> dict[str, Any]:
    """The spec ``OUT/sweep.json`` records, without decoding its jobs when it is written
    one job per line (``runner.sweep.run.sweep_record``: the spec on the first line); an
    older layout is decoded whole."""
    text = (location(out) / "sweep.json").read_text(encoding="utf-8")
    head, _, _ = text.partition("\n")
    if head.endswith('"jobs": ['):
        try:
            spec = json.loads(head + "]}")["spec"]
            if isinstance(spec, dict):
                return spec
        except ValueError:
            pass
    spec = json.loads(text)["spec"]
    if not isinstance(spec, dict):
        raise TypeError("spec is not a table")
    return spec


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
