"""The report's Markdown as a ``Page`` (``runner.report.page``) for the web page: one
content, two renderings. It reads only the Markdown the report writes: ``#`` headings,
paragraphs, numbered or bulleted lists, pipe tables and image links (relative to the
report's folder)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from runner.report.page import Image, Page, Section, Table
from runner.results.tables import variant_label

_IMAGE = re.compile(r"^!\[(?P<title>[^\]]*)\]\((?P<path>[^)]+)\)$")
_ITEM = re.compile(r"^(?:\d+\.|-)\s+(?P<text>.*)$")
FILTERS = ("policy", "workload", "metric", "seed")


def _cells(line: str) -> tuple[str, ...]:
    inner = line.strip()[1:-1]
    parts = re.split(r"(?<!\\)\|", inner)
    return tuple(p.strip().replace("\\|", "|") for p in parts)


class _Builder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.sections: list[Section] = []
        self.title = ""
        self.paras: list[str] = []
        self.items: list[str] = []
        self.tables: list[Table] = []
        self.images: list[Image] = []
        self.numbered = False
        self.intro: list[str] = []

    def flush(self) -> None:
        if self.title:
            self.sections.append(Section(self.title, tuple(self.paras), tuple(self.items),
                                         self.numbered, tuple(self.tables), tuple(self.images)))
        elif self.paras:
            self.intro += self.paras
        self.paras, self.items, self.tables, self.images = [], [], [], []
        self.numbered = False
        self.title = ""

    def table(self, lines: list[str], title: str) -> None:
        head = _cells(lines[0])
        rows = tuple(_cells(r) for r in lines[2:])
        filters = tuple(c for c in head if c in FILTERS)
        self.tables.append(Table(title or self.title, head, rows, filters))


def page_of(markdown: str, folder: Path) -> Page:
    """A Page of the report's sections (level-2 and deeper headings start one each)."""
    b = _Builder(Path(folder))
    page_title = "fbench results"
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("# "):
            page_title = line[2:].strip()
        elif line.startswith("#"):
            b.flush()
            b.title = line.lstrip("#").strip()
        elif line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            b.table(block, b.title)
            continue
        elif m := _IMAGE.match(line.strip()):
            path = (b.folder / m.group("path")).resolve()
            if path.is_file():
                b.images.append(Image(m.group("title"), path))
        elif m := _ITEM.match(line):
            b.items.append(m.group("text"))
            b.numbered = line[0].isdigit()
        elif line.strip():
            b.paras.append(line.strip())
        i += 1
    b.flush()
    return Page(page_title, tuple(b.intro), tuple(b.sections))


def _num(x: float | None, fmt: str) -> str:
    return "—" if x is None or x != x else format(x, fmt)


def with_comparisons(page: Page, sweeps: Sequence[tuple[str, pa.Table]]) -> Page:
    """The page with one more section: every primary comparison of every sweep, in one
    table filterable by sweep, workload, policy, metric and verdict (the Markdown keeps
    them per setting; the whole family, exploratory ones too, is comparisons.csv)."""
    rows = []
    for name, table in sweeps:
        for r in table.to_pylist():
            if r["family"] != "primary":
                continue
            rows.append((name, r["workload"], variant_label(r["policy"], r["params"]),
                         variant_label(r["other"], r["other_params"]), r["embedder"],
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
