"""The report's content as typed blocks, the one model its two renderings read
(``runner.report.markdown_text``: RESULTS.md; ``runner.report.web_page``: the web page):
headings, paragraphs, lists, tables and figures, their text in the inline Markdown
subset of ``runner.report.page`` (**bold**, `code`, [text](url)). Also the builders the
sections share (``table``, ``images``, ``demoted``) and the small pieces of text they
put in them: seed ranges, counts and spans, setting titles, directed metric names."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.metrics import Metric
from runner.results.aggregate import Setting
from runner.results.tables import horizon_unit


@dataclass(frozen=True)
class Heading:
    """A heading: level 1 is the report's title, each deeper one starts a section."""

    level: int
    text: str

    def __post_init__(self) -> None:
        if self.level < 1:
            raise ValueError(f"heading {self.text!r}: level {self.level} is below 1")


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of one line of text."""

    text: str


@dataclass(frozen=True)
class Items:
    """A list of one or more items, numbered from 1 or bulleted."""

    items: tuple[str, ...]
    numbered: bool = False

    def __post_init__(self) -> None:
        if not self.items:
            raise ValueError("a list needs at least one item")


@dataclass(frozen=True)
class TableBlock:
    """A table of text cells; ``align`` holds one of l/r per column."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str

    def __post_init__(self) -> None:
        width = len(self.columns)
        if len(self.align) != width or set(self.align) - {"l", "r"}:
            raise ValueError(f"table {self.columns}: align {self.align!r} is not one of "
                             f"l/r per column")
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(f"table {self.columns}: row {i} has {len(row)} cells, "
                                 f"not {width}")


@dataclass(frozen=True)
class Figure:
    """An image: ``path`` is relative to the report's folder, with forward slashes."""

    title: str
    path: str


Block = Heading | Paragraph | Items | TableBlock | Figure


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> TableBlock:
    """A table of ``rows`` under ``header``; ``align`` holds one of l/r per column."""
    return TableBlock(tuple(header), tuple(tuple(r) for r in rows), align)


def images(shown: Iterable[Any], folder: Path) -> list[Block]:
    """A figure per plot (anything with a ``title`` and a ``path``), its path relative to
    ``folder``."""
    return [Figure(p.title, Path(os.path.relpath(p.path.resolve(), folder.resolve())).as_posix())
            for p in shown]


def demoted(blocks: Iterable[Block]) -> list[Block]:
    """``blocks`` with every heading one level deeper."""
    return [Heading(b.level + 1, b.text) if isinstance(b, Heading) else b for b in blocks]


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


def setting_title(setting: Setting) -> str:
    w, h, k = setting
    unit = horizon_unit(w)
    return f"{w}, horizon {h}{' ' + unit if unit else ''}, k = {k}"


def span(values: Iterable[int]) -> str:
    vs = sorted(set(values))
    return str(vs[0]) if len(vs) == 1 else f"{vs[0]} to {vs[-1]}"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def directed(m: Metric) -> str:
    return f"{m.name} {m.arrow}".strip()
