"""Per-job seconds and peak RSS at 1x, 10x and 100x a workload's default horizon.

Each (workload, policy, horizon) runs in a fresh process (``benchmarks.job_probe``).
Targets (docs/reference.md, "Costs and performance targets"): for every bounded
policy, seconds grow with log–log slope <= 1.1 from 1x to 100x, and peak RSS at 100x
is within 1.5x of 1x. Bounded is measured, not declared: the final size stopped
growing, the last horizon's within 1.25x of the one before (keep_all,
last_write_wins, which keeps every unslotted entry, and lethe without day ticks grow
with the stream; a capacity or decay policy levels off, ebbinghaus on lifecycle only
after its first year).
Usage: ``python -m benchmarks.bench_horizons [--workloads contradiction,lifecycle]
[--multiples 1,10,100] [--policies ...]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

SLOPE_MAX = 1.1
RSS_RATIO_MAX = 1.5
COMMAND = "python -m benchmarks.job_probe {workload} {policy} {horizon}"


SIZE_GROWTH_BOUNDED = 1.25  # last horizon's final size / the one before's


def slope(xs: list[float], ys: list[float]) -> float:
    """The log–log least-squares slope (``runner.analysis.scaling.fit_loglog``)."""
    from runner.analysis.scaling import fit_loglog

    return fit_loglog(xs, ys)[1]


def run_probe(workload: str, policy: str, horizon: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.job_probe", workload, policy,
                          str(horizon)], check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def measure(workloads: list[str], policies: list[str], multiples: list[int],
            log: Any = print) -> dict[str, Any]:
    from workloads import WORKLOADS

    rows: list[dict[str, Any]] = []
    fits: list[dict[str, Any]] = []
    for w in workloads:
        default = WORKLOADS[w].default_horizon
        for p in policies:
            points: list[dict[str, Any]] = []
            for m in multiples:
                h = default * m
                r = run_probe(w, p, h)
                row = {"workload": w, "policy": p, "multiple": m, "horizon": h, **r,
                       "command": COMMAND.format(workload=w, policy=p, horizon=h)}
                rows.append(row)
                points.append(row)
                log(f"  {w:<14}{p:<17}{m:>4}x {r['seconds']:9.2f} s {r['rss_peak_mb']:8.0f} MB"
                    f"  size {r['final_size']:>8.0f}  query {r['query_ms_mean']:.3f} ms")
            fit = fit_points(points)
            fits.append(fit)
            log(f"  -> {w} {p}: seconds slope {fit.get('seconds_slope', float('nan')):.3f}, "
                f"RSS {multiples[-1]}x/{multiples[0]}x {fit.get('rss_ratio', float('nan')):.2f}"
                f", size slope {fit.get('size_slope', float('nan')):.2f}"
                f"{'' if fit['bounded'] else ' (unbounded: no target)'}")
    return {"jobs": rows, "fits": fits, "slope_max": SLOPE_MAX, "rss_ratio_max": RSS_RATIO_MAX}


def fit_points(points: list[dict[str, Any]]) -> dict[str, Any]:
    """One policy's jobs on one workload (increasing horizons) -> slopes and verdict."""
    fit: dict[str, Any] = {"workload": points[0]["workload"], "policy": points[0]["policy"],
                           "bounded": None}
    if len(points) >= 2:
        hs = [q["horizon"] for q in points]
        sizes = [q["final_size"] for q in points]
        fit["size_slope"] = slope(hs, sizes)
        fit["bounded"] = sizes[-1] <= SIZE_GROWTH_BOUNDED * max(sizes[-2], 1.0)
        fit["seconds_slope"] = slope(hs, [q["seconds"] for q in points])
        fit["rss_ratio"] = points[-1]["rss_peak_mb"] / points[0]["rss_peak_mb"]
        fit["ok"] = (not fit["bounded"]) or (
            fit["seconds_slope"] <= SLOPE_MAX and fit["rss_ratio"] <= RSS_RATIO_MAX)
    return fit


def reference_policies() -> list[str]:
    from memcore import POLICIES

    return sorted(p for p, c in POLICIES.items() if not c.wrapper)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workloads", default="contradiction,lifecycle")
    ap.add_argument("--policies", default="")
    ap.add_argument("--multiples", default="1,10,100")
    args = ap.parse_args()
    res = measure(args.workloads.split(","),
                  args.policies.split(",") if args.policies else reference_policies(),
                  [int(m) for m in args.multiples.split(",")])
    bad = [f for f in res["fits"] if f.get("ok") is False]
    print(f"bounded policies over target: {len(bad)}")


if __name__ == "__main__":
    main()
