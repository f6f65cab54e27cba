"""The self-contained HTML report page (runner/report/page.py, runner/report/html.py):
inline Markdown and escaping, numeric sort keys, determinism, nothing remote, embedded
images; then the page in a real headless Chromium, driven over the DevTools protocol:
no console errors, sorting by a header click, filtering, a screenshot of the summary."""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from runner.report.html import render_html, write_html
from runner.report.page import Image, Page, Section, Table, inline_html, leading_number

PNG = b"\x89PNG\r\n\x1a\n"
WORKLOADS = ("contradiction", "lifecycle")
POLICIES = ("keep_all", "ebbinghaus", "learned")
METRICS = ("stale_rate ↓", "recall ↑")
EVIL = "Scores for <script>alert('x')</script> [brackets] & [j](javascript:alert(1))"
# The run-size table's "facts kept" column, and that column sorted up (blanks last).
FACTS = ("1,361", "87", "—", "204", "", "+12.5", "−3")
FACTS_UP = ["−3", "+12.5", "87", "204", "1,361", "—", ""]


def _score(i: int) -> str:
    return f"{(i * 37 % 11) / 20:.3f} ± {(i % 4 + 1) / 100:.3f}"


def make_page(folder: Path) -> Page:
    """Two sections: a filterable scores table (workload x policy x metric, ``mean ± h``
    cells, a signed delta column with dashes), a run-size table and a matplotlib PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.plot([0, 1, 2], [0.3, 0.1, 0.2])
    png = folder / "plot.png"
    fig.savefig(png, format="png")
    plt.close(fig)

    rows = []
    for i, (w, p, m) in enumerate(itertools.product(WORKLOADS, POLICIES, METRICS)):
        delta = "—" if p == "keep_all" else f"{'+' if i % 3 else '−'}0.0{i % 10}"
        rows.append((w, p, m, _score(i), delta))
    scores = Table(title="Scores by setting",
                   columns=("workload", "policy", "metric", "mean ± h", "Δ vs keep_all"),
                   rows=tuple(rows), filters=("workload", "policy", "metric"))
    sizes = Table(title="Run sizes", columns=("policy", "facts kept", "note"),
                  rows=tuple((f"p{i}", f, f"run **{i}** of `sweep`")
                             for i, f in enumerate(FACTS)))
    return Page(
        title="fbench results",
        intro=("Forgetting, scored: **stale** facts dropped, durable ones kept.",
               "See [the method](docs/method.md#scores) and `fbench report`."),
        sections=(
            Section(title="Scores", paragraphs=(EVIL,),
                    items=("Lower stale rate is better.", "Intervals are 95 % bootstrap."),
                    numbered=True, tables=(scores,)),
            Section(title="Runs", items=("one", "two"), tables=(sizes,),
                    images=(Image(title="Stale rate over time", path=png),)),
        ),
    )


@pytest.fixture
def page(tmp_path: Path) -> Page:
    return make_page(tmp_path)


# ---------------------------------------------------------------- the page's text


def test_inline_markdown_subset_renders_and_everything_else_is_escaped() -> None:
    """Prevents a description with ``<script>``, ``&`` or quotes reaching the page as
    markup (script injection, broken layout) while **bold**, `code` and links still work."""
    assert inline_html("a **b** `c` [d](x.md#y)") == (
        'a <strong>b</strong> <code>c</code> <a href="x.md#y">d</a>')
    assert inline_html("<script>alert('x')</script> & \"q\"") == (
        "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;q&quot;")
    assert inline_html("`**not bold** <b>`") == "<code>**not bold** &lt;b&gt;</code>"
    assert inline_html("[**bold** link](a.md)") == '<a href="a.md"><strong>bold</strong> link</a>'


def test_brackets_and_unsafe_links_stay_text() -> None:
    """Prevents a bare ``[note]`` from vanishing and a ``javascript:`` (or ``data:``) link
    from becoming a live link: both show as the characters written."""
    assert inline_html("[brackets] and [x]") == "[brackets] and [x]"
    assert inline_html("[j](javascript:alert(1))") == "[j](javascript:alert(1))"
    assert inline_html("[d](data:text/html,hi)") == "[d](data:text/html,hi)"
    assert inline_html("**unclosed and `open") == "**unclosed and `open"


def test_evil_description_renders_as_text_in_the_page(page: Page) -> None:
    """Prevents any text field of the page (here a paragraph) bypassing the escaping."""
    out = render_html(page)
    assert "<script>alert" not in out
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; [brackets] &amp; " \
           "[j](javascript:alert(1))" in out
    assert out.count("<script>") == 1  # the page's own


@pytest.mark.parametrize(
    ("cell", "number"),
    [("0.123 ± 0.010", 0.123), ("+0.004", 0.004), ("−0.012", -0.012), ("-3", -3.0),
     ("1,361", 1361.0), ("12%", 12.0), ("<0.001", 0.001), ("1e-3", 0.001),
     ("**0.5** ± 0.1", 0.5), ("—", None), ("-", None), ("", None), ("n/a", None),
     ("keep_all", None)],
)
def test_leading_number_is_the_sort_key(cell: str, number: float | None) -> None:
    """Prevents numeric columns sorting as text (``1,361`` before ``87``) or a ``±``
    interval, a sign, a thousands comma or bold markers spoiling the key."""
    assert leading_number(cell) == number


def test_numeric_columns_are_detected_and_validated() -> None:
    """Prevents text columns sorting by number (and vice versa) when ``numeric`` is left
    to detection, and a ragged table or a filter on a missing column rendering silently."""
    t = Table(title="t", columns=("policy", "score", "empty"),
              rows=(("a", "0.1 ± 0.01", ""), ("b", "—", "-")))
    assert t.numeric_columns() == (False, True, False)
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        Table(title="t", columns=("a", "b"), rows=(("x",),))
    with pytest.raises(ValueError, match="not columns"):
        Table(title="t", columns=("a",), rows=(), filters=("b",))
    with pytest.raises(ValueError, match="numeric has 2 flags"):
        Table(title="t", columns=("a",), rows=(), numeric=(True, False))


# ---------------------------------------------------------------- the page's file


def test_same_page_gives_the_same_bytes(page: Page, tmp_path: Path) -> None:
    """Prevents timestamps, set or dict order or object ids making two renders of one
    report differ (a committed report would churn on every regeneration)."""
    assert render_html(copy.deepcopy(page)) == render_html(page)  # equal, not the same
    first = write_html(page, tmp_path / "a" / "report.html")
    second = write_html(page, tmp_path / "b" / "report.html")
    assert first.read_bytes() == second.read_bytes() == render_html(page).encode()
    assert re.search(r"20\d\d-\d\d-\d\d", render_html(page)) is None
    assert sorted(p.name for p in first.parent.iterdir()) == ["report.html"]  # no temp left


def test_nothing_remote_is_referenced(page: Page) -> None:
    """Prevents the page fetching anything (CDN script, web font, remote image, @import):
    it must open offline, from a file, with no server; a CSP pins that in the browser."""
    out = render_html(page)
    assert re.search(r"https?:|//[a-z0-9.-]+\.[a-z]", out, re.I) is None
    assert "@import" not in out and "@font-face" not in out and "url(" not in out
    assert re.findall(r'\bsrc="([^"]*)"', out) and all(
        s.startswith("data:image/png;base64,") for s in re.findall(r'\bsrc="([^"]*)"', out))
    for tag in re.findall(r"<link\b[^>]*>", out):
        assert 'href="data:' in tag, tag
    assert "<script src" not in out
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', out)
    assert csp is not None and "default-src 'none'" in csp.group(1)


def test_csp_hashes_match_the_inline_style_and_script(page: Page) -> None:
    """Prevents an edit of the CSS or JS that forgets its CSP hash: the browser would then
    silently drop the page's style or script."""
    out = render_html(page)
    csp = re.search(r'content="(default-src[^"]*)"', out)
    assert csp is not None
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", out, re.S)
        assert body is not None
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"{tag}-src 'sha256-{digest}'" in csp.group(1)


def test_images_are_embedded_as_data_uris(page: Page, tmp_path: Path) -> None:
    """Prevents the page linking its plots by path (broken once the HTML file is moved or
    mailed) and a non-PNG file being embedded as a broken image."""
    out = render_html(page)
    png = (tmp_path / "plot.png").read_bytes()
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in out
    assert "plot.png" not in out
    bad = tmp_path / "fake.png"
    bad.write_text("not a png")
    broken = Page(title="t", sections=(Section(title="s", images=(Image("x", bad),)),))
    with pytest.raises(ValueError, match="is not a PNG"):
        render_html(broken)


def test_sparse_pages_render(tmp_path: Path) -> None:
    """Prevents a crash on what a report can legitimately hold: a page with no sections,
    a section with nothing but a title, a table with no rows."""
    empty = Table(title="", columns=("policy", "score"), rows=(), filters=("policy",))
    out = render_html(Page(title="t", sections=(Section(title="s"),
                                                Section(title="u", tables=(empty,)))))
    assert "0 of 0 rows" in out and "<h3>" not in out
    assert "<nav" not in render_html(Page(title="only a title"))


def test_the_contents_fold_each_included_sweeps_parts() -> None:
    """Prevents a first screen that is a table of contents repeating every included
    sweep's What ran / Method / Versions: a top-level section gets a link, the deeper
    ones after it fold under it."""
    sections = tuple(Section(title=t, level=lv) for t, lv in (
        ("The board", 2), ("What ran", 2), ("Included sweep: `incumbents/`", 2),
        ("What ran", 3), ("Method", 3), ("Versions", 3), ("Method", 2)))
    nav = render_html(Page(title="t", sections=sections)).split("<nav")[1].split("</nav>")[0]
    top = re.findall(r'<li><a href="#s(\d+)">', nav)
    assert top[:3] == ["1", "2", "3"] and "7" in top
    assert nav.count("<details>") == 1 and "<summary>3 parts</summary>" in nav
    folded = nav.split("<details>")[1].split("</details>")[0]
    assert re.findall(r'href="#s(\d+)"', folded) == ["4", "5", "6"]


def test_filter_options_are_the_columns_distinct_values(page: Page) -> None:
    """Prevents a dropdown missing a value, repeating one, or offering filters on
    columns the table did not declare."""
    out = render_html(page)
    selects = re.findall(r'<select data-col="(\d)".*?</select>', out, re.S)
    assert selects == ["0", "1", "2"]  # only the scores table's three declared filters
    policy = re.search(r'<select data-col="1".*?</select>', out, re.S)
    assert policy is not None
    assert re.findall(r'<option value="([^"]*)"', policy.group(0)) == [
        "", "ebbinghaus", "keep_all", "learned"]


# ---------------------------------------------------------------- in a real browser


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A headless Chromium over the DevTools protocol: one page target on a flat session,
    its console errors, uncaught exceptions and error log entries collected as events."""

    def __init__(self, exe: str, profile: Path) -> None:
        import websocket  # websocket-client (the dev extra)

        args = [exe, "--headless=new", "--remote-debugging-port=0",
                f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
                "--disable-gpu", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--mute-audio", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        self.log = profile / "chromium.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=log, start_new_session=True)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"chromium did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)
        port, path = port_file.read_text().split()[:2]
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=30,
                                              suppress_origin=True)
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=1200, height=900,
                  deviceScaleFactor=1, mobile=False)

    def _recv(self) -> dict[str, Any]:
        msg: dict[str, Any] = json.loads(self.ws.recv())
        if "method" in msg and msg.get("sessionId") == self.session:
            self.events.append(msg)
        return msg

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call ``method`` (on the page's session once attached) and return its result."""
        call: dict[str, Any] = {"id": next(self.ids), "method": method, "params": params}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            call["sessionId"] = self.session
        self.ws.send(json.dumps(call))
        while True:
            msg = self._recv()
            if msg.get("id") == call["id"]:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result

    def open(self, url: str) -> None:
        """Navigate to ``url`` and wait for its load event; forget earlier events."""
        self.events.clear()
        self.send("Page.navigate", url=url)
        while not any(e["method"] == "Page.loadEventFired" for e in self.events):
            self._recv()

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (a thrown error fails the test)."""
        out = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=True)
        if "exceptionDetails" in out:
            raise AssertionError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of ``selector``."""
        x, y = self.js(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: "center"}}); const r = e.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def type(self, selector: str, text: str) -> None:
        """Click into ``selector`` and type ``text`` as the keyboard would commit it."""
        self.click(selector)
        self.send("Input.insertText", text=text)

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (CSP, failed loads)
        since the last ``open``."""
        self.js("0")  # a round trip: events sent before its answer are in by now
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get("description")
                           or p["exceptionDetails"].get("text", "exception"))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description")))
                                    for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text", ""))
        return out

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            with contextlib.suppress(Exception):  # closing anyway
                self.send("Browser.close")
            ws.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # our own process group only
            self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("html-page")
    return write_html(make_page(folder), folder / "report.html").as_uri()


@pytest.fixture
def opened(browser: Browser, page_url: str) -> Browser:
    browser.open(page_url)
    return browser


def _column(b: Browser, table: str, col: int) -> list[str]:
    return b.js(f"""Array.from(document.querySelectorAll("#{table} tbody tr"))
        .filter(tr => !tr.hidden).map(tr => tr.cells[{col}].textContent)""")


def _visible(b: Browser, table: str) -> int:
    return b.js(f"""document.querySelectorAll("#{table} tbody tr:not([hidden])").length""")


def test_error_collection_sees_errors(browser: Browser, tmp_path: Path) -> None:
    """Prevents the no-console-errors checks below passing because errors are never
    collected: a page that throws and logs an error must report both."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><script>console.error("logged");'
                   'throw new Error("thrown")</script>')
    browser.open(bad.as_uri())
    errors = browser.errors()
    assert any("logged" in e for e in errors) and any("thrown" in e for e in errors), errors


def test_page_loads_without_console_errors(opened: Browser) -> None:
    """Prevents a page whose script throws, whose CSP blocks its own style or script, or
    whose images fail to decode, while looking fine as text."""
    b = opened
    assert b.errors() == []
    assert b.js("document.documentElement.classList.contains('js')")  # the script ran
    assert b.js("getComputedStyle(document.querySelector('.controls')).display") == "flex"
    assert b.js("document.querySelector('h1').textContent") == "fbench results"
    assert b.js("Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)") \
        == [True]
    assert b.js("document.querySelector('#s1 p').textContent") == EVIL
    assert b.js("document.querySelector('#s1-t1 .count').textContent") == "12 of 12 rows"


def test_clicking_a_header_sorts_numerically_then_reverses(opened: Browser) -> None:
    """Prevents numeric columns sorting as text (``1,361`` < ``87``), blanks and dashes
    sorting first, and a second click not reversing the order."""
    b = opened
    assert _column(b, "s2-t1", 1) == list(FACTS)
    b.click("#s2-t1 th:nth-child(2) button")
    assert _column(b, "s2-t1", 1) == FACTS_UP
    assert b.js("document.querySelector('#s2-t1 th:nth-child(2)').ariaSort") == "ascending"
    b.click("#s2-t1 th:nth-child(2) button")
    assert _column(b, "s2-t1", 1) == [*reversed(FACTS_UP[:5]), *FACTS_UP[5:]]
    # the "mean ± h" column sorts by its means; the rows move whole
    b.click("#s1-t1 th:nth-child(4) button")
    means = [float(c.split(" ± ")[0]) for c in _column(b, "s1-t1", 3)]
    assert means == sorted(means) and len(means) == 12
    by_row = b.js("""Array.from(document.querySelectorAll("#s1-t1 tbody tr"))
        .map(tr => tr.cells[3].textContent + "|" + tr.cells[0].textContent)""")
    assert sorted(by_row) == sorted(f"{_score(i)}|{w}" for i, (w, _, _) in enumerate(
        itertools.product(WORKLOADS, POLICIES, METRICS)))
    assert b.errors() == []


def test_filters_reduce_the_visible_rows(opened: Browser) -> None:
    """Prevents dropdown or text filters that hide nothing, hide the wrong rows, or do
    not combine (workload and metric and free text at once)."""
    b = opened
    set_value = """(() => {{ const s = document.querySelector('#s1-t1 select[data-col="{col}"]');
        s.value = {value}; s.dispatchEvent(new Event("change", {{bubbles: true}})); }})()"""
    b.js(set_value.format(col=0, value=json.dumps("lifecycle")))
    assert _visible(b, "s1-t1") == 6
    assert set(_column(b, "s1-t1", 0)) == {"lifecycle"}
    b.js(set_value.format(col=2, value=json.dumps("recall ↑")))
    assert _visible(b, "s1-t1") == 3
    b.type("#s1-t1 input[type=search]", "EBBING")
    assert _column(b, "s1-t1", 1) == ["ebbinghaus"]
    assert b.js("document.querySelector('#s1-t1 .count').textContent") == "1 of 12 rows"
    assert _visible(b, "s2-t1") == len(FACTS)  # the other table is untouched
    b.js(set_value.format(col=0, value='""'))
    assert _visible(b, "s1-t1") == 2  # recall, ebbinghaus, both workloads
    assert b.errors() == []


def test_screenshot_of_the_summary_is_a_png(opened: Browser, tmp_path: Path) -> None:
    """Prevents a page that renders blank at the top (no layout, no summary) going
    unnoticed: the summary's screenshot is a real, non-empty PNG of its size."""
    b = opened
    box = b.js("""(() => { window.scrollTo(0, 0);
        const r = document.querySelector("#summary").getBoundingClientRect();
        return [r.x, r.y + window.scrollY, r.width, r.height]; })()""")
    x, y, w, h = box
    assert w > 100 and h > 50
    shot = b.send("Page.captureScreenshot", format="png",
                  clip={"x": x, "y": y, "width": w, "height": h, "scale": 1})
    path = tmp_path / "summary.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    data = path.read_bytes()
    assert data[:8] == PNG and len(data) > 1000
    assert int.from_bytes(data[16:20], "big") == round(w)
    assert b.errors() == []
