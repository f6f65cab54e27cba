"""Per-seed values of a sweep's cells, for the tests the findings state: the final rows of
its shards, looked up by workload and variant label (``"fifo capacity_fraction=2.5"``),
aligned by seed between two cells."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from runner.results.aggregate import Cell, PerSeed
from runner.results.comparisons import parse_label
from runner.results.where import Loc, location


@dataclass(frozen=True)
class Values:
    cell: Cell
    seeds: np.ndarray
    by_metric: dict[str, np.ndarray]
    full: dict[str, Any]  # every parameter, defaults included (the shard's params_full)


class Evidence:
    """A sweep folder's final rows by cell (cells run with non-policy overrides, such as a
    budget or an embedder, are not matched by a bare label: only the default context)."""

    def __init__(self, out: Loc, final: pa.Table) -> None:
        """``final``: the folder's final rows (``runner.results.load.read_rows``), with
        the coordinates, ``params_full`` and every compared metric."""
        self.out = location(out)
        seeds = PerSeed.of(final)
        full = final.column("params_full")
        self.cells: dict[Cell, Values] = {}
        for cell, idx in sorted(seeds.cells.items(), key=lambda kv: int(kv[1].min())):
            self.cells[cell] = Values(
                cell, seeds.seeds[idx],
                {m.name: seeds.values[idx, j] for j, m in enumerate(seeds.metrics)},
                json.loads(full[int(idx.min())].as_py()))

    def find(self, workload: str, label: str) -> Values | None:
        """The cell of ``label`` at the workload's default context (no budget, default
        embedder); the shortest horizon if it ran at several."""
        policy, over = parse_label(label)
        found = [v for c, v in self.cells.items()
                 if c[0] == workload and c[3] == policy and json.loads(c[4]) == over]
        return min(found, key=lambda v: (v.cell[1], v.cell[2])) if found else None

    def variants(self, workload: str, policy: str) -> list[Values]:
        """Every cell of ``policy`` on ``workload`` at the default context."""
        out = []
        for c, v in self.cells.items():
            params: dict[str, Any] = json.loads(c[4])
            if c[0] == workload and c[3] == policy and all(k.startswith("policy.")
                                                          for k in params):
                out.append(v)
        return out


def paired_values(a: Values, b: Values, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The two cells' values of ``metric`` at their common seeds (nans dropped)."""
    common = np.intersect1d(a.seeds, b.seeds)
    x = a.by_metric[metric][np.isin(a.seeds, common)]
    y = b.by_metric[metric][np.isin(b.seeds, common)]
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]
