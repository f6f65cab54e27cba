"""Every paired comparison of a sweep, its family and its verdict: ``OUT/comparisons.parquet``.

Two sources: each cell against its baseline (``runner.results.aggregate``), and the pairs
the sweep config declares (``compare = [["ebbinghaus", "last_write_wins"]]``, variant
labels such as ``"ebbinghaus tau=30"``), matched in every setting where both ran with
the same non-policy parameters and the same embedder.

- **Primary family**: each policy at its defaults against the baseline, and each
  declared pair, on the primary metrics (the config's ``primary_metrics``, default
  ``PRIMARY_METRICS``). Holm-adjusted within each setting (workload, horizon, k).
- **Exploratory**: every other comparison (parameter variants, other metrics),
  Benjamini–Hochberg q-values over the whole sweep.
- Not tests: comparisons **identical** by construction (bit-identical on every seed), and
  those with no interval (a metric the workload does not define, or one seed).
- A test whose per-seed deltas are bit-identical to an earlier one's in its family (a
  cell bit-identical to another, such as window and last_write_wins; recall_at_5 and
  recall_at_k at k = 5) counts once: it is that test's **copy** (``copy_of``) and takes
  its adjusted p and verdict.
- A **bounded** comparison (the baseline at the metric's best bound on every seed:
  keep_all's false-forget rate is 0) cannot come out better; its p is the one-sided
  sign-flip p toward worse (``runner.analysis.stats.paired_delta``), and it is a test
  like any other.

A verdict is ``better`` / ``worse`` when the adjusted p is below 0.05 and the 95%
interval of Δ excludes 0 (``…, within margin`` when that interval also lies inside ± the
metric's margin: a real difference too small to matter); otherwise ``equivalent`` when
the interval lies inside ± the margin, else ``inconclusive``; ``identical``; or ``—``
(no interval: one seed, an undefined or a descriptive metric).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runner.analysis import stats
from runner.metrics import METRICS, Metric
from runner.results.pairing import (
    Cell,
    aligned,
    context,
    is_default_variant,
    is_embedder_key,
)

COMPARISONS = "comparisons.parquet"
PRIMARY_METRICS = ("contradiction_rate", "recall_current_at_k", "false_forget_rate",
                   "final_size")
VERDICTS = ("better", "worse", "better, within margin", "worse, within margin", "equivalent",
            "inconclusive", "identical", "—")

SCHEMA = pa.schema([
    ("workload", pa.string()), ("horizon", pa.int64()), ("k", pa.int64()),
    ("policy", pa.string()), ("params", pa.string()),
    ("other", pa.string()), ("other_params", pa.string()),  # the baseline, or a declared pair
    ("embedder", pa.string()),
    ("metric", pa.string()), ("direction", pa.string()),
    ("family", pa.string()),      # primary, exploratory, or not a test
    ("source", pa.string()),      # baseline, or declared
    ("n", pa.int64()), ("mean", pa.float64()), ("other_mean", pa.float64()),
    ("delta", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64()),
    ("margin", pa.float64()),     # absolute: a relative margin times |other_mean|
    ("mdd", pa.float64()),
    ("p", pa.float64()),          # sign-flip permutation p, unadjusted
    ("p_holm", pa.float64()),     # primary: Holm-adjusted within the setting
    ("q_bh", pa.float64()),       # exploratory: Benjamini–Hochberg over the sweep
    ("identical", pa.bool_()), ("bounded", pa.bool_()),
    ("copy_of", pa.string()),     # the earlier test of its family with the same deltas
    ("verdict", pa.string()),
])


def parse_label(label: str) -> tuple[str, dict[str, Any]]:
    """``"ebbinghaus tau=30"`` -> ("ebbinghaus", {"policy.tau": 30})."""
    policy, *pairs = label.split()
    params: dict[str, Any] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        params[f"policy.{key.removeprefix('policy.')}"] = value
    return policy, params


def policy_overrides(params: str) -> dict[str, Any]:
    """A cell's policy identity: its ``policy.*`` overrides but the embedder (matched on
    the embedder column instead)."""
    return {k: v for k, v in json.loads(params).items()
            if k.startswith("policy.") and not is_embedder_key(k)}


def canonical(over: dict[str, Any]) -> str:
    """Overrides as a key in which 30 and 30.0 are the same value."""
    return json.dumps({k: float(v) if isinstance(v, int | float) and not isinstance(v, bool)
                       else v for k, v in over.items()}, sort_keys=True)


def absolute_margin(metric: Metric, other_mean: float) -> float:
    return metric.margin * abs(other_mean) if metric.relative else metric.margin


def verdict(row: dict[str, Any], adjusted: float) -> str:
    """The verdict of one comparison row (see the module docstring)."""
    if row["identical"]:
        return "identical"
    lo, hi, direction = row["ci_low"], row["ci_high"], row["direction"]
    if direction == "none" or lo is None or np.isnan(lo):
        return "—"
    margin = row["margin"]
    within = -margin < lo and hi < margin
    if adjusted < stats.ALPHA and (lo > 0 or hi < 0):
        sign = 1.0 if direction == "higher" else -1.0
        found = "better" if sign * row["delta"] > 0 else "worse"
        return f"{found}, within margin" if within else found
    return "equivalent" if within else "inconclusive"


def family(row: dict[str, Any], primary: bool) -> str:
    """``primary`` or ``exploratory`` for a test; ``not a test`` for a comparison with no
    direction, bit-identical sides, or no interval (an undefined metric, one seed)."""
    lo = row["ci_low"]
    if row["direction"] == "none" or row["identical"] or lo is None or np.isnan(lo):
        return "not a test"
    return "primary" if primary else "exploratory"


def baseline_rows(summary: pa.Table, primary: Sequence[str]) -> list[dict[str, Any]]:
    """Each summary row with a baseline comparison, as a comparison row."""
    out = []
    rows = summary.to_pylist()
    means = {(r["workload"], r["horizon"], r["k"], r["policy"], r["params"], r["metric"]):
             r["mean"] for r in rows}
    for r in rows:
        if r["baseline"] is None:
            continue
        m = METRICS[r["metric"]]
        other_mean = means.get((r["workload"], r["horizon"], r["k"], r["baseline"],
                                r["baseline_params"], r["metric"]), float("nan"))
        row = {
            "workload": r["workload"], "horizon": r["horizon"], "k": r["k"],
            "policy": r["policy"], "params": r["params"], "other": r["baseline"],
            "other_params": r["baseline_params"], "embedder": r["embedder"],
            "metric": m.name, "direction": m.direction,
            "source": "baseline", "n": r["n_pairs"], "mean": r["mean"],
            "other_mean": other_mean, "delta": r["delta_mean"], "ci_low": r["delta_ci_low"],
            "ci_high": r["delta_ci_high"], "margin": absolute_margin(m, other_mean),
            "mdd": r["mdd"], "p": r["p_value"], "identical": bool(r["identical"]),
            "bounded": bool(r["bounded"]), "digest": r["delta_digest"],
        }
        row["family"] = family(row, is_default_variant(r["params"]) and m.name in primary)
        out.append(row)
    return out


def declared_rows(seeds: np.ndarray, cells: dict[Cell, np.ndarray], embedders: dict[Cell, str],
                  pairs: Sequence[tuple[str, str]], primary: Sequence[str],
                  values: np.ndarray, metrics: Sequence[Metric]) -> list[dict[str, Any]]:
    """The declared pairs, in every setting and context where both sides ran (``seeds``:
    every final row's seed; ``cells``: each cell's rows)."""
    index: dict[tuple[Any, ...], Cell] = {}
    for cell in cells:
        w, h, k, policy, params = cell
        key = (policy, canonical(policy_overrides(params)))
        index[(w, h, k, context(params), embedders[cell], *key)] = cell
    out = []
    for a_label, b_label in pairs:
        a_policy, a_over = parse_label(a_label)
        b_policy, b_over = parse_label(b_label)
        a_key = (a_policy, canonical(a_over))
        b_key = (b_policy, canonical(b_over))
        for where, a_cell in sorted((k[:5], c) for k, c in index.items() if k[5:] == a_key):
            b_cell = index.get((*where, *b_key))
            if b_cell is None:
                continue
            pidx, qidx = aligned(seeds, cells[a_cell], cells[b_cell])
            ident = json.dumps([*a_cell, "vs", *b_cell])
            tests = stats.paired_columns(values[pidx], values[qidx],
                                         [m.direction for m in metrics], ident,
                                         [m.bounds for m in metrics])
            for j, (m, d) in enumerate(zip(metrics, tests, strict=True)):
                a_vals, b_vals = values[pidx, j], values[qidx, j]
                other_mean = stats.mean(stats.as_array(b_vals))
                row = {
                    "workload": a_cell[0], "horizon": a_cell[1], "k": a_cell[2],
                    "policy": a_cell[3], "params": a_cell[4], "other": b_cell[3],
                    "other_params": b_cell[4], "embedder": embedders[a_cell],
                    "metric": m.name, "direction": m.direction,
                    "source": "declared", "n": d.n,
                    "mean": stats.mean(stats.as_array(a_vals)), "other_mean": other_mean,
                    "delta": d.mean, "ci_low": d.ci_low, "ci_high": d.ci_high,
                    "margin": absolute_margin(m, other_mean), "mdd": d.mdd, "p": d.p,
                    "identical": d.identical, "bounded": d.bounded, "digest": d.digest,
                }
                row["family"] = family(row, m.name in primary)
                out.append(row)
    return out


def adjust(rows: list[dict[str, Any]]) -> pa.Table:
    """Holm within each setting's primary family, BH over the exploratory ones, each test
    counted once (its copies take its result), verdicts."""
    nan = float("nan")
    first: dict[tuple[Any, ...], int] = {}
    source: dict[int, int] = {}  # a copy's row -> its original's
    primary: dict[tuple[str, int, int], list[int]] = {}
    exploratory: list[int] = []
    for i, r in enumerate(rows):
        r["p_holm"] = r["q_bh"] = nan
        r["copy_of"] = None
        if r["family"] not in ("primary", "exploratory"):
            continue
        setting = (r["workload"], r["horizon"], r["k"])
        group = setting if r["family"] == "primary" else ()
        key = (r["family"], *group, r["direction"], r["bounded"], r["digest"])
        if key in first:
            source[i] = first[key]
            r["copy_of"] = _label(rows[first[key]])
            continue
        first[key] = i
        (primary.setdefault(setting, []) if r["family"] == "primary" else exploratory
         ).append(i)
    for members in primary.values():
        for i, v in zip(members, stats.holm([rows[i]["p"] for i in members]), strict=True):
            rows[i]["p_holm"] = float(v)
    for i, v in zip(exploratory, stats.bh([rows[i]["p"] for i in exploratory]), strict=True):
        rows[i]["q_bh"] = float(v)
    for i, j in source.items():
        rows[i]["p_holm"], rows[i]["q_bh"] = rows[j]["p_holm"], rows[j]["q_bh"]
    for r in rows:
        adjusted = r["p_holm"] if r["family"] == "primary" else r["q_bh"]
        r["verdict"] = verdict(r, nan if adjusted is None else adjusted)
        del r["digest"]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _label(row: dict[str, Any]) -> str:
    """A comparison's name within its sweep: its source, setting, policy and params, the
    other side, embedder, metric."""
    return json.dumps([row["source"], row["workload"], row["horizon"], row["k"],
                       row["policy"], row["params"], row["other"], row["other_params"],
                       row["embedder"], row["metric"]])
