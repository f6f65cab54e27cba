"""The report's Headroom section: each workload's calibration (``fbench calibrate --json``,
one file per workload in a folder), its criteria met or not, as a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner.report.blocks import Block, Heading, Items, Paragraph, table
from workloads.headroom import UNMET


def load(folder: Path) -> list[dict[str, Any]]:
    """Every calibration JSON in ``folder``, by workload name."""
    docs = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    return sorted(docs, key=lambda d: d["workload"])


def section(docs: list[dict[str, Any]]) -> list[Block]:
    """The Headroom section of the calibrations ``docs``; [] when there are none."""
    if not docs:
        return []
    rows = []
    for d in docs:
        crit = {c["name"][0]: c for c in d["criteria"]}
        gaps = [g for g in d["gaps"] if g["budget"] == 0]
        gap = (f"{gaps[0]['best']} {gaps[0]['best_recall']:.3f} vs {gaps[0]['oracle_recall']:.3f}"
               if gaps else "—")
        rows.append([f"`{d['workload']}`", str(len(d["seeds"])),
                     *(("met" if crit[k]["met"] else "**not met**") for k in "abcd"),
                     gap, f"{d['saturated']:.1%}", f"{d['impossible']:.1%}",
                     crit["a"]["detail"]])
    return [Heading(2, "Headroom: does each workload tell policies apart?"),
            Paragraph("`fbench calibrate WORKLOAD` on each default workload (every reference "
                      "policy and the oracle, unbounded and at budgets 30 and 120). Criteria: "
                      "(a) no two rules bit-identical on every seed; (b) the best current "
                      "recall ≤ 0.95 and ≥ 0.05 below the oracle's, with no budget or at one; "
                      "(c) saturated ≤ 50%, impossible ≤ 20% of queries; (d) some false-forget "
                      "rate in [0.05, 0.5]."),
            table(["workload", "seeds", "a", "b", "c", "d",
                   "best vs oracle (current recall, no budget)", "saturated", "impossible",
                   "identical"], rows, "lrlllllrrl"), *_why(docs)]


def _why(docs: list[dict[str, Any]]) -> list[Block]:
    """Each criterion a workload does not meet, with the reason its notes give
    (``workloads.headroom``, also in `fbench list workloads`)."""
    grouped: dict[tuple[str, str], list[str]] = {}  # (criterion, reason) -> workloads
    for d in docs:
        notes = UNMET.get(d["workload"], {})
        for c in d["criteria"]:
            key = c["name"][0]
            if not c["met"]:
                why = notes.get(key, "no reason recorded for this workload")
                grouped.setdefault((key, why), []).append(f"`{d['workload']}`")
    items = tuple(f"({key}) not met on {', '.join(names)}: {why}"
                  for (key, why), names in grouped.items())
    return [Paragraph("Not met, and why:"), Items(items)] if items else []
