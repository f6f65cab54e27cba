"""The report's golden cases: three small sweeps (``tests/fixtures/report_cases/*.toml``)
run inline, and their reports, so that a change to the results side that alters a byte
of RESULTS.md, a number of summary.parquet or a line of comparisons.csv is caught.

``build(root)`` runs the sweeps into ``root`` and writes the reports; ``outputs(root)``
names each golden file and what the build made for it. ``make golden`` rewrites
``tests/golden/reports`` from the current code (``tests/regen_golden.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

CASES_DIR = Path(__file__).parent / "fixtures" / "report_cases"
GOLDEN_DIR = Path(__file__).parent / "golden" / "reports"
SWEEPS = ("seeds", "frontier", "scaling")
# Each report: the folder it is written for, the folders it includes, and whether the
# calibration (made by `fbench calibrate`, 3 seeds) is its Headroom section.
REPORTS = {"seeds": ((), False), "frontier": ((), False), "scaling": (("frontier",), True)}
_DATA_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")
_STYLE_OR_SCRIPT = re.compile(r"<(style|script)>.*?</\1>", re.DOTALL)


def _fbench(*args: str) -> None:
    from runner.cli.app import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (args, result.output, repr(result.exception))


# What the shards record of the code and machine that ran them, pinned.
PROVENANCE = {"git_commit": "0" * 40, "fbench_version": "0.1.0",
              "versions": '{"fbench": "0.1.0", "numpy": "2", "pyarrow": "20", "python": "3"}'}


def pin_run_facts(out: Path) -> None:
    """Rewrite each shard of ``out`` with what a rerun on another commit or machine
    changes pinned: its timing metrics (wall-clock seconds and query milliseconds) set
    from the job's horizon and each checkpoint, and its provenance (``PROVENANCE``), so
    that every file a report makes has the same bytes on every run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from runner.metrics import METRICS
    from runner.results.shard import write_shard

    timing = [m.name for m in METRICS.values() if m.timing]
    for path in sorted((out / "shards").rglob("*.parquet")):
        table = pq.read_table(path)
        n = table.num_rows
        horizon = table.column("horizon")[0].as_py()
        for name in timing:
            i = table.schema.get_field_index(name)
            values = [horizon * 1e-4 * (c + 1) for c in range(n)]
            table = table.set_column(i, table.schema.field(i), pa.array(values, pa.float64()))
        for name, value in PROVENANCE.items():
            i = table.schema.get_field_index(name)
            table = table.set_column(i, table.schema.field(i), pa.array([value] * n, pa.string()))
        write_shard(path, table)


def build(root: Path) -> None:
    """Run the three sweeps into ``root/NAME`` (what a rerun elsewhere changes pinned:
    ``pin_run_facts``) and write each one's report (Markdown and HTML), the calibration
    into ``root/calibration``."""
    for name in SWEEPS:
        _fbench("sweep", "--config", str(CASES_DIR / f"{name}.toml"), "--out",
                str(root / name), "--executor", "inline", "--no-report", "--quiet")
        pin_run_facts(root / name)
    (root / "calibration").mkdir(exist_ok=True)
    _fbench("calibrate", "contradiction", "--seeds", "3", "--horizon", "0.1x", "--quiet",
            "--json", str(root / "calibration" / "contradiction.json"))
    for name, (include, calibrated) in REPORTS.items():
        args = ["report", str(root / name), "--html"]
        for other in include:
            args += ["--include", str(root / other)]
        if calibrated:
            args += ["--calibration", str(root / "calibration")]
        _fbench(*args)


def page_text(html: str) -> str:
    """The HTML page's content: each embedded PNG's bytes left out (a plot's pixels are
    the plotting library's), and the page's style sheet and script (the same on every
    page: ``runner.report.html``'s)."""
    html = _STYLE_OR_SCRIPT.sub(lambda m: f"<{m.group(1)}>…</{m.group(1)}>", html)
    return _DATA_URI.sub("data:image/png;base64,…", html)


def outputs(root: Path) -> dict[str, Path]:
    """Golden file name (relative to ``GOLDEN_DIR``) -> the file the build made."""
    found = {}
    for name in SWEEPS:
        for file in ("RESULTS.md", "RESULTS.html", "summary.parquet", "comparisons.csv"):
            found[f"{name}/{file}"] = root / name / file
    return found


def untimed(report: Path) -> str:
    """A report without its Cost section (timing: two runs of a job differ in it)."""
    text = report.read_text()
    start = text.index("## Cost")
    return text[:start] + text[text.index("\n## ", start + 1):]
