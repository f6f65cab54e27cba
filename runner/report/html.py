"""A report ``Page`` as one self-contained HTML file: inline CSS and vanilla JavaScript
(sortable, filterable tables), PNGs embedded as data URIs, nothing fetched from anywhere
(a Content-Security-Policy holds the page to that), the same bytes for the same page."""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Sequence
from html import escape
from pathlib import Path

from runner.report.page import (
    Drill,
    Image,
    Page,
    Section,
    Table,
    inline_html,
    leading_number,
    plain_text,
)
from runner.results.atomic import write_text

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_NUM = ' class="num"'

_CSS = """\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;\
--head:#f6f8fa;--hover:#eef4fb;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;\
--line:#3d444d;--head:#151b23;--hover:#1c2633;--accent:#4493f8}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:80rem;padding:1.5rem;color:var(--fg);background:var(--bg);\
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:1.7rem;margin:0 0 .5rem}
h2{font-size:1.3rem;margin:2rem 0 .5rem;padding-bottom:.2rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
a{color:var(--accent)}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--head);\
padding:.05em .3em;border-radius:4px}
#summary{padding-bottom:.5rem;border-bottom:2px solid var(--line)}
#summary nav ol{margin:.3rem 0;padding-left:1.4rem;columns:2 18rem}
.controls{display:none;flex-wrap:wrap;gap:.4rem .8rem;align-items:center;margin:.3rem 0;\
font-size:.9rem}
.js .controls{display:flex}
.controls select,.controls input{font:inherit;color:inherit;background:var(--bg);\
border:1px solid var(--line);border-radius:4px;padding:.1rem .3rem}
.controls input{min-width:14rem}
.count{color:var(--muted)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.9rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid var(--line);text-align:left;\
vertical-align:top}
th{background:var(--head);white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:hover{background:var(--hover)}
th button{font:inherit;font-weight:600;color:inherit;background:none;border:0;padding:0;\
cursor:pointer;text-align:inherit}
th button::after{content:" \\2195";opacity:.35}
th[aria-sort=ascending] button::after{content:" \\25B2";opacity:1}
th[aria-sort=descending] button::after{content:" \\25BC";opacity:1}
figure{margin:1rem 0}
figure img{max-width:100%;height:auto;border:1px solid var(--line)}
figcaption{color:var(--muted);font-size:.9rem}
details.drill{margin:.4rem 0;padding:.2rem .6rem;border:1px solid var(--line);border-radius:6px}
details.drill>summary{cursor:pointer;font-weight:600}
@media print{.controls{display:none!important}th button::after{content:none}}
"""

# Each .tbl box: header buttons sort its rows (by data-v on numeric cells, by text
# otherwise; cells without a key last, either way; ties keep the original order);
# the selects and the search box hide the rows that do not match.
_JS = """\
(function () {
  "use strict";
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };
  var blank = { "": 1, "-": 1, "\\u2014": 1, "\\u2013": 1 };
  var collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
  function text(td) { return td ? td.textContent.trim() : ""; }
  function key(td, numeric) {
    if (!td) return null;
    if (numeric) {
      var v = parseFloat(td.getAttribute("data-v"));
      return isNaN(v) ? null : v;
    }
    var t = text(td);
    return blank[t] ? null : t;
  }
  function setup(box) {
    var table = box.querySelector("table");
    if (!table || !table.tBodies.length || !table.tHead) return;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var heads = table.tHead.rows[0].cells;
    var selects = box.querySelectorAll("select[data-col]");
    var search = box.querySelector("input[type=search]");
    var count = box.querySelector(".count");
    function apply() {
      var q = search ? search.value.trim().toLowerCase() : "";
      var shown = 0;
      each(rows, function (tr) {
        var ok = true;
        each(selects, function (s) {
          if (s.value !== "" && text(tr.cells[+s.getAttribute("data-col")]) !== s.value) {
            ok = false;
          }
        });
        if (ok && q) ok = tr.textContent.toLowerCase().indexOf(q) !== -1;
        tr.hidden = !ok;
        if (ok) shown += 1;
      });
      if (count) count.textContent = shown + " of " + rows.length + " rows";
    }
    function sortBy(col, numeric, dir) {
      var keyed = rows.map(function (tr, i) {
        return { tr: tr, k: key(tr.cells[col], numeric), i: i };
      });
      keyed.sort(function (a, b) {
        if (a.k === null || b.k === null) {
          return (a.k === null) - (b.k === null) || a.i - b.i;
        }
        var c = numeric ? a.k - b.k : collator.compare(a.k, b.k);
        return c * dir || a.i - b.i;
      });
      each(keyed, function (e) { body.appendChild(e.tr); });
    }
    each(heads, function (th, col) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        each(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        sortBy(col, th.classList.contains("num"), dir);
      });
    });
    each(selects, function (s) { s.addEventListener("change", apply); });
    if (search) search.addEventListener("input", apply);
    apply();
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView();
    }
  }
  document.documentElement.classList.add("js");
  each(document.querySelectorAll(".tbl"), setup);
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
"""


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# Nothing but this page's own style and script, and images from data: URIs.
_CSP = (f"default-src 'none'; img-src data:; style-src {_sha256(_CSS)}; "
        f"script-src {_sha256(_JS)}; base-uri 'none'; form-action 'none'")


def _attr(text: str) -> str:
    """Plain text for an attribute or <title>: its Markdown markers dropped, escaped."""
    return escape(plain_text(text), quote=True)


def _png(image: Image) -> tuple[str, int, int]:
    data = image.path.read_bytes()
    if data[:8] != _PNG_SIGNATURE or len(data) < 24:
        raise ValueError(f"image {image.title!r}: {image.path} is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return base64.b64encode(data).decode("ascii"), width, height


def _figure(image: Image) -> list[str]:
    b64, width, height = _png(image)
    return ["<figure>",
            f'<img src="data:image/png;base64,{b64}" width="{width}" height="{height}" '
            f'alt="{_attr(image.title)}">',
            f"<figcaption>{inline_html(image.title)}</figcaption>",
            "</figure>"]


def _options(table: Table, col: int, numeric: bool) -> list[str]:
    values = {plain_text(row[col]).strip() for row in table.rows} - {""}

    def order(v: str) -> tuple[bool, float, str]:
        n = leading_number(v) if numeric else None
        return (n is None, n or 0.0, v)

    return [f'<option value="{_attr(v)}">{inline_html(v)}</option>'
            for v in sorted(values, key=order)]


def _table(table: Table, ident: str) -> list[str]:
    numeric = table.numeric_columns()
    name = _attr(table.title or "the table")
    lines = [f'<div class="tbl" id="{ident}">']
    if table.title:
        lines.append(f"<h3>{inline_html(table.title)}</h3>")
    lines.append('<div class="controls">')
    for f in table.filters:
        col = table.columns.index(f)
        lines += [f'<label>{inline_html(f)} <select data-col="{col}" autocomplete="off">',
                  '<option value="">all</option>', *_options(table, col, numeric[col]),
                  "</select></label>"]
    n = len(table.rows)
    lines += [f'<input type="search" placeholder="Filter rows" aria-label="Filter rows of '
              f'{name}" autocomplete="off">',
              f'<span class="count" aria-live="polite">{n} of {n} rows</span>',
              "</div>",
              '<div class="scroll"><table>',
              "<thead><tr>" + "".join(
                  f'<th scope="col"{_NUM if num else ""}><button type="button">'
                  f"{inline_html(c)}</button></th>"
                  for c, num in zip(table.columns, numeric, strict=True)) + "</tr></thead>",
              "<tbody>"]
    for row in table.rows:
        cells = []
        for cell, num in zip(row, numeric, strict=True):
            if not num:
                cells.append(f"<td>{inline_html(cell)}</td>")
                continue
            v = leading_number(cell)
            key = "" if v is None else f' data-v="{v!r}"'
            cells.append(f"<td{_NUM}{key}>{inline_html(cell)}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines += ["</tbody>", "</table></div>", "</div>"]
    return lines


def _section(section: Section, ident: str) -> list[str]:
    lines = [f'<section id="{ident}">', f"<h2>{inline_html(section.title)}</h2>"]
    lines += [f"<p>{inline_html(p)}</p>" for p in section.paragraphs]
    if section.items:
        tag = "ol" if section.numbered else "ul"
        lines += [f"<{tag}>", *(f"<li>{inline_html(i)}</li>" for i in section.items),
                  f"</{tag}>"]
    for t, table in enumerate(section.tables, 1):
        lines += _table(table, f"{ident}-t{t}")
    for image in section.images:
        lines += _figure(image)
    for drill in section.drills:
        lines += _drill(drill)
    lines.append("</section>")
    return lines


def _drill(drill: Drill) -> list[str]:
    lines = [f'<details class="drill" id="{_attr(drill.ident)}">',
             f"<summary>{inline_html(drill.title)}</summary>"]
    lines += [f"<p>{inline_html(p)}</p>" for p in drill.paragraphs]
    for t, table in enumerate(drill.tables, 1):
        lines += _table(table, f"{_attr(drill.ident)}-t{t}")
    lines.append("</details>")
    return lines


def _contents(sections: Sequence[Section]) -> list[str]:
    """One link per top-level section; the deeper sections after one (an included
    sweep's parts) folded under it, so the first screen lists the report's parts once."""
    groups: list[tuple[int, list[int]]] = []
    for i, section in enumerate(sections, 1):
        if section.level <= 2 or not groups:
            groups.append((i, []))
        else:
            groups[-1][1].append(i)
    lines = []
    for i, inner in groups:
        link = f'<a href="#s{i}">{inline_html(sections[i - 1].title)}</a>'
        if not inner:
            lines.append(f"<li>{link}</li>")
            continue
        lines += [f"<li>{link} <details><summary>{len(inner)} parts</summary><ol>",
                  *(f'<li><a href="#s{j}">{inline_html(sections[j - 1].title)}</a></li>'
                    for j in inner),
                  "</ol></details></li>"]
    return lines


def render_html(page: Page) -> str:
    """The page as one HTML document; the same page always gives the same string."""
    lines = ["<!DOCTYPE html>",
             '<html lang="en">',
             "<head>",
             '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
             f"<title>{_attr(page.title)}</title>",
             '<link rel="icon" href="data:,">',
             f"<style>{_CSS}</style>",
             "</head>",
             "<body>",
             '<header id="summary">',
             f"<h1>{inline_html(page.title)}</h1>"]
    lines += [f"<p>{inline_html(p)}</p>" for p in page.intro]
    if page.sections:
        lines += ['<nav aria-label="Contents"><ol>', *_contents(page.sections), "</ol></nav>"]
    lines += ["</header>", "<main>"]
    for i, section in enumerate(page.sections, 1):
        lines += _section(section, f"s{i}")
    lines += ["</main>", f"<script>{_JS}</script>", "</body>", "</html>", ""]
    return "\n".join(lines)


def write_html(page: Page, path: Path) -> Path:
    """Write ``render_html(page)`` to ``path`` atomically (its folder made if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render_html(page))
    return path
