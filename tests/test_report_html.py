"""`fbench report OUT --html`: the report as one self-contained web page, opened in a real
headless Chromium (Debian's `chromium`, installed by .ci/run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app
from tests.test_html_page import Browser


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny sweep's report, as Markdown and as a web page."""
    out = tmp_path_factory.mktemp("report-html") / "o"
    runner = CliRunner()
    res = runner.invoke(app, ["sweep", "--policies", "keep_all,last_write_wins,ttl",
                              "--workloads", "contradiction", "--seeds", "3", "--horizons",
                              "200", "--executor", "inline", "--out", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(out), "--html"])
    assert res.exit_code == 0, res.output
    return out / "RESULTS.html"


def test_the_page_is_self_contained_and_holds_the_reports_sections(page: Path) -> None:
    """Prevents a web page that needs the network or a server (a CDN script, a linked
    image) or that drops what the Markdown says: findings, each setting, plots inline."""
    html = page.read_text()
    md = page.with_suffix(".md").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "data:image/png;base64," in html
    for heading in re.findall(r"^## (.+)$", md, flags=re.M):
        assert heading.replace("&", "&amp;") in html, heading
    assert (page.parent / "comparisons.csv").is_file()


def test_the_report_page_loads_sorts_and_screenshots_in_chromium(
        page: Path, browser: Browser, tmp_path: Path) -> None:
    """Prevents a report page that errors in a real browser or whose tables do not sort:
    no console errors; clicking a numeric column's header orders its rows by number;
    a screenshot of the summary is written."""
    browser.open(page.as_uri())
    assert browser.errors() == []
    tables = browser.js("""Array.from(document.querySelectorAll("[id]")).map(e => e.id)
        .filter(id => /^s\\d+-t\\d+$/.test(id))""")
    table = next(t for t in tables if browser.js(
        f"""document.querySelector("#{t} thead").textContent.includes("final_size")"""))
    col = browser.js(f"""Array.from(document.querySelectorAll("#{table} thead th"))
        .findIndex(th => th.textContent.includes("final_size"))""")
    browser.click(f"#{table} thead th:nth-child({col + 1})")

    def column() -> list[float]:
        cells = browser.js(f"""Array.from(document.querySelectorAll("#{table} tbody tr"))
            .filter(tr => !tr.hidden).map(tr => tr.cells[{col}].textContent)""")
        return [float(c.split()[0].replace(",", "")) for c in cells]

    first = column()
    assert first == sorted(first) and len(first) == 3
    browser.click(f"#{table} thead th:nth-child({col + 1})")
    assert column() == sorted(first, reverse=True)
    shot = browser.send("Page.captureScreenshot", format="png")
    import base64

    png = base64.b64decode(shot["data"])
    (tmp_path / "summary.png").write_bytes(png)
    assert png.startswith(b"\x89PNG") and (tmp_path / "summary.png").stat().st_size > 1000
    # the whole primary family in one table, filterable by workload, policy and metric
    labels = browser.js("""Array.from(document.querySelectorAll("label"))
        .filter(l => l.querySelector("select")).map(l => l.textContent.trim().split(/\\s/)[0])""")
    assert {"workload", "policy", "metric"} <= set(labels)
    assert browser.errors() == []
