"""The report's blocks (``runner.report.blocks``) as the web page's ``Page``
(``runner.report.page``), which ``runner.report.html`` renders: the same content as
RESULTS.md, grouped into sections, with one more section of every primary comparison."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from runner.report.blocks import Block, Figure, Heading, Items, Paragraph, TableBlock
from runner.report.page import Image, Page, Section, Table
from runner.results.tables import variant_label

FILTERS = ("policy", "workload", "metric", "seed")
TITLE = "fbench results"  # a page's title when its blocks have no level-1 heading


class _Sections:
    """The sections so far, and the one being filled (untitled: the intro)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.done: list[Section] = []
        self.intro: list[str] = []
        self.title = ""
        self.level = 2
        self.paras: list[str] = []
        self.items: list[str] = []
        self.numbered = False
        self.tables: list[Table] = []
        self.images: list[Image] = []

    def close(self) -> None:
        """End the current section (or the intro, which keeps only its paragraphs)."""
        if self.title:
            self.done.append(Section(self.title, tuple(self.paras), tuple(self.items),
                                     self.numbered, tuple(self.tables), tuple(self.images),
                                     level=self.level))
        else:
            self.intro += self.paras
        self.title, self.paras, self.items, self.numbered = "", [], [], False
        self.tables, self.images = [], []

    def add(self, block: Block) -> None:
        match block:
            case Heading(level, text) if level > 1:
                self.close()
                self.title, self.level = text, level
            case Paragraph(text):
                self.paras.append(text)
            case Items(items, numbered):
                self.items += items
                self.numbered = numbered
            case TableBlock(columns, rows):
                self.tables.append(Table(self.title, columns, rows,
                                         tuple(c for c in columns if c in FILTERS)))
            case Figure(title, path):
                found = (self.folder / path).resolve()
                if found.is_file():
                    self.images.append(Image(title, found))


def page_of(blocks: Iterable[Block], folder: Path) -> Page:
    """The page of the report's blocks: the level-1 heading is its title; the paragraphs
    before the first deeper heading are its intro; each deeper heading starts a section
    holding the blocks up to the next one: their paragraphs, their list items (numbered
    as the last list is), their tables (titled by the section, filterable by the columns
    of ``FILTERS`` they have) and the figures whose file exists (a path relative to
    ``folder``). Lists, tables and figures before the first section are left out."""
    title = TITLE
    sections = _Sections(Path(folder))
    for block in blocks:
        if isinstance(block, Heading) and block.level == 1:
            title = block.text
        else:
            sections.add(block)
    sections.close()
    return Page(title, tuple(sections.intro), tuple(sections.done))


def _linked(cell: tuple[str, str, int, int], policy: str, params: str,
            evidence: Collection[str]) -> str:
    """The policy's label, a link to its cell's evidence when the page has it."""
    from runner.report.drill import anchor

    label = variant_label(policy, params)
    ident = anchor((*cell, policy, params)) if evidence else ""
    return f"[{label}](#{ident})" if ident in evidence else label


def _num(x: float | None, fmt: str) -> str:
    return "—" if x is None or x != x else format(x, fmt)


def with_comparisons(page: Page, sweeps: Sequence[tuple[str, pa.Table]],
                     evidence: Collection[str] = ()) -> Page:
    """The page with one more section: every primary comparison of every sweep, in one
    table filterable by sweep, workload, policy, metric and verdict (the Markdown keeps
    them per setting; the whole family, exploratory ones too, is comparisons.csv). A
    policy whose cell has evidence on the page (its ``runner.report.drill.anchor`` in
    ``evidence``) links to it."""
    rows = []
    for name, table in sweeps:
        for r in table.to_pylist():
            if r["family"] != "primary":
                continue
            cell = (name, r["workload"], r["horizon"], r["k"])
            rows.append((name, r["workload"],
                         _linked(cell, r["policy"], r["params"], evidence),
                         _linked(cell, r["other"], r["other_params"], evidence),
                         r["embedder"],
                         r["metric"], _num(r["delta"], "+.4g"),
                         f"[{_num(r['ci_low'], '+.4g')}, {_num(r['ci_high'], '+.4g')}]",
                         _num(r["p"], ".3g"), _num(r["p_holm"], ".3g"), str(r["n"]),
                         r["verdict"]))
    columns = ("sweep", "workload", "policy", "against", "embedder", "metric", "Δ",
               "95% CI", "p", "Holm p", "n", "verdict")
    section = Section("Primary comparisons", (
        "Every primary comparison of every sweep (Holm within each setting). The "
        "exploratory ones, with BH q-values, are in each sweep's comparisons.csv.",),
        tables=(Table("Primary comparisons", columns, tuple(rows),
                      ("sweep", "workload", "policy", "metric", "verdict")),))
    return replace(page, sections=(*page.sections, section))
