"""``RESULTS.md``: a deterministic Markdown report of a sweep, and its plots.

Every number in it is computed from ``summary.parquet`` (recomputed first if
missing or stale) and the shards; metric names, directions and descriptions
come from the metric declarations. Nothing depends on the clock or the
machine: the only versions it names are the ones the shards recorded, and
timing metrics are left out. Plots are referenced relative to the Markdown
file's folder.
"""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from runner import stats
from runner.aggregate import (
    HEADLINE,
    Cell,
    cell_sort_key,
    compared_metrics,
    format_cell,
    horizon_unit,
    load_shards,
    metric_decimals,
    read_summary,
    summary_baseline,
    variant_label,
)
from runner.metrics import METRICS, Metric
from runner.plots import Plots, write_plots

SHARD_COLUMNS = ("job_id", "workload", "horizon", "k", "policy", "params", "params_full", "seed",
                 "t", "final_size", "final_tokens", "fbench_version", "git_commit", "versions")
Setting = tuple[str, int, int]


def write_report(out: Path, output: Path | None = None) -> Path:
    """Write the plots into ``OUT/plots`` and the report (default ``OUT/RESULTS.md``)."""
    out = Path(out)
    output = Path(output) if output is not None else out / "RESULTS.md"
    summary = read_summary(out)
    shards = load_shards(out, columns=SHARD_COLUMNS)
    plots = write_plots(out / "plots", summary, shards)
    text = render(summary, shards, plots, output.parent)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)
    return output


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


class _Index:
    def __init__(self, summary: pa.Table, shards: pa.Table) -> None:
        self.baseline = summary_baseline(summary)
        self.rows: dict[Cell, dict[str, dict[str, Any]]] = {}
        for r in summary.to_pylist():
            cell: Cell = (r["workload"], r["horizon"], r["k"], r["policy"], r["params"])
            self.rows.setdefault(cell, {})[r["metric"]] = r
        self.cells = sorted(self.rows, key=lambda c: cell_sort_key(c, self.baseline))
        self.digits = metric_decimals(summary)
        self.seeds: dict[Cell, set[int]] = {}
        cols = [shards.column(c).to_pylist() for c in ("workload", "horizon", "k", "policy",
                                                       "params", "seed")]
        for w, h, k, policy, params, seed in zip(*cols, strict=True):
            self.seeds.setdefault((w, h, k, policy, params), set()).add(seed)

    def settings(self) -> list[Setting]:
        return sorted({c[:3] for c in self.cells})

    def in_setting(self, setting: Setting) -> list[Cell]:
        return [c for c in self.cells if c[:3] == setting]

    def n_jobs(self, cell: Cell) -> int:
        return int(next(iter(self.rows[cell].values()))["n_jobs"])


def render(summary: pa.Table, shards: pa.Table, plots: Plots, folder: Path) -> str:
    """The Markdown text; plot paths are written relative to ``folder``."""
    idx = _Index(summary, shards)
    lines = ["# fbench results", "",
             "Generated by `fbench report` from a sweep's shards and `summary.parquet`; "
             "do not edit by hand.", ""]
    lines += _grid(idx, shards) + _method(idx) + _versions(shards) + _legend()
    for setting in idx.settings():
        lines += _setting(idx, setting, plots, folder)
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


def _method(idx: _Index) -> list[str]:
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
        "report and of the comparisons.",
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
    lines += ["### All metrics", ""]
    rows = [[_directed(m)] + [_cell(idx.rows[c].get(m.name), idx.digits) for c in cells]
            for m in compared_metrics()]
    lines += [*_table(["metric", *(variant_label(c[3], c[4]) for c in cells)], rows,
                      "l" + "r" * len(cells)), ""]
    w, _, k = setting
    shown = [p for p in plots.plots if (p.workload, p.horizon, p.k) == setting]
    if setting == _first_with(idx, setting):  # the scaling plot goes with the first horizon
        shown += [p for p in plots.plots if (p.workload, p.horizon, p.k) == (w, None, k)]
    if shown:
        lines += ["### Plots", ""]
        for p in shown:
            rel = Path(os.path.relpath(p.path.resolve(), folder.resolve())).as_posix()
            lines += [f"![{p.title}]({rel})", ""]
    return lines


def _first_with(idx: _Index, setting: Setting) -> Setting:
    """The first setting of this workload and k."""
    return next(s for s in idx.settings() if s[0] == setting[0] and s[2] == setting[2])


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
