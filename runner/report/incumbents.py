"""The incumbents' lead table: every cell of a memory library (a memory whose family is
``incumbent``, as the sweep's ``OUT/memories.json`` says: ``runner.sweep.memories``)
with the version its shards record, its forgetting rule in the adapter's words, its
contradiction, current recall, false-forget and final size (mean and 95% interval over
seeds), and its regret against the oracle at its budget.

Its budget is the smallest memory budget the sweep ran the oracle at (``oracle
capacity``, in entries) that holds the cell's mean final size, or the unbounded oracle
when none does. The regret is the oracle's current recall minus the cell's, paired by
seed (same workload, horizon, k, and the cell's embedder; a memory with its own
retrieval is paired with the oracle at the default embedder): how much recall the
library gives up against the best any memory could do within the same memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runner.analysis import stats
from runner.metrics import METRICS
from runner.report.blocks import Block, Heading, Paragraph, setting_title, table
from runner.results.aggregate import params_sort_key
from runner.results.layout import MEMORIES
from runner.results.tables import format_cell, format_row, variant_label
from runner.results.where import Loc, location

ORACLE = "oracle"
DEFAULT_EMBEDDER = "hashing"
LEAD = (("contradiction_rate", "contradiction ↓"), ("recall_current_at_k", "current recall ↑"),
        ("false_forget_rate", "false-forget ↓"), ("final_size", "final size ↓"))
REGRET = "recall_current_at_k"
# the shard columns the table reads (besides the summary)
COLUMNS = ("workload", "horizon", "k", "policy", "params", "seed", "is_final", "versions",
           REGRET)

Setting = tuple[str, int, int]
Cell = tuple[str, str]  # policy, params
Memories = Mapping[str, Mapping[str, Any]]


def read_memories(out: Loc) -> dict[str, dict[str, Any]]:
    """The sweep's ``memories.json`` ({} when it has none: a sweep from before it)."""
    path = location(out) / MEMORIES
    return dict(json.loads(path.read_text()).get("memories", {})) if path.is_file() else {}


def is_library(memories: Memories, policy: str) -> bool:
    """Whether the sweep's ``memories.json`` calls ``policy`` a library (``incumbent``)."""
    return memories.get(policy, {}).get("family") == "incumbent"


def budget_of(params: str) -> int:
    """An oracle cell's budget in entries (0: none)."""
    return int(json.loads(params).get("policy.capacity", 0))


def oracle_budget(size: float, budgets: Sequence[int]) -> int:
    """The smallest budget that holds ``size`` entries, 0 (unbounded) when none does."""
    held = [b for b in sorted(budgets) if b > 0 and b >= size]
    return held[0] if held else 0


def library_versions(libraries: Sequence[str], versions: Sequence[str]) -> str:
    """``mem0ai 2.2.1, qdrant-client 1.20.0``: what the cell's shards record (every
    distinct version when its jobs differ; "not recorded" where none does)."""
    out = []
    for lib in libraries:
        seen = sorted({json.loads(v or "{}").get(lib, "") for v in versions} - {""})
        out.append(f"{lib} {' / '.join(seen) if seen else 'not recorded'}")
    return ", ".join(out) or "—"


class _Finals:
    """Per seed final values of the regret metric, and each cell's recorded versions."""

    def __init__(self, shards: pa.Table) -> None:
        final = shards.filter(shards.column("is_final")).select(list(COLUMNS)).to_pylist()
        self.values: dict[tuple[Setting, Cell], dict[int, float]] = {}
        self.versions: dict[tuple[Setting, Cell], list[str]] = {}
        for r in final:
            key = ((r["workload"], r["horizon"], r["k"]), (r["policy"], r["params"]))
            if r[REGRET] is not None and not np.isnan(r[REGRET]):
                self.values.setdefault(key, {})[r["seed"]] = float(r[REGRET])
            self.versions.setdefault(key, []).append(r["versions"] or "{}")

    def regret(self, setting: Setting, cell: Cell, oracle: Cell) -> str:
        mine = self.values.get((setting, cell), {})
        best = self.values.get((setting, oracle), {})
        seeds = sorted(set(mine) & set(best))
        if not seeds:
            return "—"
        d = np.array([best[s] - mine[s] for s in seeds])
        bounds = stats.delta_bounds(METRICS[REGRET].bounds)
        lo, hi = stats.interval(d, bounds)
        return format_cell(stats.mean(d), lo, hi, digits=3,
                           too_few=stats.too_few(len(d), lo, hi, bounds)) + (
            f" (n={len(seeds)})" if len(seeds) != len(mine) else "")


def section(summary: pa.Table, shards: pa.Table, memories: Memories,
            brief: bool = False) -> list[Block]:
    """The lead table, one per setting that has a library cell and the oracle; [] when
    the sweep has none. ``brief`` (a sweep included in another's report, which leads
    with the board): when the sweep ran the oracle wherever it ran a library, one table
    of what each library cell is, its numbers left to the board and to the sweep's own
    report."""
    rows = summary.to_pylist()
    cells: dict[Setting, dict[Cell, dict[str, dict[str, Any]]]] = {}
    for r in rows:
        setting = (r["workload"], r["horizon"], r["k"])
        cells.setdefault(setting, {}).setdefault((r["policy"], r["params"]), {})[r["metric"]] = r
    libraries = {s: c for s, c in cells.items() if any(is_library(memories, p) for p, _ in c)}
    wanted = {s: c for s, c in libraries.items() if any(p == ORACLE for p, _ in c)}
    if not libraries:
        return []
    if brief and wanted.keys() == libraries.keys():
        return _brief(libraries, _Finals(shards), memories)
    blocks: list[Block] = [Heading(2, "The libraries against the oracle")]
    if wanted:
        blocks.append(Paragraph(
            "Each library cell as it ran: the versions its shards record, its "
            "forgetting rule, mean [95% interval over seeds], and its "
            "regret: the oracle's current recall minus the library's, paired by seed, "
            "with the oracle at the smallest budget swept that holds the cell's mean "
            "final size (∞: none does; the unbounded oracle) and the cell's embedder."))
    lacking = sorted(set(libraries) - set(wanted))
    if lacking:
        blocks.append(Paragraph(
            f"Not shown for {', '.join(setting_title(s) for s in lacking)}: this sweep ran "
            "no `oracle` there, so there is no regret to give. Add `oracle` to its "
            "policies, or place the sweep among the published results, whose oracle it "
            "takes: `fbench board OUT`."))
    finals = _Finals(shards)
    for setting in sorted(wanted):
        blocks += _setting_table(setting, wanted[setting], finals, memories)
    return blocks


def _brief(libraries: dict[Setting, dict[Cell, dict[str, dict[str, Any]]]], finals: _Finals,
           memories: Memories) -> list[Block]:
    """Each library cell once: the versions its shards record on every setting it ran,
    and its forgetting rule."""
    versions: dict[Cell, list[str]] = {}
    for setting, by_cell in libraries.items():
        for cell in by_cell:
            if is_library(memories, cell[0]):
                versions.setdefault(cell, []).extend(finals.versions.get((setting, cell), []))
    body = [[variant_label(*cell),
             library_versions(memories[cell[0]].get("library", []), versions[cell]),
             memories[cell[0]].get("rules", {}).get(cell[1], "")]
            for cell in sorted(versions, key=lambda c: (c[0], params_sort_key(c[1])))]
    return [Heading(2, "The libraries as they ran"),
            Paragraph("Each library cell: the versions its shards record and its forgetting "
                      "rule. Its numbers and its regret against the oracle are on the board "
                      "this report leads with, and in the sweep's own report."),
            table(["library", "version", "forgetting rule"], body, "lll")]


def _oracles(by_cell: dict[Cell, dict[str, dict[str, Any]]]) -> dict[tuple[str, int], Cell]:
    out = {}
    for (policy, params), metrics in by_cell.items():
        if policy == ORACLE:
            embedder = next(iter(metrics.values()))["embedder"] or DEFAULT_EMBEDDER
            out[(embedder, budget_of(params))] = (policy, params)
    return out


def _setting_table(setting: Setting, by_cell: dict[Cell, dict[str, dict[str, Any]]],
                   finals: _Finals, memories: Memories) -> list[Block]:
    oracles = _oracles(by_cell)
    body = []
    libraries = sorted((c for c in by_cell if is_library(memories, c[0])),
                       key=lambda c: (c[0], params_sort_key(c[1])))
    for cell in libraries:
        metrics = by_cell[cell]
        embedder = next(iter(metrics.values()))["embedder"]
        if not any(e == embedder for e, _ in oracles):
            embedder = DEFAULT_EMBEDDER
        size = metrics["final_size"]["mean"] if "final_size" in metrics else np.nan
        budget = oracle_budget(size, [b for e, b in oracles if e == embedder])
        oracle = oracles.get((embedder, budget))
        values = [format_row(m) if (m := metrics.get(name)) else "—" for name, _ in LEAD]
        known = memories[cell[0]]
        body.append([variant_label(*cell), library_versions(known.get("library", []),
                     finals.versions.get((setting, cell), [])),
                     known.get("rules", {}).get(cell[1], ""), *values,
                     f"{budget or '∞'} ({embedder})" if oracle else "—",
                     finals.regret(setting, cell, oracle) if oracle else "—"])
    return [Heading(3, setting_title(setting)),
            table(["library", "version", "forgetting rule", *(h for _, h in LEAD),
                   "oracle budget", "regret: current recall"], body, "lllrrrrlr")]
