"""What a sweep's folder says about how to read it: the baseline and the declared
comparisons its config named (``OUT/sweep.json``)."""

from __future__ import annotations

import json

from runner.results.where import Loc, location


def sweep_family(out: Loc) -> tuple[list[tuple[str, str]], list[str]]:
    """The sweep config's declared comparisons and primary metrics (defaults: none, and
    ``runner.results.comparisons.PRIMARY_METRICS``)."""
    from runner.results.comparisons import PRIMARY_METRICS

    try:
        spec = json.loads((location(out) / "sweep.json").read_text())["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        spec = {}
    pairs = [(str(a), str(b)) for a, b in spec.get("compare", [])]
    return pairs, [str(m) for m in spec.get("primary_metrics", PRIMARY_METRICS)]


def sweep_baseline(out: Loc) -> str:
    """The baseline the sweep's config named (``baseline = "oracle"``), else keep_all."""
    try:
        spec = json.loads((location(out) / "sweep.json").read_text())["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        return "keep_all"
    return str(spec.get("baseline", "keep_all"))
