"""The report's block model and its two renderings (runner/report/blocks.py,
markdown_text.py, web_page.py): the Markdown text of each block, the web page's grouping
of the same blocks into sections, and an included sweep's blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.report.blocks import Figure, Heading, Items, Paragraph, TableBlock, table
from runner.report.markdown import included
from runner.report.markdown_text import render_markdown
from runner.report.page import Image, Section, Table
from runner.report.web_page import page_of

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def test_markdown_puts_one_blank_line_between_blocks_and_escapes_table_pipes() -> None:
    """Prevents RESULTS.md's layout from drifting: a missing or doubled blank line between
    blocks, a list or table split by blank lines, an unescaped ``|`` in a cell breaking
    its table's columns, or a file without its final newline."""
    blocks = [Heading(1, "fbench results"), Paragraph("Intro with `code`."),
              Heading(2, "Findings"), Items(("first", "second"), numbered=True),
              table(["policy", "a|b"], [["x | y", "1"], ["z", ""]], "lr"),
              Items(("one",)), Figure("Frontier", "plots/f.png")]
    assert render_markdown(blocks) == (
        "# fbench results\n\nIntro with `code`.\n\n## Findings\n\n1. first\n2. second\n\n"
        "| policy | a\\|b |\n| --- | ---: |\n| x \\| y | 1 |\n| z |  |\n\n- one\n\n"
        "![Frontier](plots/f.png)\n")


def test_blocks_reject_what_no_rendering_can_show() -> None:
    """Prevents a table whose rows or alignment do not match its columns, or an empty
    list, from reaching a renderer (a ragged Markdown table, a stray blank line)."""
    with pytest.raises(ValueError, match="row 0"):
        table(["a", "b"], [["1"]], "ll")
    with pytest.raises(ValueError, match="align"):
        table(["a", "b"], [["1", "2"]], "l")
    with pytest.raises(ValueError, match="align"):
        table(["a"], [["1"]], "c")
    with pytest.raises(ValueError, match="at least one"):
        Items(())
    with pytest.raises(ValueError, match="level"):
        Heading(0, "x")


def test_the_page_groups_blocks_into_sections(tmp_path: Path) -> None:
    """Prevents the web page from holding other content than the Markdown: the level-1
    heading lost as its title, intro paragraphs lost, a section's list, tables or figures
    given to another section, a table without its filters, a figure whose file is missing
    shown broken, anything before the first section shown outside a section, or a
    section's heading level lost (the contents fold the deeper ones)."""
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "f.png").write_bytes(PNG)
    blocks = [Paragraph("Before the title."), Heading(1, "fbench results"),
              Paragraph("Summary."), Items(("dropped",)),
              table(["x"], [["dropped"]], "l"), Figure("Dropped", "plots/f.png"),
              Heading(2, "Findings"), Paragraph("Intro."), Items(("a", "b"), numbered=True),
              Items(("c",)), Paragraph("After the lists."),
              Heading(3, "A setting"),
              table(["policy", "seed", "recall ↑"], [["keep_all", "0", "0.5"]], "lrr"),
              Figure("Plot", "plots/f.png"), Figure("Missing", "plots/none.png")]
    page = page_of(blocks, tmp_path)
    assert page.title == "fbench results"
    assert page.intro == ("Before the title.", "Summary.")
    assert page.sections == (
        Section("Findings", ("Intro.", "After the lists."), ("a", "b", "c"), False),
        Section("A setting", tables=(Table("A setting", ("policy", "seed", "recall ↑"),
                                           (("keep_all", "0", "0.5"),), ("policy", "seed")),),
                images=(Image("Plot", (tmp_path / "plots" / "f.png").resolve()),), level=3))


def test_a_page_without_a_title_heading_is_fbench_results(tmp_path: Path) -> None:
    """Prevents an untitled page when the blocks carry no level-1 heading."""
    page = page_of([Heading(2, "Only"), Paragraph("text")], tmp_path)
    assert page.title == "fbench results" and page.sections == (Section("Only", ("text",)),)


def test_an_included_report_is_one_section_with_its_headings_demoted() -> None:
    """Prevents an included sweep's report from bringing a second page title, or headings
    at its own levels that would make its sections siblings of the including report's."""
    body = [Heading(1, "fbench results"), Paragraph("Generated."), Heading(2, "What ran"),
            Heading(3, "At equal memory"), TableBlock(("a",), (("1",),), "l")]
    got = included(Path("/x/frontier"), body)
    assert got[0] == Heading(2, "Included sweep: `frontier/`")
    assert isinstance(got[1], Paragraph) and "`frontier/`" in got[1].text
    assert got[2:] == [Paragraph("Generated."), Heading(3, "What ran"),
                       Heading(4, "At equal memory"), TableBlock(("a",), (("1",),), "l")]
