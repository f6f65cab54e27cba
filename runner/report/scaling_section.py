"""The report's Scaling section: per workload and k run at several horizons, each policy's
log–log slopes of final size, tokens and per-job seconds (``runner.analysis.scaling``),
and the scaling plot."""

from __future__ import annotations

from pathlib import Path

from runner.analysis import scaling, stats
from runner.report.blocks import Block, Heading, Paragraph, images, seed_ranges, table
from runner.report.findings import ReportIndex, undefined
from runner.report.plots import Plots
from runner.results.tables import horizon_unit, variant_label

# The section's two paragraphs: what a slope means, and what the seconds are.
_SLOPES = (
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
    "grows with the memory (a query scores every live entry)."
)
_SECONDS = (
    "Seconds are each job's wall-clock time (`wall_s` at its final checkpoint): unlike every "
    "other number in this report they are not deterministic, and depend on the machine and "
    "its load. A value ≤ 0 has no logarithm: such jobs are left out of that fit and counted "
    "`(used of all jobs)`. `—`: fewer than two horizons left (no slope); `[—]`: one seed "
    "(no interval). Only policies run at two or more horizons are fitted."
)


def _slope(fit: scaling.Fit) -> str:
    """``0.98 [0.95, 1.01]``; ``—`` undefined, ``[—]`` no interval; jobs left out counted."""
    def num(x: float) -> str:
        text = f"{x:.2f}"
        return "0.00" if text == "-0.00" else text

    if not fit.defined:
        text = "—"
    else:
        ci = "—" if undefined(fit.ci_low) else f"{num(fit.ci_low)}, {num(fit.ci_high)}"
        text = f"{num(fit.slope)} [{ci}]"
    if fit.n_used < fit.n_jobs:
        text += f" ({fit.n_used} of {fit.n_jobs} jobs)"
    return text


def section(idx: ReportIndex, studies: list[scaling.Study], plots: Plots,
            folder: Path) -> list[Block]:
    """Per workload and k run at several horizons: each policy's log–log slopes of final
    size, tokens and per-job seconds against the horizon, and the scaling plot."""
    if not studies:
        return []
    blocks: list[Block] = [Heading(2, "Scaling"), Paragraph(_SLOPES), Paragraph(_SECONDS)]
    for st in studies:
        unit = horizon_unit(st.workload)
        seeds = {s for series in st.series for s in series.seeds}
        blocks += [Heading(3, f"Scaling: {st.workload}, k = {st.k}"),
                   Paragraph(f"Horizons {', '.join(map(str, st.horizons))}"
                             f"{' ' + unit if unit else ''}"
                             + (f"; seeds {seed_ranges(seeds)} ({len(seeds)})." if seeds
                                else "."))]
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
            blocks.append(table(["policy", "jobs", "horizons", size_head,
                                 *(f"slope of {name}" for name in scaling.SCALED.values())],
                                rows, "lrrrrrr"))
        else:
            blocks.append(Paragraph("No policy ran at two or more horizons here: nothing to "
                                    "fit."))
        if st.single:
            blocks.append(Paragraph("Not fitted (ran at one horizon): "
                                    + ", ".join(variant_label(*v) for v in st.single) + "."))
        shown = [p for p in plots.plots if p.kind == "scaling"
                 and (p.workload, p.horizon, p.k) == (st.workload, None, st.k)]
        blocks += images(shown, folder)
    return blocks
