"""The report's Method section: how its numbers are computed, in the words of the code
that computes them (``runner.analysis.stats``, ``runner.results.comparisons``)."""

from __future__ import annotations

from runner.analysis import stats
from runner.metrics import METRICS
from runner.report.blocks import Block, Heading, Items, Paragraph
from runner.report.findings import ReportIndex
from runner.results.comparisons import PRIMARY_METRICS
from runner.results.tables import TOO_FEW_NOTE


def method_section(idx: ReportIndex, scaled: bool = False,
                   brief: bool = False) -> list[Block]:
    """The method, or (``brief``: a sweep included in another's report, whose method it
    shares) only what depends on this sweep: its baseline and its seeds' MDD."""
    ns = [idx.n_jobs(c) for c in idx.cells]
    n_min = min(ns)
    at_n = (f"at n = {n_min} the MDD is {stats.mdd_factor(n_min) / n_min ** 0.5:.3f} sd(Δ)"
            if n_min >= 2 else "no MDD below two seeds")
    if brief:
        return [Heading(2, "Method"),
                Paragraph(f"As in the report this sweep is included in, with its own "
                          f"baseline: each cell is paired by seed with `{idx.baseline}` at its "
                          f"defaults (same workload, horizon, k, non-policy parameters and "
                          f"embedder); {at_n}.")]
    timing = ", ".join(m.name for m in METRICS.values() if m.timing) or "none"
    return [Heading(2, "Method"), Items((
        "**Unit of replication: the seed.** A cell is one (workload, horizon, k, policy, "
        "parameters); its statistics are over its seeds' final checkpoints.",
        f"**Intervals: {stats.CI_METHOD}**, shown as mean [low, high]. A rate's Δ gets the "
        "betting interval within [−1, 1]. The betting interval's coverage holds by proof; "
        "resampling the default sweep's own cells at 5, 10 and 20 seeds "
        "(`benchmarks/bench_coverage.py`) finds it at 97.8% or more everywhere, where the "
        "t interval fell to 19% on zero-heavy rates. The price is width: at 5 seeds a "
        f"rate's interval spans most of [0, 1]. {decidable_note(n_min)} "
        f"{TOO_FEW_NOTE}.",
        f"**Pairing.** Each cell is paired by seed with `{idx.baseline}` at its defaults, at "
        "the same workload, horizon, k, non-policy parameters and **the same embedder** (the "
        "one the shards recorded); a cell with no such baseline is not paired.",
        f"**Tests: {stats.TEST_METHOD}.** The primary family (each policy at its defaults "
        "against the baseline, and the sweep's declared `compare` pairs, on the primary "
        f"metrics {', '.join(PRIMARY_METRICS)} unless the config names others) is "
        "Holm-corrected within each setting; everything else is exploratory, with "
        "Benjamini–Hochberg q-values over the sweep (comparisons.csv). The sign-flip p of "
        f"n seeds is at least 2^(1−n) (at n = {n_min}: {2.0 ** (1 - n_min):.2g}), so with "
        "Holm over m tests a difference needs m · 2^(1−n) < 0.05 to be called: a clear Δ "
        "over few seeds in a large family stays inconclusive. A comparison whose baseline "
        "sits at the metric's best value on every seed (keep_all's false-forget rate is 0) "
        "cannot come out better: its p is the exact one-sided sign-flip p toward worse, "
        "2^(−k) for k seeds off the bound, and it is tested with its family. Tests whose "
        "per-seed deltas are bit-identical (a cell bit-identical to another, a metric equal "
        "to another in the setting) count once in their family; comparisons bit-identical "
        "on every seed, or with no interval (an undefined metric), are not tests.",
        "**Verdicts, in this order.** better / worse: adjusted p < 0.05 and the interval of "
        "Δ excludes 0, with \"within margin\" added when that interval also lies inside ± "
        "the metric's margin (0.01 for rates, 5% of the baseline for sizes): a real "
        "difference too small to matter. Otherwise equivalent when the interval lies inside "
        "± the margin, else inconclusive.",
        f"**Minimal detectable difference** (two-sided α {stats.ALPHA}, power {stats.POWER}, "
        f"the t-test's, from the noncentral t): {at_n}.",
        "**Cells** bit-identical on every seed are one row naming all of them; a "
        "degenerate cell (retrieves or holds nothing) is flagged and kept off the frontier.",
        f"**Timing metrics** ({timing}) are not deterministic: left out"
        + (", except the Scaling section's per-job seconds." if scaled else "."),
    ))]


def decidable_note(n: int) -> str:
    """What no interval valid for every distribution can decide from n seeds, and how many
    seeds a Δ of 0.1 of a rate needs at least (``stats.decidable_delta``)."""
    if n < 2:
        return ""
    any_valid, betting = stats.decidable_delta(n), stats.decidable_delta(n, sides=2)
    need = next(m for m in range(2, 10_000) if stats.decidable_delta(m, sides=2) <= 0.1)
    limit = f"a rate's Δ below {any_valid:.2f}" if any_valid < 1 else "any rate's Δ"
    split = f"can show none below {betting:.2f}" if betting < 1 else "can show none"
    return (f"No interval that holds 95% for every distribution within the bounds can show "
            f"{limit} to be nonzero from {n} seeds, even when every seed has that Δ; the "
            f"betting interval, whose two ends split α, {split}, and one of 0.1 only from "
            f"{need} seeds.")
