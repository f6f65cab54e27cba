"""The report's Findings, a numbered list: first the seeds' claims (``runner.report.claims``),
then what fbench adds, each computed from the comparisons table or the summary: the
primary family's verdicts per setting, learned_forget's operating point
(``runner.report.learned_point``), the three-axis frontier, the least regret against the
oracle at each budget, and each incumbent against the baseline at its own embedder. Also
the marks the per-setting tables put after a value (its primary verdict)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from runner.report import learned_point
from runner.report.blocks import Block, Heading, Items, Paragraph, setting_title
from runner.report.claims import NOT_RUN, Result, claim_level
from runner.report.findings import ReportIndex, frontier3
from runner.results.aggregate import Cell, Setting
from runner.results.comparisons import VERDICTS
from runner.results.tables import variant_label

MARKS = {"better": " ▲", "worse": " ▼", "better, within margin": " ▲≈",
         "worse, within margin": " ▼≈", "equivalent": " ≈", "inconclusive": " ?",
         "identical": " ="}


def _cell(r: dict[str, Any]) -> Cell:
    return (r["workload"], r["horizon"], r["k"], r["policy"], r["params"])


def verdict_marks(cmp: list[dict[str, Any]], setting: Setting) -> dict[tuple[Cell, str], str]:
    """(cell, metric) -> the mark of its comparison with the baseline, when primary or not
    a test (identical, bounded)."""
    out = {}
    for r in cmp:
        if (r["source"] == "baseline" and (r["workload"], r["horizon"], r["k"]) == setting
                and r["family"] in ("primary", "not a test")):
            out[(_cell(r), r["metric"])] = MARKS.get(r["verdict"], "")
    return out


def _claims(results: Sequence[Result]) -> list[str]:
    """Each claim the sweeps ran, then one line naming those they did not."""
    out = []
    for r in results:
        o = r.outcome
        if o.verdict != NOT_RUN:
            out.append(f"**{r.claim.id} ({r.claim.source}) {o.verdict}.** "
                       f"{r.claim.statement}. {o.effect}; n = {o.n}; test: {r.claim.how}.")
    idle = [r.claim.id for r in results if r.outcome.verdict == NOT_RUN]
    if idle:
        out.append(f"**The seeds' claims {', '.join(idle)}: not run**: these sweeps hold "
                   "none or only some of their cells (`fbench sweep --config "
                   "sweeps/results.toml` runs them all).")
    return out


def _tally(name: str, cmp: list[dict[str, Any]]) -> str | None:
    """One sweep's primary family in a line: verdict counts, what was not a test (``name``:
    an included sweep's folder; "" for the report's own, whose folder name is not printed,
    so the report does not depend on where OUT is)."""
    primary = Counter(r["verdict"] for r in cmp
                      if r["family"] == "primary" and r["copy_of"] is None)
    if not primary:
        return None
    copies = sum(r["family"] == "primary" and r["copy_of"] is not None for r in cmp)
    free = Counter(r["verdict"] for r in cmp if r["family"] == "not a test")
    settings = {(r["workload"], r["horizon"], r["k"]) for r in cmp if r["family"] == "primary"}
    explo = sum(r["family"] == "exploratory" and r["copy_of"] is None for r in cmp)
    where = f"`{name}/`" if name else "This sweep"
    csv = f"`{name}/comparisons.csv`" if name else "its `comparisons.csv`"
    return (f"**{where}**: {sum(primary.values())} primary tests in "
            f"{len(settings)} settings (Holm within each): "
            + ", ".join(f"{primary[v]} {v}" for v in VERDICTS if primary[v])
            + f"; {copies} more with the same per-seed deltas as one of these, counted once"
            f"; not tests: {free['identical']} identical, {free['—']} without an interval "
            f"(an undefined metric, or one seed); {explo} exploratory (BH q-values in "
            f"{csv}).")


def frontier_line(idx: ReportIndex, setting: Setting) -> str:
    cells = [c for c in idx.in_setting(setting) if idx.same_as(c) is None]
    on = frontier3(idx, cells)
    d = idx.digits

    def point(c: Cell) -> str:
        vals = [idx.mean(c, m) for m in ("contradiction_rate", "recall_current_at_k",
                                         "final_size")]
        return (f"{variant_label(c[3], c[4])} ({vals[0]:.{d.get('contradiction_rate', 3)}f}, "
                f"{vals[1]:.{d.get('recall_current_at_k', 3)}f}, {vals[2]:.0f})")

    return (f"Frontier of (contradiction ↓, current recall ↑, size ↓): {len(on)} of "
            f"{len(cells)} cells: " + "; ".join(map(point, on)) + ".")


def _regret(cmp: list[dict[str, Any]], setting: Setting) -> str | None:
    """Per budget: the policy of least current-recall regret against the oracle."""
    rows = [r for r in cmp if (r["workload"], r["horizon"], r["k"]) == setting
            and r["other"] == "oracle" and r["metric"] == "recall_current_at_k"
            and r["family"] == "primary"]
    if not rows:
        return None
    by_budget: dict[str, dict[str, Any]] = {}
    for r in rows:
        best = by_budget.get(r["other_params"])
        if best is None or r["delta"] > best["delta"]:
            by_budget[r["other_params"]] = r
    parts = []
    for budget, r in sorted(by_budget.items(), key=lambda kv: len(kv[0])):
        where = variant_label("", budget).strip() or "no budget"
        parts.append(f"{where}: {r['policy']} Δ {r['delta']:+.3f} "
                     f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] ({r['verdict']})")
    n = min(r["n"] for r in by_budget.values())
    return (f"**{setting_title(setting)}**, least current-recall regret against the oracle "
            "at each budget (Δ = policy − oracle, 95% interval, Holm-corrected sign-flip "
            f"verdict; n = {n}): " + "; ".join(parts) + ".")


def _incumbents(cmp: list[dict[str, Any]]) -> list[str]:
    """Per workload: each incumbent against the baseline at its own embedder."""
    by_workload: dict[str, list[str]] = {}
    shown = [r for r in cmp if r["policy"] in INCUMBENTS and r["source"] == "baseline"
             and r["metric"] == "recall_current_at_k" and r["family"] == "primary"]
    for r in shown:
        label = variant_label(r["policy"], r["params"])
        by_workload.setdefault(r["workload"], []).append(
            f"{label} ({r['embedder']}) vs {r['other']} {r['delta']:+.3f} "
            f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] {r['verdict']}")
    n = min((r["n"] for r in shown), default=0)
    return [f"**Incumbents on {w}**, current recall against the baseline at the same "
            f"embedder (Δ, 95% interval, Holm-corrected sign-flip verdict; n = {n}): "
            + "; ".join(parts) + "." for w, parts in sorted(by_workload.items())]


INCUMBENTS = ("lethe_agent", "mem0")


def findings(folders: Sequence[tuple[str, ReportIndex, list[dict[str, Any]]]],
             claims: Sequence[Result]) -> list[Block]:
    """The Findings section of a report over several sweeps, its numbered list: the
    seeds' claims, then each sweep's primary family, the oracle regret per budget, the
    incumbents; [] when there is none."""
    items = _claims(claims)
    for name, idx, cmp in folders:
        items += [t for t in [_tally(name, cmp)] if t]
        if not name:  # the report's own sweep
            items += [t for t in [learned_point.finding(idx)] if t]
        items += [t for s in idx.settings() if (t := _regret(cmp, s))]
        items += _incumbents(cmp)
    if not items:
        return []
    ran = any(r.outcome.verdict != NOT_RUN for r in claims)
    intro = ("The seeds' claims are tested with paired intervals at "
             f"{claim_level():.2%} each (Bonferroni over the {len(claims)} claims); the rest "
             "comes from each sweep's comparisons." if ran else
             "Computed from the sweep's comparisons.")
    return [Heading(2, "Findings"), Paragraph(intro), Items(tuple(items), numbered=True)]
