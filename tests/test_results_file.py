"""The repository's RESULTS.md (``make results``) leads with the answer and stays readable."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from runner.report.claims import CLAIMS
from runner.report.reproduction import PUBLISHED

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "RESULTS.md"
SHIPPED = ROOT / "published"  # the published sweeps and calibration


def test_results_md_is_small_enough_to_read() -> None:
    """Prevents the 829 KB, 4,511-line report a reviewer could not read: ≤ 150 KB."""
    assert RESULTS.stat().st_size <= 150_000


def test_the_board_leads_then_findings_reproduction_and_a_figure() -> None:
    """Prevents a buried answer: the report opens with the board, and the 100 lines after
    it hold what ran and its cost, the numbered findings (every seed's claim with its
    verdict), the whole reproduction table and one figure."""
    lines = RESULTS.read_text().splitlines()
    assert next(ln for ln in lines if ln.startswith("## ")) == "## The board"
    head = lines[lines.index("## What ran"):][:100]
    text = "\n".join(head)
    assert "## Findings" in text
    for claim in CLAIMS:
        assert re.search(rf"\*\*{re.escape(claim.id)} \([^)]*\) (held|not held|inconclusive|"
                         r"not run)\.\*\*", text), claim.id
    start = head.index("## Reproduction of the seeds")
    while not head[start].startswith("|"):
        start += 1
    end = start
    while end < len(head) and head[end].startswith("|"):
        end += 1
    assert end - start == 2 + len(PUBLISHED)  # header, rule, every published number
    assert end < len(head)  # the table ends on the first screen
    assert any(ln.startswith("![") for ln in head[end:])  # and the headline figure follows


def test_full_tables_and_the_web_page_are_committed_beside_it() -> None:
    """Prevents a trimmed report whose full tables are nowhere: every metric of every cell
    (summary.parquet) and every comparison with its p and q (comparisons.csv) per
    published sweep, and every plot RESULTS.md links committed beside them."""
    for sweep in ("results", "incumbents", "incumbents-bounded", "incumbents-more", "frontier",
                  "outside-sweep"):
        for name in ("summary.parquet", "comparisons.csv", "finals.parquet"):
            path = SHIPPED / sweep / name
            assert path.is_file() and path.stat().st_size > 1000, path
    header = (SHIPPED / "results" / "comparisons.csv").read_text().splitlines()[0]
    for col in ("p", "p_holm", "q_bh", "verdict", "family", "embedder"):
        assert f'"{col}"' in header.split(","), col
    links = re.findall(r"\]\(([^)#]+)\)", RESULTS.read_text())
    assert links and all(link.startswith("published/") for link in links)
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_web_page_is_generated_not_committed() -> None:
    """Prevents RESULTS.html (a few MB a regeneration, every plot a second time) from being
    committed again: git ignores it, and the report writes it on request."""
    ignored = subprocess.run(["git", "check-ignore", "-q", "RESULTS.html"], cwd=ROOT,
                             check=False).returncode
    assert ignored == 0


def test_headroom_covers_every_default_workload() -> None:
    """Prevents a Headroom section that skips a workload (or a calibration left out of
    calibration/): each of fbench's workloads has its row, from its committed JSON."""
    from workloads import current_builtin_names

    section = RESULTS.read_text().split("## Headroom", 1)[1].split("\n## ", 1)[0]
    for name in current_builtin_names():
        assert f"| `{name}` | 20 |" in section, name
        assert (SHIPPED / "calibration" / f"{name}.json").is_file(), name


def test_findings_explain_learned_forgets_operating_point() -> None:
    """Prevents the learned policy's distance from the seed's 198 entries going unexplained
    (issue: README claimed the seed's table reproduced): the Findings give its size and
    false-forget from the committed summary, split by the kind of the slot's last write."""
    import pyarrow.parquet as pq

    rows = pq.read_table(SHIPPED / "results" / "summary.parquet").to_pylist()

    def ci(metric: str, digits: int) -> str:
        (r,) = [r for r in rows if r["workload"] == "contradiction" and r["params"] == "{}"
                and r["policy"] == "learned_forget" and r["metric"] == metric]
        return f"{r['mean']:.{digits}f} [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]"

    findings = RESULTS.read_text().split("## Findings", 1)[1].split("\n## ", 1)[0]
    (line,) = [ln for ln in findings.splitlines() if "learned_forget's operating point" in ln]
    assert f"{ci('final_size', 0)} entries" in line
    assert f"false-forget, {ci('false_forget_rate', 3)}" in line
    assert f"{ci('false_forget_rate_hard', 3)} on hard-updated slots" in line
