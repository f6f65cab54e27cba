"""Reduce a sweep's shards to ``OUT/summary.parquet``: one row per cell and metric.

A *cell* is (workload, horizon, k, policy, params); its seeds are the replicates
and only each job's final row counts. For every non-timing metric a row holds n,
mean, std, IQM and the t interval (``runner.analysis.stats``), the embedder the cell
ran with, and the paired comparison with the *baseline cell* (``Baselines``): the
baseline policy at its defaults, at the same workload, horizon and k, with the same
non-policy parameters (``workload.*``, ``store.*``) and the same embedder, paired by
seed: Δ, its t interval, the sign-flip p, the MDD, and two flags (bit-identical on every
seed; the baseline at the metric's bound, so "better" is impossible). A cell with no
baseline at its embedder is not paired across: its ``baseline_note`` says so (the rule
is ``runner.results.pairing``); comparisons go to ``OUT/comparisons.parquet``
(``runner.results.comparisons``). Also: the summary indexed by cell (read back, and
recomputed when stale: ``runner.results.summary``). Shards are read by
``runner.results.load``, shown by ``.tables``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runner.analysis import stats
from runner.errors import FbenchError
from runner.results.atomic import write_parquet
from runner.results.layout import Layout, Stamp
from runner.results.load import load_shards
from runner.results.pairing import (  # noqa: F401 (baseline_params: re-exported)
    Baselines,
    aligned,
    baseline_params,
    bounded,
    cell_embedders,
    twins,
)
from runner.results.shard import compared_metrics
from runner.results.sweep_config import sweep_family
from runner.results.where import Loc, location

SUMMARY = "summary.parquet"
CELL = ("workload", "horizon", "k", "policy", "params")
# Columns a summary never reads (provenance, the full spec, checkpoint coordinates): left
# unread, they are most of a row's bytes (at 100,000 jobs, hundreds of MB).
UNUSED = frozenset({"spec", "params_full", "versions", "node", "git_commit",
                    "fbench_version", "workload_version", "t", "fraction"})

SUMMARY_SCHEMA = pa.schema([
    ("workload", pa.string()),
    ("horizon", pa.int64()),
    ("k", pa.int64()),
    ("policy", pa.string()),
    ("params", pa.string()),
    ("metric", pa.string()),
    ("direction", pa.string()),
    ("n_jobs", pa.int64()),       # jobs (seeds) in the cell
    ("n", pa.int64()),            # seeds with a value (not nan, not missing)
    ("n_missing", pa.int64()),    # seeds whose shard lacks the metric's column
    ("mean", pa.float64()),
    ("std", pa.float64()),
    ("iqm", pa.float64()),
    ("ci_low", pa.float64()),
    ("ci_high", pa.float64()),
    ("embedder", pa.string()),    # the embedder the cell's memory ranked with
    ("same_as", pa.string()),     # the first cell of its setting it is bit-identical to
    # The paired comparison; all null when the cell is the baseline or has none.
    ("baseline_note", pa.string()),  # why a cell has no baseline (no pairing across embedders)
    ("baseline", pa.string()),
    ("baseline_params", pa.string()),
    ("n_pairs", pa.int64()),
    ("delta_mean", pa.float64()),
    ("delta_ci_low", pa.float64()),
    ("delta_ci_high", pa.float64()),
    ("n_better", pa.int64()),
    ("n_ties", pa.int64()),
    ("n_worse", pa.int64()),
    ("share_better", pa.float64()),
    ("mdd", pa.float64()),
    ("p_value", pa.float64()),    # sign-flip permutation p of the paired Δ (unadjusted)
    ("identical", pa.bool_()),    # bit-identical to the baseline on every seed
    ("bounded", pa.bool_()),      # the baseline sits at the metric's best bound on every seed
])
PAIRED_COLUMNS = SUMMARY_SCHEMA.names[SUMMARY_SCHEMA.get_field_index("baseline"):]

Cell = tuple[str, int, int, str, str]


def fingerprint(stamps: Sequence[Stamp]) -> str:
    """What the summary was computed from: every job's shard (relative path and size) as
    the sweep wrote it, so compacting the shards leaves the fingerprint unchanged."""
    h = hashlib.sha256()
    for s in sorted(stamps, key=Stamp.sort_key):
        h.update(f"{s.shard}\x1f{s.size}\n".encode())
    return h.hexdigest()


# --- cells -------------------------------------------------------------------------------


def _number_key(value: Any) -> tuple[int, float, str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return (1, 0.0, str(value))
    return (0, float(value), "")


def params_sort_key(params: str) -> tuple[Any, ...]:
    """Numeric order for parameter values (60 before 120), defaults ("{}") first."""
    return tuple((k, _number_key(v)) for k, v in sorted(json.loads(params).items()))


def cell_sort_key(cell: Cell, baseline: str = "") -> tuple[Any, ...]:
    """Setting, then the baseline policy first, then policies by name, params numerically."""
    w, h, k, policy, params = cell
    return (w, h, k, policy != baseline, policy, params_sort_key(params))


def _cells(final: pa.Table) -> dict[Cell, np.ndarray]:
    """Row indices of each cell, sorted by seed; a job with two final rows is an error."""
    ids = final.column("job_id").to_pylist()
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[0]
        raise FbenchError(f"job {dup} has more than one final row (duplicate shards?); "
                          "remove the extra copy")
    cols = [final.column(c).to_pylist() for c in CELL]
    seeds = final.column("seed").to_pylist()
    groups: dict[Cell, list[int]] = {}
    for i, key in enumerate(zip(*cols, strict=True)):
        groups.setdefault(key, []).append(i)
    for key, rows in groups.items():
        seen: dict[int, int] = {}
        for i in rows:
            if (j := seen.setdefault(seeds[i], i)) != i:
                raise FbenchError(
                    f"{key[0]} {key[3]} has two jobs for seed {seeds[i]} ({ids[j]} and {ids[i]}"
                    ": shards of another workload or plugin version); remove the old shards "
                    "or sweep into a fresh folder")
    return {
        key: np.array(sorted(rows, key=lambda i: seeds[i]), dtype=np.int64)
        for key, rows in sorted(groups.items(), key=lambda kv: cell_sort_key(kv[0]))
    }


def values_of(final: pa.Table) -> np.ndarray:
    """Every deterministic metric of the final rows (rows x metrics, nan = no value)."""
    return np.column_stack([_metric_values(final, m.name)[0]
                            for m in compared_metrics(final.column_names)])


def _metric_values(final: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Values with null -> nan, and the mask of nulls (the shard lacked the column)."""
    col = final.column(name)
    missing = col.is_null().to_numpy(zero_copy_only=False)
    values = pc.fill_null(col, math.nan).to_numpy().astype(np.float64)
    return values, missing


# --- the summary -------------------------------------------------------------------------


def aggregate(out: str | Loc, baseline: str = "keep_all", *,
              require_baseline: bool = True) -> pa.Table:
    """Summarize the final rows of ``OUT/shards`` and write ``OUT/summary.parquet``.

    An absent baseline policy is an error, unless ``require_baseline`` is false (the
    report's implicit aggregation): then nothing is paired.
    """
    out = location(out)
    stamps = Layout(out).stamps()
    final = load_shards(out, final_only=True, skip=UNUSED)
    policies = sorted(set(final.column("policy").to_pylist()))
    if require_baseline and baseline not in policies:
        raise FbenchError(f"baseline policy {baseline!r} is not in the shards; present: "
                          f"{', '.join(policies)} (choose one with --baseline)")
    cells = _cells(final)
    embedders = cell_embedders(final, cells)
    bases = Baselines(baseline, embedders)
    seeds = np.asarray(final.column("seed").to_numpy(), dtype=np.int64)
    rows: dict[str, list[Any]] = {name: [] for name in SUMMARY_SCHEMA.names}
    metrics = compared_metrics(final.column_names)
    directions = [m.direction for m in metrics]
    read = [_metric_values(final, m.name) for m in metrics]
    values = np.column_stack([v for v, _ in read])  # rows x metrics, nan = no value
    missing = np.column_stack([miss for _, miss in read])  # the shard lacked the column
    same = twins(cells, seeds, values)
    for cell, idx in cells.items():
        w, h, k, policy, params = cell
        summaries = stats.summarize_columns(values[idx])
        n_missing = missing[idx].sum(axis=0)
        base_cell, note = bases.of(cell)
        deltas: list[stats.Paired | None] = [None] * len(metrics)
        limits = [False] * len(metrics)
        if base_cell is not None:
            pidx, qidx = aligned(seeds, idx, cells[base_cell])
            key = json.dumps([*cell, "vs", *base_cell])
            deltas = list(stats.paired_columns(values[pidx], values[qidx], directions, key))
            limits = [bounded(m, stats.as_array(values[qidx, j])) for j, m in enumerate(metrics)]
        for j, m in enumerate(metrics):
            s = summaries[j]
            row: dict[str, Any] = {
                "workload": w, "horizon": h, "k": k, "policy": policy, "params": params,
                "metric": m.name, "direction": m.direction, "n_jobs": len(idx), "n": s.n,
                "n_missing": int(n_missing[j]), "mean": s.mean, "std": s.std,
                "iqm": s.iqm, "ci_low": s.ci_low, "ci_high": s.ci_high,
                "embedder": embedders[cell], "baseline_note": note, "same_as": same.get(cell),
            }
            row |= dict.fromkeys(PAIRED_COLUMNS)
            d = deltas[j]
            if d is not None and base_cell is not None:
                row |= {
                    "baseline": baseline, "baseline_params": base_cell[4], "n_pairs": d.n,
                    "delta_mean": d.mean, "delta_ci_low": d.ci_low, "delta_ci_high": d.ci_high,
                    "n_better": d.better, "n_ties": d.ties, "n_worse": d.worse,
                    "share_better": d.share_better, "mdd": d.mdd, "p_value": d.p,
                    "identical": d.identical, "bounded": limits[j],
                }
            for name, v in row.items():
                rows[name].append(v)
    meta = {
        "fbench.baseline": baseline,
        "fbench.ci_method": stats.CI_METHOD,
        "fbench.test_method": stats.TEST_METHOD,
        "fbench.level": str(stats.LEVEL),
        "fbench.shards": fingerprint(stamps),
        "fbench.family": json.dumps(sweep_family(out)),
        "fbench.n_shards": str(len(stamps)),
    }
    table = pa.table(rows, schema=SUMMARY_SCHEMA.with_metadata(meta))
    from runner.results import comparisons as cmp

    pairs, primary = sweep_family(out)
    found = cmp.adjust(cmp.baseline_rows(table, primary) + cmp.declared_rows(
        final, cells, embedders, pairs, primary, values, metrics))
    write_parquet(out / cmp.COMPARISONS, found.replace_schema_metadata(meta))
    write_parquet(out / SUMMARY, table)
    return table


Setting = tuple[str, int, int]  # workload, horizon, k


class SummaryIndex:
    """A summary's rows by cell and metric, cells in report order (baseline first)."""

    def __init__(self, summary: pa.Table) -> None:
        self.baseline = summary_baseline(summary)
        self.rows: dict[Cell, dict[str, dict[str, Any]]] = {}
        for r in summary.to_pylist():
            cell: Cell = (r["workload"], r["horizon"], r["k"], r["policy"], r["params"])
            self.rows.setdefault(cell, {})[r["metric"]] = r
        self.cells = sorted(self.rows, key=lambda c: cell_sort_key(c, self.baseline))

    def settings(self) -> list[Setting]:
        return sorted({(c[0], c[1], c[2]) for c in self.cells})

    def in_setting(self, setting: Setting) -> list[Cell]:
        return [c for c in self.cells if c[:3] == setting]


def summary_baseline(summary: pa.Table) -> str:
    meta = summary.schema.metadata or {}
    return meta.get(b"fbench.baseline", b"keep_all").decode()
