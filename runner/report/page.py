"""The web page's data model, independent of how its content is computed or rendered
(``runner.report.web_page`` builds it from the report's blocks, ``runner.report.html``
renders it): a page of sections holding paragraphs, a list, tables, images and folded
parts (a cell's evidence: ``runner.report.drill``); and the
small inline Markdown subset (**bold**, `code`, [text](url)) its text fields may use, as
escaped HTML."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

# `code` first (its inside stays literal), then [text](url), then **bold**.
_INLINE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\[(?P<text>[^\[\]]+)\]\((?P<url>[^()\s]+)\)"
    r"|\*\*(?P<bold>.+?)\*\*"
)
# A link's url: relative (no scheme), an anchor, or one of these schemes; anything
# else (javascript:, data:, ...) renders as the plain text it was written as.
_SAFE_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# A cell's leading number: an optional comparison sign (<, ≤, ~, ...), a sign (+, -, −),
# digits with optional thousands commas, a fraction, an exponent.
_NUMBER = re.compile(
    r"^\s*[<>≤≥~≈]?\s*(?P<sign>[+\-−]?)\s*"
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?P<exp>[eE][+\-]?\d+)?"
)


def _safe_url(url: str) -> bool:
    m = _SCHEME.match(url)
    return m is None or m.group(1).lower() in _SAFE_SCHEMES


def _inline(text: str, as_html: bool) -> str:
    esc = html.escape if as_html else (lambda s: s)
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(text):
        url = m.group("url")
        if url is not None and not _safe_url(url):
            continue  # left as text: the next literal run takes it
        out.append(esc(text[pos:m.start()]))
        if m.group("code") is not None:
            code = esc(m.group("code"))
            out.append(f"<code>{code}</code>" if as_html else code)
        elif url is not None:
            inner = _inline(m.group("text"), as_html)
            out.append(f'<a href="{esc(url)}">{inner}</a>' if as_html else inner)
        else:
            inner = _inline(m.group("bold"), as_html)
            out.append(f"<strong>{inner}</strong>" if as_html else inner)
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def inline_html(text: str) -> str:
    """``text`` as HTML: **bold** -> <strong>, `code` -> <code>, [text](url) -> <a>
    (relative, #anchor, http(s) or mailto urls only); everything else escaped, so
    ``<script>`` or a bare ``[note]`` shows as the characters it is."""
    return _inline(text, as_html=True)


def plain_text(text: str) -> str:
    """What a reader sees of ``text`` once its inline Markdown is rendered (the text of
    ``inline_html(text)``): markers dropped, links reduced to their text."""
    return _inline(text, as_html=False)


def leading_number(cell: str) -> float | None:
    """The number a cell starts with, for sorting: ``0.123 [0.1, 0.2]`` -> 0.123,
    ``+0.004`` -> 0.004, ``−2`` -> -2, ``1,361`` -> 1361, ``12%`` -> 12; None for a blank,
    a dash (``—``, ``-``) or text."""
    m = _NUMBER.match(plain_text(cell))
    if m is None:
        return None
    value = float(m.group("num").replace(",", "") + (m.group("exp") or ""))
    return -value if m.group("sign") in ("-", "−") else value


@dataclass(frozen=True)
class Image:
    """A PNG, embedded in the page from ``path`` when it is rendered."""

    title: str
    path: Path


@dataclass(frozen=True)
class Table:
    """A table of text cells (inline Markdown allowed). ``filters`` names the columns to
    offer a dropdown filter for; ``numeric`` says per column whether it sorts by its
    cells' leading numbers, or is None to detect it (every non-blank cell starts with a
    number, and at least one cell does)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    filters: tuple[str, ...] = ()
    numeric: tuple[bool, ...] | None = None

    def __post_init__(self) -> None:
        width = len(self.columns)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(f"table {self.title!r}: row {i} has {len(row)} cells, "
                                 f"not {width}")
        unknown = [f for f in self.filters if f not in self.columns]
        if unknown:
            raise ValueError(f"table {self.title!r}: filters {unknown} are not columns")
        if self.numeric is not None and len(self.numeric) != width:
            raise ValueError(f"table {self.title!r}: numeric has {len(self.numeric)} "
                             f"flags for {width} columns")

    def numeric_columns(self) -> tuple[bool, ...]:
        """Whether each column sorts by number: ``numeric`` if given, else detected."""
        if self.numeric is not None:
            return self.numeric
        return tuple(_looks_numeric([row[c] for row in self.rows])
                     for c in range(len(self.columns)))


def _blank(cell: str) -> bool:
    return plain_text(cell).strip() in ("", "-", "—", "–", "n/a", "NA", "nan")


def _looks_numeric(cells: list[str]) -> bool:
    filled = [c for c in cells if not _blank(c)]
    return bool(filled) and all(leading_number(c) is not None for c in filled)


@dataclass(frozen=True)
class Drill:
    """A part of a section shown folded until opened (or linked to: ``#ident``): a
    title, then its paragraphs and tables."""

    ident: str
    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()


@dataclass(frozen=True)
class Section:
    """A titled part of the page, shown in this order: paragraphs, the list (``items``,
    numbered if ``numbered``), tables, images, folded parts (``drills``)."""

    title: str
    paragraphs: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    numbered: bool = False
    tables: tuple[Table, ...] = ()
    images: tuple[Image, ...] = ()
    drills: tuple[Drill, ...] = ()
    level: int = 2  # its heading's: the contents fold deeper ones under the one above


@dataclass(frozen=True)
class Page:
    """The whole page: a title, the summary's paragraphs (``intro``), then sections."""

    title: str
    intro: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
