"""A sweep config's declared primary family: ``compare`` (pairs of variant labels) and
``primary_metrics``, validated (runner.results.comparisons reads them back)."""

from __future__ import annotations

from typing import Any

from runner.errors import FbenchError, lookup


def compare_pairs(value: Any) -> tuple[tuple[str, str], ...]:
    """``compare = [["ebbinghaus", "last_write_wins"], ...]``: pairs of variant labels."""
    if not isinstance(value, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in value):
        raise FbenchError('config key \'compare\' must be a list of pairs of policies, e.g. '
                          'compare = [["ebbinghaus", "last_write_wins"]]')
    return tuple((str(a).strip(), str(b).strip()) for a, b in value)


def primary_metrics(value: Any) -> tuple[str, ...]:
    """``primary_metrics = [...]``: metrics with a better direction (timing ones are not)."""
    from runner.metrics import METRICS

    items = ([x.strip() for x in value.split(",") if x.strip()] if isinstance(value, str)
             else value if isinstance(value, list) else [value])
    names = tuple(str(x) for x in items)
    for name in names:
        metric = lookup(METRICS, name, "metric")
        if metric.direction == "none" or metric.timing:
            raise FbenchError(f"primary metric {name!r} has no better direction; choose a "
                              "metric marked ↑ or ↓ in `fbench list metrics`")
    return names
