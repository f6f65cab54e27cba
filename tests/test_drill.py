"""The web page's drill-down (``runner.report.drill``): each cell of a sweep run with
``--samples`` has its evidence on the page, linked from the primary comparisons, opened
and filtered in a real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.analysis.explain import failed
from runner.cli import app
from runner.report.drill import SEEDS_SHOWN, SHOWN, anchor
from runner.results.samples import QUERIES_FILE, SAMPLES

SWEEP = ["sweep", "--workloads", "contradiction,lifecycle", "--policies",
         "keep_all,lethe,lru", "--seeds", "4", "--horizons", "0.1x", "--quiet",
         "--executor", "inline"]


def _run(*args: str) -> None:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("drill") / "out"
    _run(*SWEEP, "--samples", "--no-report", "--out", str(out))
    _run("report", str(out), "--html")
    return out


def test_every_cell_has_its_evidence_and_counts_from_its_samples(reported: Path) -> None:
    """Prevents a drill-down that leaves cells out, shows another cell's evidence, or
    grows without bound: one folded part per cell, under the cell's anchor, counting the
    failed questions of its shown seeds' samples, with at most the capped rows."""
    html = (reported / "RESULTS.html").read_text()
    final = pq.read_table(reported / "summary.parquet").to_pylist()
    cells = {(r["workload"], r["horizon"], r["k"], r["policy"], r["params"]) for r in final}
    assert len(cells) == 6
    for cell in cells:
        ident = anchor(("out", *cell))
        start = html.index(f'<details class="drill" id="{ident}">')
        part = html[start:html.index("</details>", start)]
        folder = reported / SAMPLES / f"workload={cell[0]}" / f"policy={cell[3]}"
        tables = [pq.read_table(p) for p in sorted(folder.glob(f"*.{QUERIES_FILE}"))]
        seeds = sorted(pq.read_schema(p).metadata[b"fbench.spec"] and
                       json.loads(pq.read_schema(p).metadata[b"fbench.spec"])["seed"]
                       for p in folder.glob(f"*.{QUERIES_FILE}"))
        by_seed = {json.loads(t.schema.metadata[b"fbench.spec"])["seed"]: t for t in tables}
        shown = seeds[:SEEDS_SHOWN]
        n_failed = sum(int(failed(by_seed[s]).sum()) for s in shown)
        n_asked = sum(by_seed[s].num_rows for s in shown)
        assert f"{n_failed} of {n_asked} questions failed" in part
        worst = part[part.index("Worst queries"):part.index("False forgets")]
        assert worst.count("<tr>") - 1 <= SEEDS_SHOWN * SHOWN


def _open(browser: Any, reported: Path) -> None:
    browser.open((reported / "RESULTS.html").as_uri())


def test_a_comparison_links_to_its_cells_evidence_and_opens_it(browser: Any,
                                                              reported: Path) -> None:
    """Prevents links that go nowhere or land on a folded part left closed: clicking a
    policy in the primary comparisons opens that cell's evidence, and the page logs no
    error (its script and style pass its own CSP)."""
    _open(browser, reported)
    assert browser.errors() == []
    assert browser.js("Array.from(document.querySelectorAll('details.drill'))"
                      ".filter(d => d.open).length") == 0
    target = browser.js("""(() => {
        const h = Array.from(document.querySelectorAll('h2'))
            .find(h => h.textContent === 'Primary comparisons');
        const a = h.parentElement.querySelector('a[href^="#ev-"]');
        a.id = 'first-link'; return a.getAttribute('href').slice(1); })()""")
    browser.click("#first-link")
    browser.js("new Promise(r => setTimeout(r, 100))")
    assert browser.js(f"document.getElementById('{target}').open") is True
    assert browser.js("location.hash") == f"#{target}"
    assert browser.errors() == []


def test_a_cells_worst_queries_filter_by_category_and_forgets_by_reason(
        browser: Any, reported: Path) -> None:
    """Prevents drill-down tables whose filters do nothing: choosing a category leaves
    only that category's worst queries, choosing a reason only that reason's rows."""
    _open(browser, reported)
    pick = """(() => {{ const s = document.querySelector('#{table} select[data-col="{col}"]');
        const v = s.options[1].value; s.value = v;
        s.dispatchEvent(new Event("change", {{bubbles: true}})); return v; }})()"""
    rows = """Array.from(document.querySelectorAll('#{table} tbody tr'))
        .filter(tr => !tr.hidden).map(tr => tr.cells[{col}].textContent)"""
    mixed = """Array.from(document.querySelectorAll('details.drill')).map(d => d.id)
        .find(id => new Set(Array.from(document.querySelectorAll(`#${{id}}-{t} tbody tr`))
                             .map(tr => tr.cells[{col}].textContent)).size > 1)"""
    for t, col in (("t1", 2), ("t3", 1)):  # worst queries' category, deletions' reason
        ident = browser.js(mixed.format(t=t, col=col))
        assert ident, f"no cell's {t} has two values to filter by"
        browser.js(f"document.getElementById('{ident}').open = true")
        table = f"{ident}-{t}"
        everything = browser.js(rows.format(table=table, col=col))
        chosen = browser.js(pick.format(table=table, col=col))
        kept = browser.js(rows.format(table=table, col=col))
        assert kept and set(kept) == {chosen} and len(kept) < len(everything)
    assert browser.errors() == []


def test_a_page_without_samples_has_no_evidence_section(tmp_path: Path) -> None:
    """Prevents an empty Evidence section (or broken links) on a sweep run without
    ``--samples``."""
    out = tmp_path / "out"
    _run(*SWEEP, "--no-report", "--seeds", "2", "--out", str(out))
    _run("report", str(out), "--html")
    html = (out / "RESULTS.html").read_text()
    assert "<h2>Evidence</h2>" not in html and "#ev-" not in html
