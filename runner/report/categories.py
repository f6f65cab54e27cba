"""The per-category tables of a setting whose workload has query categories of its own
(a trace's, StateBench's tracks): each primary quality metric, one column per category.
fbench's own categories (fact, durable, ...) get no table: their split columns are in
every summary. In a report that includes another sweep, the included sweep's tables
stay in its own report (``runner.report.markdown.own_report_line`` says where)."""

from __future__ import annotations

from runner.metrics import CATEGORIES, METRICS, split_name
from runner.report.blocks import Block, Heading, Paragraph, directed, table
from runner.report.findings import ReportIndex
from runner.results.aggregate import Setting
from runner.results.tables import format_row, variant_label

SPLIT = ("recall_current_at_k", "contradiction_rate", "false_forget_rate")


def setting_categories(idx: ReportIndex, setting: Setting) -> list[str]:
    """The categories of its own a setting's cells have queries of, in name order."""
    found: set[str] = set()
    for cell in idx.in_setting(setting):
        for name, r in idx.rows[cell].items():
            split = split_name(name)
            if (split is not None and split[0] == "n_queries" and split[1] not in CATEGORIES
                    and (r["mean"] or 0) > 0):
                found.add(split[1])
    return sorted(found)


def category_tables(idx: ReportIndex, setting: Setting) -> list[Block]:
    """One table per metric of ``SPLIT``: a row per cell, a column per category of the
    setting's own (mean and 95% interval over seeds)."""
    cats = setting_categories(idx, setting)
    if not cats:
        return []
    cells = [c for c in idx.in_setting(setting) if idx.same_as(c) is None]
    blocks: list[Block] = [
        Heading(3, "By query category"),
        Paragraph("The workload's own query categories, each metric over that category's "
                  "queries only (mean [95% interval over seeds]; "
                  "exploratory: no comparison is tested here).")]
    for metric in SPLIT:
        m = METRICS[metric]
        rows = []
        for c in cells:
            got = [idx.rows[c].get(f"{metric}_{cat}") for cat in cats]
            rows.append([variant_label(c[3], c[4])] + [
                format_row(r, idx.digits.get(metric)) if r is not None else ""
                for r in got])
        blocks += [Paragraph(f"**{directed(m)}**"),
                   table(["policy", *cats], rows, "l" + "r" * len(cats))]
    return blocks
