"""Reduce a sweep's shards to ``OUT/summary.parquet``: one row per cell and metric.

A *cell* is (workload, horizon, k, policy, params); its seeds are the replicates
and only each job's final row counts. For every non-timing metric a row holds n,
mean, std, IQM and the interval (``runner.analysis.stats.interval``), the embedder the cell
ran with, and the paired comparison with the *baseline cell* (``Baselines``): the
baseline policy at its defaults, at the same workload, horizon and k, with the same
non-policy parameters (``workload.*``, ``store.*``) and the same embedder, paired by
seed: Δ, its interval, the sign-flip p (one-sided when the baseline sits at the metric's
bound, so "better" is impossible), the MDD, two flags (bit-identical on every seed; at
the bound) and a digest of the per-seed deltas. A cell with no
baseline at its embedder is not paired across: its ``baseline_note`` says so (the rule
is ``runner.results.pairing``); comparisons go to ``OUT/comparisons.parquet``
(``runner.results.comparisons``). ``read_summary`` reads the summary back, recomputed
first when it is missing or stale; ``SummaryIndex`` indexes it by cell. Shards are read
by ``runner.results.load``, shown by ``.tables``.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from runner.analysis import stats
from runner.errors import FbenchError
from runner.metrics.declare import Metric
from runner.results.atomic import write_parquet
from runner.results.layout import FINALS, LIST_CHUNK, Layout
from runner.results.load import load_shards
from runner.results.pairing import (  # noqa: F401 (baseline_params: re-exported)
    Baselines,
    aligned,
    baseline_params,
    cell_embedders,
    twins,
)
from runner.results.shard import compared_metrics
from runner.results.sweep_config import sweep_baseline, sweep_family
from runner.results.where import Loc, arrow_source, location

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
    ("delta_digest", pa.string()),  # of the per-seed deltas: equal digests, the same test
])
PAIRED_COLUMNS = SUMMARY_SCHEMA.names[SUMMARY_SCHEMA.get_field_index("baseline"):]

Cell = tuple[str, int, int, str, str]


def fingerprint(stamps: pa.Table) -> str:
    """What the summary was computed from: every job's shard (relative path and size) as
    the sweep wrote it, so compacting the shards leaves the fingerprint unchanged.
    ``stamps``: ``Layout.stamps()``, in path order."""
    h = hashlib.sha256()
    for batch in stamps.to_batches(max_chunksize=LIST_CHUNK):
        shards, sizes = batch.column("shard").to_pylist(), batch.column("size").to_pylist()
        h.update("".join(f"{s}\x1f{n}\n" for s, n in zip(shards, sizes, strict=True))
                 .encode())
    return h.hexdigest()


def source_of(out: Loc) -> tuple[str, int, int | None]:
    """What a summary of ``out`` is computed from: its fingerprint, its number of jobs
    and the newest file's mtime (ns): the shards (``fingerprint``) and, in a published
    folder (``runner.results.finals``), its ``finals.parquet``, by content."""
    stamps = Layout(out).stamps()
    mtimes = stamps.column("mtime_ns")
    found = fingerprint(stamps), stamps.num_rows, pc.max(mtimes).as_py() if len(mtimes) else None
    finals = out / FINALS
    if not finals.is_file():
        return found
    data = finals.read_bytes()
    held = {s.rsplit("/", 1)[-1].removesuffix(".parquet")
            for s in stamps.column("shard").to_pylist()}
    ids = pq.read_table(pa.BufferReader(data), columns=["job_id"]).column(0).to_pylist()
    digest = f"finals {hashlib.sha256(data).hexdigest()}"
    mtime = finals.stat().st_mtime_ns
    return (digest if not held else f"{found[0]} + {digest}",
            found[1] + len(set(ids) - held), max(mtime, found[2] or mtime))


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
    """Row indices of each cell, sorted by seed, cells in ``cell_sort_key`` order; a job
    with two final rows, or a cell with two jobs of one seed, is an error."""
    if pc.count_distinct(final.column("job_id")).as_py() != final.num_rows:
        _duplicate_error(final)
    codes, names = [], []
    for c in CELL:
        encoded = pc.dictionary_encode(final.column(c).combine_chunks())
        codes.append(encoded.indices.to_numpy())
        names.append(encoded.dictionary.to_pylist())
    keys, inverse = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    seeds = np.asarray(final.column("seed").to_numpy(), dtype=np.int64)
    order = np.lexsort((seeds, inverse))  # by cell, then seed (stable)
    by_cell, by_seed = inverse[order], seeds[order]
    if np.any((by_cell[1:] == by_cell[:-1]) & (by_seed[1:] == by_seed[:-1])):
        _duplicate_error(final)
    groups = np.split(order, np.flatnonzero(np.diff(by_cell)) + 1)
    cells = {tuple(names[j][key[j]] for j in range(len(CELL))): rows.astype(np.int64)
             for key, rows in zip(keys.tolist(), groups, strict=True)}
    return dict(sorted(cells.items(), key=lambda kv: cell_sort_key(kv[0])))


def _duplicate_error(final: pa.Table) -> None:
    """Raise the error naming the first job with two final rows, or else the first cell
    with two jobs of one seed (in row order)."""
    ids = final.column("job_id").to_pylist()
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[0]
        raise FbenchError(f"job {dup} has more than one final row (duplicate shards?); "
                          "remove the extra copy")
    seeds = final.column("seed").to_pylist()
    seen: dict[tuple[Any, ...], int] = {}
    for i, key in enumerate(zip(*(final.column(c).to_pylist() for c in CELL), strict=True)):
        if (j := seen.setdefault((key, seeds[i]), i)) != i:
            raise FbenchError(
                f"{key[0]} {key[3]} has two jobs for seed {seeds[i]} ({ids[j]} and {ids[i]}"
                ": shards of another workload or plugin version); remove the old shards "
                "or sweep into a fresh folder")


def _metric_values(col: pa.ChunkedArray, values: np.ndarray, missing: np.ndarray) -> None:
    """Fills ``values`` with the column's values (null -> nan) and ``missing`` with the
    mask of nulls (the shard lacked the column), in place: no matrix is made twice."""
    missing[:] = col.is_null().to_numpy(zero_copy_only=False)
    values[:] = pc.fill_null(col, math.nan).to_numpy()


# --- the summary -------------------------------------------------------------------------


def aggregate(out: str | Loc, baseline: str = "keep_all", *, require_baseline: bool = True,
              final: pa.Table | None = None) -> pa.Table:
    """Summarize the final rows of ``OUT/shards`` and write ``OUT/summary.parquet`` and
    the comparisons (``runner.results.comparisons``). ``final``: those rows, already read
    (``runner.results.load.read_rows``), with at least the columns a summary reads.

    An absent baseline policy is an error, unless ``require_baseline`` is false (the
    report's implicit aggregation): then nothing is paired.
    """
    out = location(out)
    shards, n_shards, _ = source_of(out)
    seeds = PerSeed.of(final) if final is not None else \
        PerSeed.taking([load_shards(out, final_only=True, skip=UNUSED)])
    policies = sorted({cell[3] for cell in seeds.cells})
    if require_baseline and baseline not in policies:
        raise FbenchError(f"baseline policy {baseline!r} is not in the shards; present: "
                          f"{', '.join(policies)} (choose one with --baseline)")
    meta = {
        "fbench.baseline": baseline,
        "fbench.ci_method": stats.CI_METHOD,
        "fbench.test_method": stats.TEST_METHOD,
        "fbench.level": str(stats.LEVEL),
        "fbench.shards": shards,
        "fbench.family": json.dumps(sweep_family(out)),
        "fbench.n_shards": str(n_shards),
    }
    table = pa.table(_summary_rows(seeds, baseline), schema=SUMMARY_SCHEMA.with_metadata(meta))
    from runner.results import comparisons as cmp

    pairs, primary = sweep_family(out)
    found = cmp.adjust(cmp.baseline_rows(table, primary) + cmp.declared_rows(
        seeds.seeds, seeds.cells, seeds.embedders, pairs, primary, seeds.values,
        seeds.metrics))
    write_parquet(out / cmp.COMPARISONS, found.replace_schema_metadata(meta))
    write_parquet(out / SUMMARY, table)
    return table


@dataclass(frozen=True)
class PerSeed:
    """A sweep's final rows as its statistics read them: each cell's rows (sorted by
    seed), every row's seed, each cell's embedder, and every compared metric's values
    (rows x metrics, nan = no value) with the mask of those the shard lacked."""

    cells: dict[Cell, np.ndarray]
    seeds: np.ndarray
    embedders: dict[Cell, str]
    metrics: list[Metric]
    values: np.ndarray
    missing: np.ndarray

    @classmethod
    def of(cls, final: pa.Table) -> PerSeed:
        return cls.taking([final])

    @classmethod
    def taking(cls, held: list[pa.Table]) -> PerSeed:
        """``of`` the one table in ``held``, taken out of it: when that was the rows' last
        reference, each metric's column is freed once its values are copied, so the rows
        and the matrix are never both whole."""
        final = held.pop()
        cells = _cells(final)
        metrics = compared_metrics(final.column_names)
        seeds = np.asarray(final.column("seed").to_numpy(), dtype=np.int64)
        embedders = cell_embedders(final, cells)
        columns = {m.name: final.column(m.name) for m in metrics}
        n_rows = final.num_rows
        del final
        values = np.empty((n_rows, len(metrics)), dtype=np.float64)
        missing = np.empty((n_rows, len(metrics)), dtype=bool)
        for j, m in enumerate(metrics):
            _metric_values(columns.pop(m.name), values[:, j], missing[:, j])
        return cls(cells, seeds, embedders, metrics, values, missing)


def _summary_rows(seeds: PerSeed, baseline: str) -> dict[str, list[Any]]:
    """The summary's columns: one row per cell and compared metric, in cell order."""
    bases = Baselines(baseline, seeds.embedders)
    same = twins(seeds.cells, seeds.seeds, seeds.values)
    rows: dict[str, list[Any]] = {name: [] for name in SUMMARY_SCHEMA.names}
    for cell, idx in seeds.cells.items():
        base_cell, note = bases.of(cell)
        described = {"embedder": seeds.embedders[cell], "baseline_note": note,
                     "same_as": same.get(cell)}
        for row in _cell_rows(seeds, cell, idx, base_cell, baseline, described):
            for name, v in row.items():
                rows[name].append(v)
    return rows


def _cell_rows(seeds: PerSeed, cell: Cell, idx: np.ndarray, base_cell: Cell | None,
               baseline: str, described: dict[str, Any]) -> list[dict[str, Any]]:
    """A cell's summary rows, one per metric: its statistics over seeds, and the paired
    comparison with ``base_cell`` (if any)."""
    w, h, k, policy, params = cell
    bounds = [m.bounds for m in seeds.metrics]
    summaries = stats.summarize_columns(seeds.values[idx], bounds)
    n_missing = seeds.missing[idx].sum(axis=0)
    deltas: list[stats.Paired | None] = [None] * len(seeds.metrics)
    if base_cell is not None:
        pidx, qidx = aligned(seeds.seeds, idx, seeds.cells[base_cell])
        key = json.dumps([*cell, "vs", *base_cell])
        deltas = list(stats.paired_columns(seeds.values[pidx], seeds.values[qidx],
                                           [m.direction for m in seeds.metrics], key,
                                           bounds))
    out = []
    for j, m in enumerate(seeds.metrics):
        s = summaries[j]
        row: dict[str, Any] = {
            "workload": w, "horizon": h, "k": k, "policy": policy, "params": params,
            "metric": m.name, "direction": m.direction, "n_jobs": len(idx), "n": s.n,
            "n_missing": int(n_missing[j]), "mean": s.mean, "std": s.std,
            "iqm": s.iqm, "ci_low": s.ci_low, "ci_high": s.ci_high, **described,
        }
        row |= dict.fromkeys(PAIRED_COLUMNS)
        d = deltas[j]
        if d is not None and base_cell is not None:
            row |= {
                "baseline": baseline, "baseline_params": base_cell[4], "n_pairs": d.n,
                "delta_mean": d.mean, "delta_ci_low": d.ci_low, "delta_ci_high": d.ci_high,
                "n_better": d.better, "n_ties": d.ties, "n_worse": d.worse,
                "share_better": d.share_better, "mdd": d.mdd, "p_value": d.p,
                "identical": d.identical, "bounded": d.bounded, "delta_digest": d.digest,
            }
        out.append(row)
    return out


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


def summary_is_current(out: Loc) -> bool:
    """The summary exists, was made from exactly these shards with today's statistics,
    and is newer than each (a compacted job counts as the shard it came from)."""
    out = location(out)
    path = out / SUMMARY
    if not path.is_file():
        return False
    shards, _, newest = source_of(out)
    meta = pq.read_schema(arrow_source(path)).metadata or {}
    if meta.get(b"fbench.shards", b"").decode() != shards:
        return False
    if meta.get(b"fbench.family", b"").decode() != json.dumps(sweep_family(out)):
        return False  # the sweep's declared comparisons changed: the family did
    if (meta.get(b"fbench.ci_method", b"").decode(),
            meta.get(b"fbench.test_method", b"").decode()) != (stats.CI_METHOD,
                                                               stats.TEST_METHOD):
        return False  # made by other statistics
    from runner.results.comparisons import COMPARISONS

    if not (out / COMPARISONS).is_file():
        return False
    return newest is None or newest <= path.stat().st_mtime_ns


def read_summary(out: Loc, final: pa.Table | None = None) -> pa.Table:
    """``OUT/summary.parquet``, recomputed first if missing or stale (with the same baseline;
    if there was none, the sweep config's ``baseline`` or ``keep_all``, and then no
    comparisons if that policy did not run), from ``final`` if given (the final rows,
    already read)."""
    out = location(out)
    path = out / SUMMARY
    if summary_is_current(out):
        return pq.read_table(arrow_source(path))
    if path.is_file():
        return aggregate(out, summary_baseline(pq.read_table(arrow_source(path))), final=final)
    return aggregate(out, sweep_baseline(out), require_baseline=False, final=final)
