"""``RESULTS.md``: a deterministic Markdown report of a sweep, and its plots.

Every number in it is computed from ``summary.parquet`` (recomputed first if
missing or stale) and the shards; metric names, directions and descriptions
come from the metric declarations. Nothing depends on the clock or the
machine: the only versions it names are the ones the shards recorded, and
timing metrics are left out, except in the Scaling section (a workload run at
several horizons), whose per-job seconds slope comes from ``wall_s`` and says
so. Plots are referenced relative to the Markdown file's folder.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from runner import scaling, stats
from runner.aggregate import (
    HEADLINE,
    Cell,
    Setting,
    SummaryIndex,
    compared_metrics,
    format_cell,
    horizon_unit,
    load_shards,
    metric_decimals,
    params_sort_key,
    read_summary,
    variant_label,
)
from runner.atomic import write_text
from runner.metrics import METRICS, Metric
from runner.plots import Plots, sweeps, write_plots

SHARD_COLUMNS = tuple(dict.fromkeys((
    "job_id", "workload", "horizon", "k", "policy", "params", "params_full", "seed", "t",
    "final_size", "final_tokens", "fbench_version", "git_commit", "versions", *scaling.COLUMNS)))


def write_report(out: Path, output: Path | None = None, include: Sequence[Path] = ()) -> Path:
    """Write the plots into ``OUT/plots`` and the report (default ``OUT/RESULTS.md``);
    each folder of ``include`` (another sweep, e.g. the incumbents') follows as a
    section of its own, with its plots in its own ``plots`` folder."""
    out = Path(out)
    output = Path(output) if output is not None else out / "RESULTS.md"
    text = _render_folder(out, output.parent)
    for other in include:
        text += "\n" + included(Path(other), _render_folder(Path(other), output.parent))
    output.parent.mkdir(parents=True, exist_ok=True)
    write_text(output, text)
    return output


def _render_folder(out: Path, folder: Path) -> str:
    summary = read_summary(out)
    shards = load_shards(out, columns=SHARD_COLUMNS)
    plots = write_plots(out / "plots", summary, shards)
    return render(summary, shards, plots, folder)


def included(out: Path, text: str) -> str:
    """Another sweep's report as one section: its title becomes a level-2 heading naming
    the folder, every other heading goes one level down."""
    lines = text.splitlines()
    head = [f"## Included sweep: `{out.name}/`", "",
            f"The report of the sweep in `{out.name}/` (its own grid, method, seeds and "
            "baseline), included by `fbench report --include`."]
    body = [("#" + line) if line.startswith("#") else line for line in lines[1:]]
    return "\n".join(head + body).rstrip("\n") + "\n"


# --- small helpers -----------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> list[str]:
    """A Markdown table; ``align`` holds one of l/r per column."""
    sep = {"l": "---", "r": "---:"}
    lines = ["| " + " | ".join(_md(h) for h in header) + " |",
             "| " + " | ".join(sep[a] for a in align) + " |"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return lines


def seed_ranges(seeds: Iterable[int]) -> str:
    """``0–4, 7, 9–10``: sorted seeds with consecutive runs collapsed."""
    ordered = sorted(set(seeds))
    parts: list[str] = []
    start = prev = None
    for s in [*ordered, None]:
        if s is not None and prev is not None and s == prev + 1:
            prev = s
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}–{prev}")
        start = prev = s
    return ", ".join(parts)


def _setting_title(setting: Setting) -> str:
    w, h, k = setting
    unit = horizon_unit(w)
    return f"{w}, horizon {h}{' ' + unit if unit else ''}, k = {k}"


def _span(values: Iterable[int]) -> str:
    vs = sorted(set(values))
    return str(vs[0]) if len(vs) == 1 else f"{vs[0]} to {vs[-1]}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _directed(m: Metric) -> str:
    return f"{m.name} {m.arrow}".strip()


def _nan(x: float | None) -> bool:
    return x is None or math.isnan(x)


def verdict(r: dict[str, Any]) -> str:
    """Detectably better / worse when the delta's interval excludes 0, in the metric's direction."""
    lo, hi = r["delta_ci_low"], r["delta_ci_high"]
    if r["direction"] == "none" or _nan(lo) or _nan(hi):
        return "—"
    sign = 1 if r["direction"] == "higher" else -1
    if lo > 0 or hi < 0:
        return "better" if sign * (lo if lo > 0 else hi) > 0 else "worse"
    return "no detectable difference"


# --- the report --------------------------------------------------------------------------


class _Index(SummaryIndex):
    """The summary as the report reads it, with each cell's seeds and decimals."""

    def __init__(self, summary: pa.Table, shards: pa.Table) -> None:
        super().__init__(summary)
        self.digits = metric_decimals(summary)
        self.seeds: dict[Cell, set[int]] = {}
        cols = [shards.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params", "seed")]
        for w, h, k, policy, params, seed in zip(*cols, strict=True):
            self.seeds.setdefault((w, h, k, policy, params), set()).add(seed)

    def n_jobs(self, cell: Cell) -> int:
        return int(next(iter(self.rows[cell].values()))["n_jobs"])


def render(summary: pa.Table, shards: pa.Table, plots: Plots, folder: Path) -> str:
    """The Markdown text; plot paths are written relative to ``folder``."""
    idx = _Index(summary, shards)
    studies = scaling.studies(shards, idx.baseline)
    lines = ["# fbench results", "",
             "Generated by `fbench report` from a sweep's shards and `summary.parquet`; "
             "do not edit by hand.", ""]
    lines += _grid(idx, shards) + _method(idx, bool(studies)) + _versions(shards) + _legend()
    for setting in idx.settings():
        lines += _setting(idx, setting, plots, folder)
    lines += _scaling(idx, studies, plots, folder)
    lines += _findings(idx)
    if plots.notes:
        lines += ["## Plots not made", ""] + [f"- {n}" for n in plots.notes] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _grid(idx: _Index, shards: pa.Table) -> list[str]:
    n_jobs = len(set(shards.column("job_id").to_pylist()))
    rows = []
    for s in idx.settings():
        cells = idx.in_setting(s)
        seeds = set().union(*(idx.seeds.get(c, set()) for c in cells))
        unit = horizon_unit(s[0])
        rows.append([s[0], f"{s[1]}{' ' + unit if unit else ''}", str(s[2]),
                     ", ".join(variant_label(c[3], c[4]) for c in cells),
                     f"{seed_ranges(seeds)} ({len(seeds)})",
                     str(sum(idx.n_jobs(c) for c in cells))])
    return ["## Grid", "",
            f"{_count(n_jobs, 'job')} in {_count(len(idx.cells), 'cell')} (workload × horizon × "
            f"k × policy × parameters), {_count(len(idx.settings()), 'setting')} "
            "(workload × horizon × k).", "",
            *_table(["workload", "horizon", "k", "policies", "seeds (count)", "jobs"], rows,
                    "lrrllr"), ""]


def _method(idx: _Index, scaled: bool = False) -> list[str]:
    ns = [idx.n_jobs(c) for c in idx.cells]
    n_min = min(ns)
    factor = stats.MDD_FACTOR / math.sqrt(n_min) if n_min >= 2 else math.nan
    at_n = (f"at n = {n_min} that is {factor:.3f} sd(Δ)" if n_min >= 2
            else "undefined below two seeds")
    timing = ", ".join(m.name for m in METRICS.values() if m.timing) or "none"
    return [
        "## Method", "",
        "- **Unit of replication: the seed.** A cell is one (workload, horizon, k, policy, "
        "parameters); its statistics are over its seeds, from each job's final checkpoint.",
        f"- **n = {_span(ns)} seeds per cell.** A metric that is nan for a seed (e.g. a query "
        "category with no queries) leaves that seed out of that metric's n; such cells show "
        "`(n=…)`.",
        f"- **CI: {stats.CI_METHOD}.** A cell reads `mean ± h`, h being half the interval's "
        "width; the interval itself (it may be asymmetric) is `ci_low`, `ci_high` in "
        "`summary.parquet`, which also holds std (ddof = 1) and the IQM (mean of the middle "
        "50%: floor(n/4) values trimmed at each end). `—`: no interval below two seeds.",
        f"- **Paired comparisons** with `{idx.baseline}` at its default parameters (and the "
        "same workload and store parameters), paired by seed: Δ = policy − baseline per seed, "
        "its mean and the same bootstrap interval. *better / tie / worse* count seeds in the "
        "metric's direction; *share better* = (better + ties/2) / pairs. *Verdict*: better or "
        "worse when the interval of Δ excludes 0.",
        f"- **Minimal detectable difference**: MDD = (z₀.₉₇₅ + z₀.₈) · sd(Δ) / √n = "
        f"{stats.MDD_FACTOR:.3f} · sd(Δ) / √n (two-sided α = {stats.ALPHA}, power "
        f"{stats.POWER}, normal approximation); {at_n}. A smaller true difference is missed "
        "more often than one time in five.",
        f"- **Timing metrics** ({timing}) are not deterministic and are left out of this "
        "report and of the comparisons"
        + (", except the per-job seconds (`wall_s`) of the Scaling section." if scaled else "."),
        "",
    ]


def _versions(shards: pa.Table) -> list[str]:
    cols = [shards.column(c).to_pylist() for c in ("job_id", "fbench_version", "git_commit",
                                                   "versions")]
    jobs: dict[tuple[str, str, str], set[str]] = {}
    for job, fb, commit, libs in zip(*cols, strict=True):
        jobs.setdefault((fb or "", commit or "", libs or "{}"), set()).add(job)
    libs = sorted({k for _, _, v in jobs for k in json.loads(v)} - {"fbench"})
    rows = []
    for (fb, commit, v), ids in sorted(jobs.items()):
        lv = json.loads(v)
        rows.append([fb or "—", commit[:12] or "—", *(str(lv.get(lib, "—")) for lib in libs),
                     str(len(ids))])
    return ["## Versions", "", "As recorded in the shards (one row per distinct provenance).", "",
            *_table(["fbench", "git commit", *libs, "jobs"], rows, "ll" + "l" * len(libs) + "r"),
            ""]


def _legend() -> list[str]:
    want = {"lower": "↓ lower", "higher": "↑ higher", "none": "(descriptive)"}
    rows = [[m.name, want[m.direction], m.description] for m in compared_metrics()]
    return ["## Metrics", "", *_table(["metric", "better", "description"], rows, "lll"), ""]


def _setting(idx: _Index, setting: Setting, plots: Plots, folder: Path) -> list[str]:
    cells = idx.in_setting(setting)
    seeds = set().union(*(idx.seeds.get(c, set()) for c in cells))
    lines = [f"## {_setting_title(setting)}", "",
             f"Seeds {seed_ranges(seeds)}; n = {_span(idx.n_jobs(c) for c in cells)} per cell.",
             ""]
    headline = [METRICS[n] for n in HEADLINE if n in METRICS]
    rows = []
    for c in cells:
        r = idx.rows[c]
        rows.append([variant_label(c[3], c[4]), str(idx.n_jobs(c))]
                    + [_cell(r.get(m.name), idx.digits) for m in headline])
    lines += ["### Main metrics", "", "mean ± half-width of the 95% CI.", ""]
    lines += [*_table(["policy", "n", *(_directed(m) for m in headline)], rows,
                      "lr" + "r" * len(headline)), ""]
    lines += _comparisons(idx, cells, [m for m in headline if m.direction != "none"])
    lines += _equal_memory(idx, setting)
    lines += ["### All metrics", ""]
    rows = [[_directed(m)] + [_cell(idx.rows[c].get(m.name), idx.digits) for c in cells]
            for m in compared_metrics()]
    lines += [*_table(["metric", *(variant_label(c[3], c[4]) for c in cells)], rows,
                      "l" + "r" * len(cells)), ""]
    shown = [p for p in plots.plots if (p.workload, p.horizon, p.k) == setting]
    if shown:
        lines += ["### Plots", "", *_images(shown, folder)]
    return lines


def _images(shown: Iterable[Any], folder: Path) -> list[str]:
    lines = []
    for p in shown:
        rel = Path(os.path.relpath(p.path.resolve(), folder.resolve())).as_posix()
        lines += [f"![{p.title}]({rel})", ""]
    return lines


BUDGET_METRICS = ("recall_at_k", "false_forget_rate")


def _mean(idx: _Index, cell: Cell, metric: str) -> float | None:
    r = idx.rows[cell].get(metric)
    return None if r is None or _nan(r["mean"]) else float(r["mean"])


def _equal_memory(idx: _Index, setting: Setting) -> list[str]:
    """Each capacity policy run at several capacities, read at every other policy's final
    size: its metrics interpolated linearly between the two capacities that bracket it."""
    variants = [(c[3], c[4]) for c in idx.in_setting(setting)]
    curves = {line: vs for line, vs in sweeps(variants).items() if "capacity" in line[2]}
    if not curves:
        return []
    in_curve = {v for vs in curves.values() for v in vs}
    metrics = [METRICS[m] for m in BUDGET_METRICS]
    rows = []
    for v in variants:
        size = _mean(idx, (*setting, *v), "final_size")
        if v in in_curve or size is None:
            continue
        for (policy, rest, _key), vs in sorted(curves.items()):
            pts = sorted(
                (s, [_mean(idx, (*setting, *u), m.name) for m in metrics])
                for u in vs if (s := _mean(idx, (*setting, *u), "final_size")) is not None)
            xs = [p[0] for p in pts]
            if len(xs) < 2 or not xs[0] <= size <= xs[-1]:
                continue
            cells = []
            for j, m in enumerate(metrics):
                ys = [p[1][j] for p in pts]
                own = _mean(idx, (*setting, *v), m.name)
                known = [y for y in ys if y is not None]
                there = float(np.interp(size, xs, known)) if len(known) == len(ys) else None
                d = idx.digits.get(m.name, 3)
                cells.append(f"{own:.{d}f} vs {there:.{d}f}" if own is not None
                             and there is not None else "—")
            rows.append([variant_label(*v), f"{size:.1f}", variant_label(policy, rest), *cells])
    if not rows:
        return []
    return ["### At equal memory", "",
            "Each capacity policy, run at several capacities, read at another policy's mean "
            "final size (linear interpolation between the two capacities around it; sizes "
            "outside the grid are left out). Cells: the policy's own mean vs the capacity "
            "policy's at the same size.", "",
            *_table(["policy", "final size", "capacity policy",
                     *(_directed(m) for m in metrics)], rows, "lrl" + "r" * len(metrics)), ""]


def _cell(r: dict[str, Any] | None, digits: dict[str, int]) -> str:
    if r is None:
        return ""
    return format_cell(r["mean"], r["ci_low"], r["ci_high"], r["n"], r["n_jobs"],
                       digits.get(r["metric"]))


def _comparisons(idx: _Index, cells: list[Cell], metrics: list[Metric]) -> list[str]:
    rows = []
    tally = {"better": 0, "worse": 0, "no detectable difference": 0, "—": 0}
    for c in cells:
        for m in metrics:
            r = idx.rows[c].get(m.name)
            if r is None or r["baseline"] is None:
                continue
            d = idx.digits.get(m.name, 3)
            v = verdict(r)
            tally[v] += 1
            ci = ("—" if _nan(r["delta_ci_low"]) else
                  f"[{r['delta_ci_low']:+.{d}f}, {r['delta_ci_high']:+.{d}f}]")
            rows.append([
                variant_label(c[3], c[4]), _directed(m),
                "—" if _nan(r["delta_mean"]) else f"{r['delta_mean']:+.{d}f}", ci,
                f"{r['n_better']} / {r['n_ties']} / {r['n_worse']}",
                "—" if _nan(r["share_better"]) else f"{r['share_better']:.2f}",
                "—" if _nan(r["mdd"]) else f"{r['mdd']:.{d}f}", v,
            ])
    title = f"### Paired comparisons with {idx.baseline}"
    if not rows:
        return [title, "", f"No cell here has a `{idx.baseline}` cell to pair with.", ""]
    total = len(rows)
    return [title, "",
            f"{total} comparisons on the main metrics: {tally['better']} detectably better, "
            f"{tally['worse']} detectably worse, {tally['no detectable difference']} with no "
            f"detectable difference, {tally['—']} without an interval.", "",
            *_table(["policy", "metric", "Δ mean", "95% CI of Δ", "better / tie / worse",
                     "share better", "MDD", "verdict"], rows, "llrrrrrl"), ""]


# --- findings ----------------------------------------------------------------------------

FRONTIER_AXES = ("contradiction_rate", "recall_at_k")  # lower, higher


def pareto(points: dict[Any, tuple[float, float]]) -> list[Any]:
    """Keys whose (lower-is-better, higher-is-better) point no other point dominates (as
    good on both, better on one); in the order given."""
    def dominated(a: tuple[float, float]) -> bool:
        return any(b[0] <= a[0] and b[1] >= a[1] and b != a for b in points.values())

    return [key for key, p in points.items() if not dominated(p)]


def _findings(idx: _Index) -> list[str]:
    """Per setting: the cells on the contradiction–recall frontier (by their means); with a
    baseline run at several budgets (the oracle), the least recall regret at each."""
    lines: list[str] = []
    for setting in idx.settings():
        cells = idx.in_setting(setting)
        points = {}
        for c in cells:
            x, y = (_mean(idx, c, m) for m in FRONTIER_AXES)
            if x is not None and y is not None:
                points[c] = (x, y)
        if not points:
            continue
        on = pareto(points)
        d = idx.digits.get("recall_at_k", 3)
        lines += [f"- **{_setting_title(setting)}**: on the frontier of contradiction rate "
                  f"(lower) and recall (higher), {len(on)} of {len(points)} cells: "
                  + "; ".join(f"{variant_label(c[3], c[4])} ({points[c][0]:.{d}f}, "
                              f"{points[c][1]:.{d}f})" for c in on) + "."]
        lines += _least_regret(idx, cells, d)
    if not lines:
        return []
    return ["## Findings", "",
            "Computed from the cell means: a cell is on the frontier when no other cell of "
            "its setting has a contradiction rate as low and a recall as high, one of them "
            "strictly better (pairs: contradiction rate, recall).", "", *lines, ""]


REGRET_METRICS = {"recall_at_k": "recall", "recall_current_at_k": "current recall"}


def _least_regret(idx: _Index, cells: list[Cell], d: int) -> list[str]:
    """With the baseline at a budget, each budget's cell of least regret on each recall
    (its paired Δ against the baseline at the same budget), when the baseline is the
    oracle."""
    if idx.baseline != "oracle":
        return []
    out = []
    for metric, label in REGRET_METRICS.items():
        by_budget: dict[str, list[Cell]] = {}
        for c in cells:
            r = idx.rows[c].get(metric)
            if c[3] != idx.baseline and r is not None and not _nan(r["delta_mean"]):
                by_budget.setdefault(r["baseline_params"], []).append(c)
        for bparams, cs in sorted(by_budget.items(), key=lambda kv: params_sort_key(kv[0])):
            best = max(cs, key=lambda c: idx.rows[c][metric]["delta_mean"])
            r = idx.rows[best][metric]
            where = variant_label("", bparams).strip() or "no budget"
            out.append(f"  - at {where}: least {label} regret "
                       f"{variant_label(best[3], best[4])}, Δ {r['delta_mean']:+.{d}f} "
                       f"[{r['delta_ci_low']:+.{d}f}, {r['delta_ci_high']:+.{d}f}] against "
                       f"the oracle")
    return out


# --- scaling -----------------------------------------------------------------------------


def _slope(fit: scaling.Fit) -> str:
    """``0.98 [0.95, 1.01]``; ``—`` undefined, ``[—]`` no interval; jobs left out counted."""
    def num(x: float) -> str:
        text = f"{x:.2f}"
        return "0.00" if text == "-0.00" else text

    if not fit.defined:
        text = "—"
    else:
        ci = "—" if _nan(fit.ci_low) else f"{num(fit.ci_low)}, {num(fit.ci_high)}"
        text = f"{num(fit.slope)} [{ci}]"
    if fit.n_used < fit.n_jobs:
        text += f" ({fit.n_used} of {fit.n_jobs} jobs)"
    return text


def _scaling(idx: _Index, studies: list[scaling.Study], plots: Plots, folder: Path) -> list[str]:
    """Per workload and k run at several horizons: each policy's log–log slopes of final
    size, tokens and per-job seconds against the horizon, and the scaling plot."""
    if not studies:
        return []
    lines = [
        "## Scaling", "",
        "How memory and time grow with the horizon. Each slope b is that of the least-squares "
        "line log y = a + b · log(horizon) through every job's final checkpoint (one point "
        f"per job), with its {stats.LEVEL:.0%} percentile bootstrap interval over seeds in "
        f"brackets ({stats.RESAMPLES:,} resamples of the seeds, each drawn seed bringing its "
        "jobs at every horizon, the line refitted; generator seeded by SHA-256 of the policy "
        "and metric). **b = 1: y grows linearly with the horizon** (10× the horizon, 10× the "
        "entries); **b = 0: y is bounded**, the same at every horizon; in between, sub-linear "
        "growth. What to expect: a policy that bounds its memory has a size slope near 0 and, "
        "doing the same work every turn, a seconds slope near 1; `keep_all`, which never "
        "forgets, a size slope near 1, and a seconds slope above 1 as far as a turn's work "
        "grows with the memory (a query scores every live entry).",
        "",
        "Seconds are each job's wall-clock time (`wall_s` at its final checkpoint): unlike every "
        "other number in this report they are not deterministic, and depend on the machine and "
        "its load. A value ≤ 0 has no logarithm: such jobs are left out of that fit and counted "
        "`(used of all jobs)`. `—`: fewer than two horizons left (no slope); `[—]`: one seed "
        "(no interval). Only policies run at two or more horizons are fitted.", "",
    ]
    for st in studies:
        unit = horizon_unit(st.workload)
        seeds = {s for series in st.series for s in series.seeds}
        lines += [f"### Scaling: {st.workload}, k = {st.k}", "",
                  f"Horizons {', '.join(map(str, st.horizons))}{' ' + unit if unit else ''}"
                  + (f"; seeds {seed_ranges(seeds)} ({len(seeds)})." if seeds else "."), ""]
        if st.series:
            d = idx.digits.get("final_size", 1)
            rows = []
            for series in st.series:
                sizes = series.points["final_size"]
                rows.append([variant_label(series.policy, series.params), str(series.n_jobs),
                             str(len(series.horizons)),
                             f"{sizes[0].mean:.{d}f} → {sizes[-1].mean:.{d}f}",
                             *(_slope(series.fits[m]) for m in scaling.SCALED)])
            ends = {(s.horizons[0], s.horizons[-1]) for s in st.series}
            size_head = (f"final size at {' → '.join(map(str, ends.pop()))}" if len(ends) == 1
                         else "final size, first → last horizon")
            lines += [*_table(["policy", "jobs", "horizons", size_head,
                               *(f"slope of {name}" for name in scaling.SCALED.values())],
                              rows, "lrrrrrr"), ""]
        else:
            lines += ["No policy ran at two or more horizons here: nothing to fit.", ""]
        if st.single:
            lines += ["Not fitted (ran at one horizon): "
                      + ", ".join(variant_label(*v) for v in st.single) + ".", ""]
        shown = [p for p in plots.plots if p.kind == "scaling"
                 and (p.workload, p.horizon, p.k) == (st.workload, None, st.k)]
        lines += _images(shown, folder)
    return lines
