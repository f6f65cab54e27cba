"""The report's blocks (``runner.report.blocks``) as Markdown text: one blank line between
blocks, a paragraph on one line, a list's items and a table's rows on consecutive lines,
a table cell's ``|`` escaped."""

from __future__ import annotations

from collections.abc import Iterable

from runner.report.blocks import Block, Figure, Heading, Items, Paragraph, TableBlock

_RULE = {"l": "---", "r": "---:"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(t: TableBlock) -> list[str]:
    return [_row(map(_cell, t.columns)), _row(_RULE[a] for a in t.align),
            *(_row(map(_cell, r)) for r in t.rows)]


def block_lines(block: Block) -> list[str]:
    """One block's lines."""
    match block:
        case Heading(level, text):
            return ["#" * level + " " + text]
        case Paragraph(text):
            return [text]
        case Items(items, numbered):
            return [f"{i}. {t}" if numbered else f"- {t}" for i, t in enumerate(items, 1)]
        case TableBlock():
            return _table(block)
        case Figure(title, path):
            return [f"![{title}]({path})"]
    raise TypeError(f"not a report block: {block!r}")


def render_markdown(blocks: Iterable[Block]) -> str:
    """The blocks as Markdown, each line ending in a newline, one blank line between
    blocks."""
    return "\n\n".join("\n".join(block_lines(b)) for b in blocks) + "\n"
