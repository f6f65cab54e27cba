"""Where one of fbench's default workloads does not meet a criterion of ``fbench
calibrate`` at its defaults, and why: what meeting it would cost of what the workload
models. The criteria (20 seeds; ``runner/calibrate/analyze.py``):

- (a) no two policies with different rules bit-identical on the quality metrics;
- (b) the best non-oracle current recall ≤ 0.95 and ≥ 0.05 below the oracle's, unbounded
  or at some budget;
- (c) saturated queries ≤ 50% and impossible queries ≤ 20%;
- (d) some policy's false-forget rate in [0.05, 0.5].

``fbench list workloads`` shows the notes; ``tests/test_headroom_notes.py`` checks them
against the committed calibrations (``calibration/*.json``, written by ``make results``):
a note for every criterion a workload does not meet, and none for one it meets.
"""

from __future__ import annotations

CRITERIA = {
    "a": "no two rules bit-identical",
    "b": "headroom below the oracle",
    "c": "saturated ≤ 50%, impossible ≤ 20%",
    "d": "some false-forget in [0.05, 0.5]",
}

# workload -> criterion -> why it is not met (every fbench workload at its current
# version; an empty map: all four met)
UNMET: dict[str, dict[str, str]] = {
    "contradiction": {
        "c": "about a third of the queries are impossible: the seed's hard updates share "
             "only the person's name with the question, so no memory retrieves the new "
             "value (the seed's phrasing floor, kept draw for draw so its numbers "
             "reproduce). contradiction.retrievable is the same stream with findable "
             "hard updates, and meets (c).",
    },
    "contradiction.retrievable": {},
    "lifecycle": {},
    "lifecycle.bursty": {},
    "lifecycle.durable_heavy": {},
    "lifecycle.high_freq_skew": {},
    "lifecycle.recency_biased": {},
}


def notes(name: str) -> str | None:
    """The headroom line of workload ``name`` (None: fbench has not calibrated it)."""
    unmet = UNMET.get(name)
    if unmet is None:
        return None
    if not unmet:
        return "fbench calibrate: criteria (a)-(d) all met at the defaults (20 seeds)."
    met = [k for k in CRITERIA if k not in unmet]
    return ("fbench calibrate, 20 seeds: "
            + "; ".join(f"({k}) {CRITERIA[k]} not met: {why}" for k, why in unmet.items())
            + (f" Met: {', '.join(f'({k})' for k in met)}." if met else ""))
