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
- Not tests: comparisons **identical** by construction (bit-identical on every seed) and
  **bounded** ones (the baseline sits at the metric's best bound on every seed, so the
  policy cannot come out better: keep_all's false-forget rate is 0 by construction).

A verdict is ``equivalent`` (the 95% interval of Δ inside ± the metric's margin),
``better`` / ``worse`` (adjusted p < 0.05 and the interval excludes 0, in the metric's
direction), ``inconclusive`` (neither), ``identical``, ``bounded: worse`` /
``bounded: no worse`` or ``—`` (no interval: one seed, or a descriptive metric).
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
    bounded,
    context,
    is_default_variant,
    is_embedder_key,
)

COMPARISONS = "comparisons.parquet"
PRIMARY_METRICS = ("contradiction_rate", "recall_current_at_k", "false_forget_rate",
                   "final_size")
VERDICTS = ("better", "worse", "equivalent", "inconclusive", "identical", "bounded: worse",
            "bounded: no worse", "—")

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
    sign = 1.0 if direction == "higher" else -1.0
    excludes_zero = lo > 0 or hi < 0
    if row["bounded"]:
        return "bounded: worse" if excludes_zero and sign * row["delta"] < 0 else \
            "bounded: no worse"
    margin = row["margin"]
    if -margin < lo and hi < margin:
        return "equivalent"
    if adjusted < stats.ALPHA and excludes_zero:
        return "better" if sign * row["delta"] > 0 else "worse"
    return "inconclusive"


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
        test = m.direction != "none" and not r["identical"] and not r["bounded"]
        family = ("primary" if is_default_variant(r["params"]) and m.name in primary
                  else "exploratory") if test else "not a test"
        out.append({
            "workload": r["workload"], "horizon": r["horizon"], "k": r["k"],
            "policy": r["policy"], "params": r["params"], "other": r["baseline"],
            "other_params": r["baseline_params"], "embedder": r["embedder"],
            "metric": m.name, "direction": m.direction, "family": family,
            "source": "baseline", "n": r["n_pairs"], "mean": r["mean"],
            "other_mean": other_mean, "delta": r["delta_mean"], "ci_low": r["delta_ci_low"],
            "ci_high": r["delta_ci_high"], "margin": absolute_margin(m, other_mean),
            "mdd": r["mdd"], "p": r["p_value"], "identical": bool(r["identical"]),
            "bounded": bool(r["bounded"]),
        })
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
            for j, m in enumerate(metrics):
                a_vals, b_vals = values[pidx, j], values[qidx, j]
                d = stats.paired(a_vals, b_vals, m.direction, f"{ident}\x1f{j}")
                limit = bounded(m, stats.as_array(b_vals))
                test = m.direction != "none" and not d.identical and not limit
                other_mean = stats.mean(stats.as_array(b_vals))
                out.append({
                    "workload": a_cell[0], "horizon": a_cell[1], "k": a_cell[2],
                    "policy": a_cell[3], "params": a_cell[4], "other": b_cell[3],
                    "other_params": b_cell[4], "embedder": embedders[a_cell],
                    "metric": m.name, "direction": m.direction,
                    "family": ("primary" if m.name in primary else "exploratory")
                    if test else "not a test", "source": "declared", "n": d.n,
                    "mean": stats.mean(stats.as_array(a_vals)), "other_mean": other_mean,
                    "delta": d.mean, "ci_low": d.ci_low, "ci_high": d.ci_high,
                    "margin": absolute_margin(m, other_mean), "mdd": d.mdd, "p": d.p,
                    "identical": d.identical, "bounded": limit,
                })
    return out


def adjust(rows: list[dict[str, Any]]) -> pa.Table:
    """Holm within each setting's primary family, BH over the exploratory ones, verdicts."""
    nan = float("nan")
    for r in rows:
        r["p_holm"] = r["q_bh"] = nan
    primary: dict[tuple[str, int, int], list[int]] = {}
    exploratory = []
    for i, r in enumerate(rows):
        if r["family"] == "primary":
            primary.setdefault((r["workload"], r["horizon"], r["k"]), []).append(i)
        elif r["family"] == "exploratory":
            exploratory.append(i)
    for members in primary.values():
        for i, v in zip(members, stats.holm([rows[i]["p"] for i in members]), strict=True):
            rows[i]["p_holm"] = float(v)
    for i, v in zip(exploratory, stats.bh([rows[i]["p"] for i in exploratory]), strict=True):
        rows[i]["q_bh"] = float(v)
    for r in rows:
        adjusted = r["p_holm"] if r["family"] == "primary" else r["q_bh"]
        r["verdict"] = verdict(r, nan if adjusted is None else adjusted)
    return pa.Table.from_pylist(rows, schema=SCHEMA)
