"""Coverage of fbench's intervals on a sweep's own cells, at the seed counts people run.

Each default cell (every policy at its defaults) of a sweep with at least ``--population``
seeds is taken as the population: its seeds' values of each primary metric
(``runner.results.comparisons.PRIMARY_METRICS``), and their paired deltas against the
baseline cell of the same setting. ``--resamples`` samples of n seeds are drawn from it
with replacement (independent draws from the cell's own distribution, whose mean is the
population mean), at n = 5, 10 and 20, and every candidate interval is computed on each:

- ``t``: the Student-t interval (``stats.t_ci``);
- ``betting c=…``: the hedged betting interval (``stats.betting_ci``) at each cap c,
  for metrics with finite bounds (a rate; a rate's delta within [-1, 1]).

A case is (kind, workload, horizon, k, policy, metric, n): its coverage is the share of
samples whose interval holds the population mean, its width the mean width. Cases whose
population is undefined (a metric the workload does not have) are left out. Figures go to
``benchmarks/results.json`` under ``coverage``: per method, kind and n, the cases, the
lowest coverage, how many fall below 93.5%, and the mean width; and the ten worst cases
of each method. A control runs the same design on populations the t interval is exact
for: as many 50-value samples of a Normal as there are size cases, resampled the same
way; its figures, under ``control``, are what the study's own noise gives an exact
interval. Usage::

    fbench sweep --seeds 50 --out /tmp/def50 --no-report
    python benchmarks/bench_coverage.py --out /tmp/def50
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.analysis import stats  # noqa: E402
from runner.metrics import METRICS  # noqa: E402
from runner.results.aggregate import UNUSED, PerSeed  # noqa: E402
from runner.results.comparisons import PRIMARY_METRICS  # noqa: E402
from runner.results.load import load_shards  # noqa: E402
from runner.results.pairing import Baselines, aligned  # noqa: E402
from runner.results.where import location  # noqa: E402

RESULTS = Path(__file__).parent / "results.json"
NS = (5, 10, 20)
CAPS = (0.5, 0.75, 0.9, 0.95, 0.99)
FLOOR = 0.935  # the acceptance: every case at least this


def populations(out: str, least: int) -> list[dict[str, Any]]:
    """Every default cell's primary metrics, and their deltas against the baseline, with
    at least ``least`` seeds and a value on every seed."""
    seeds = PerSeed.of(load_shards(location(out), final_only=True, skip=UNUSED))
    bases = Baselines("keep_all", seeds.embedders)
    column = {m.name: j for j, m in enumerate(seeds.metrics)}
    found = []
    for cell, idx in seeds.cells.items():
        if cell[4] != "{}":
            continue
        base, _ = bases.of(cell)
        for name in PRIMARY_METRICS:
            j = column[name]
            metric = METRICS[name]
            ident = {"workload": cell[0], "horizon": cell[1], "k": cell[2],
                     "policy": cell[3], "metric": name}
            x = seeds.values[idx, j]
            if len(x) >= least and not np.isnan(x).any():
                found.append({"kind": "cell", **ident, "values": x,
                              "bounds": metric.bounds})
            if base is None:
                continue
            pidx, qidx = aligned(seeds.seeds, idx, seeds.cells[base])
            d = seeds.values[pidx, j] - seeds.values[qidx, j]
            if len(d) >= least and not np.isnan(d).any():
                found.append({"kind": "delta", **ident, "values": d,
                              "bounds": stats.delta_bounds(metric.bounds)})
    return found


def normal_control(count: int, size: int, resamples: int) -> dict[str, Any]:
    """The t interval's figures at each n on ``count`` populations of ``size`` values drawn
    from a standard Normal, each resampled as a sweep's cell is: the coverage an exact
    interval shows in this study, whose populations are finite samples themselves."""
    rng = np.random.default_rng(stats.key_seed("coverage", "normal control"))
    rows = [row for i in range(count) for row in case_rows(
        {"kind": "cell", "workload": "normal", "horizon": 0, "k": 0, "policy": f"#{i}",
         "metric": "normal", "values": rng.normal(size=size), "bounds": None}, resamples)
        if row["method"] == "t"]
    return {f"n={n}": _figures([r for r in rows if r["n"] == n]) for n in NS}


def t_intervals(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The t interval of each row's mean (constant rows: zero width)."""
    n = x.shape[1]
    m = x.mean(axis=1)
    half = sps.t.ppf(0.975, n - 1) * x.std(axis=1, ddof=1) / np.sqrt(n)
    return m - half, m + half


def methods(bounds: tuple[float, float] | None) -> dict[str, Any]:
    """The candidate intervals for a population with these bounds."""
    found: dict[str, Any] = {"t": t_intervals}
    if stats.finite(bounds):
        assert bounds is not None
        for cap in CAPS:
            found[f"betting c={cap}"] = (
                lambda x, cap=cap: stats.betting_ci(x, bounds, cap=cap))
    return found


def case_rows(pop: dict[str, Any], resamples: int) -> list[dict[str, Any]]:
    """Coverage and mean width of every candidate on one population, at each n."""
    x = pop["values"]
    truth = float(np.mean(x))
    shape = {"skew": float(sps.skew(x)) if np.ptp(x) > 0 else 0.0,
             "share_at_mode": float(np.max(np.unique(x, return_counts=True)[1]) / len(x))}
    rows = []
    for n in NS:
        key = stats.key_seed("coverage", pop["kind"], pop["workload"], pop["horizon"],
                             pop["k"], pop["policy"], pop["metric"], n)
        sample = x[np.random.default_rng(key).integers(0, len(x), size=(resamples, n))]
        for name, interval in methods(pop["bounds"]).items():
            lo, hi = interval(sample)
            rows.append({
                "kind": pop["kind"], "workload": pop["workload"], "horizon": pop["horizon"],
                "k": pop["k"], "policy": pop["policy"], "metric": pop["metric"], "n": n,
                "bounded": stats.finite(pop["bounds"]),
                "method": name, "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
                "width": float(np.mean(hi - lo)), **shape,
            })
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per method, bounded (rates) or not, kind and n: cases, lowest coverage, cases below
    the floor, mean width; and each method's ten worst cases."""
    table: dict[str, Any] = {}
    for method in sorted({r["method"] for r in rows}):
        mine = [r for r in rows if r["method"] == method]
        table[method] = {
            f"{'rate' if bounded else 'size'} {kind} n={n}": _figures(
                [r for r in mine if (r["bounded"], r["kind"], r["n"]) == (bounded, kind, n)])
            for bounded in (True, False) for kind in ("cell", "delta") for n in NS
            if any(r["bounded"] == bounded for r in mine)}
        table[method]["all"] = _figures(mine)
        table[method]["worst"] = sorted(mine, key=lambda r: r["coverage"])[:10]
    return table


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    cov = np.array([r["coverage"] for r in rows])
    return {"cases": len(rows), "min_coverage": float(cov.min()) if len(rows) else None,
            "mean_coverage": float(cov.mean()) if len(rows) else None,
            "below_floor": int(np.sum(cov < FLOOR)),
            "mean_width": float(np.mean([r["width"] for r in rows])) if rows else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="a sweep's output folder")
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    start = time.perf_counter()
    pops = populations(args.out, args.population)
    rows = [row for pop in pops for row in case_rows(pop, args.resamples)]
    entry = {
        "command": f"python benchmarks/bench_coverage.py --out {args.out}",
        "sweep": "fbench sweep --seeds 50 (the default grid)",
        "population_seeds": args.population, "resamples": args.resamples,
        "floor": FLOOR, "populations": len(pops),
        "methods": summarize(rows),
        "control": normal_control(
            sum(not stats.finite(pop["bounds"]) for pop in pops), args.population,
            args.resamples),
    }
    entry["seconds"] = round(time.perf_counter() - start, 1)
    results = json.loads(args.output.read_text()) if args.output.exists() else {}
    results["coverage"] = entry
    tmp = args.output.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    tmp.replace(args.output)
    for method, figures in entry["methods"].items():
        print(method, json.dumps(figures["all"]))


if __name__ == "__main__":
    main()
