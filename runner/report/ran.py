"""RESULTS.md's account of what ran: the report's own command (to regenerate it), the
"What ran" paragraph, and the Versions table, each from what the shards recorded
(``runner.report.markdown`` places them)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from runner.analysis import stats
from runner.report.blocks import Block, Heading, Paragraph, count, span, table
from runner.report.findings import ReportIndex
from runner.results.where import ArrowPath, Loc, is_uri


def report_command(out: Loc, include: Sequence[str | Loc], output: Path,
             calibration: Path | None = None) -> str:
    """The report's own command, with paths relative to the report's folder (the sweeps
    themselves: each folder's sweep.json holds its spec)."""
    def rel(p: str | Loc) -> str:
        if isinstance(p, ArrowPath) or (isinstance(p, str) and is_uri(p)):
            return str(p)
        return Path(os.path.relpath(Path(p).resolve(), output.parent.resolve())).as_posix()

    to = (f"--report-dir {rel(output.parent)}" if isinstance(out, ArrowPath)
          else f"--output {output.name}")
    parts = ["fbench report", rel(out), *(f"--include {rel(i)}" for i in include), to,
             *([f"--calibration {rel(calibration)}"] if calibration else [])]
    return " ".join(parts)


def what_ran(idx: ReportIndex, shards: pa.Table, command: str | None = None) -> list[Block]:
    """The "What ran" section: jobs, cells, settings, memories and seeds, the fbench
    versions and commits, the baseline, and (``command``) how to regenerate the report."""
    n_jobs = len(set(shards.column("job_id").to_pylist()))
    ns = [idx.n_jobs(c) for c in idx.cells]
    workloads = sorted({s[0] for s in idx.settings()})
    policies = sorted({c[3] for c in idx.cells})
    versions = sorted({v for v in shards.column("fbench_version").to_pylist() if v})
    commits = sorted({c[:12] for c in shards.column("git_commit").to_pylist() if c})
    small = min(ns) < stats.SMALL_N
    return [Heading(2, "What ran"), Paragraph(
        f"{count(n_jobs, 'job')}: {count(len(idx.cells), 'cell')} in "
        f"{count(len(idx.settings()), 'setting')} ({', '.join(workloads)}), "
        f"{len(policies)} {'memory' if len(policies) == 1 else 'memories'}, n = "
        f"{span(ns)} seeds per cell; fbench "
        f"{', '.join(versions) or '?'} at {', '.join(commits) or '?'}. Baseline: "
        f"`{idx.baseline}`."
        + (f" **Below {stats.SMALL_N} seeds the intervals are wide and the tests weak**"
           " (at 5 seeds a rate's interval spans most of [0, 1], and no two-sided "
           "sign-flip p can go below 0.0625)." if small else "")
        + (f" Regenerate: rerun each sweep (its spec is its folder's `sweep.json`), then "
           f"`{command}`." if command else ""))]


def cost_section(shards: pa.Table) -> list[Block]:
    """Each memory's cost per workload, from its jobs' final rows: the median seconds a
    job and the mean milliseconds a query (timing: the machine's, never compared)."""
    cols = [shards.column(c).to_pylist() for c in ("policy", "workload", "wall_s",
                                                   "query_ms_mean")]
    seen: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for policy, workload, wall, ms in zip(*cols, strict=True):
        walls, mss = seen.setdefault((policy, workload), ([], []))
        if wall is not None:
            walls.append(wall)
        if ms is not None:
            mss.append(ms)
    workloads = sorted({w for _, w in seen})
    rows = []
    for policy in sorted({p for p, _ in seen}):
        cells = []
        for w in workloads:
            walls, mss = seen.get((policy, w), ([], []))
            cells.append(f"{float(np.median(walls)):.3g} s · {float(np.mean(mss)):.3g} ms"
                         if walls and mss else "—")
        rows.append([policy, *cells])
    return [Heading(2, "Cost"),
            Paragraph("Per memory and workload: the median seconds a job and the mean "
                      "milliseconds a query, over its jobs of every setting. Timing, as this "
                      "machine measured it: not deterministic, never compared."),
            table(["memory", *workloads], rows, "l" + "r" * len(workloads))]


def versions_section(shards: pa.Table) -> list[Block]:
    """The Versions table: one row per distinct provenance the shards recorded."""
    cols = [shards.column(c).to_pylist() for c in ("job_id", "fbench_version", "git_commit",
                                                   "versions")]
    jobs: dict[tuple[str, str, str], set[str]] = {}
    for job, fb, commit, libs in zip(*cols, strict=True):
        jobs.setdefault((fb or "", commit or "", libs or "{}"), set()).add(job)
    libs = sorted({k for _, _, v in jobs for k in json.loads(v)} - {"fbench"})
    rows = []
    for (fb, commit, v), ids in sorted(jobs.items()):
        lv = json.loads(v)
        rows.append([fb or "—", commit[:12] or "—", *(str(lv.get(lib, "—")) for lib in libs),
                     str(len(ids))])
    return [Heading(2, "Versions"),
            Paragraph("As recorded in the shards (one row per distinct provenance)."),
            table(["fbench", "git commit", *libs, "jobs"], rows, "ll" + "l" * len(libs) + "r")]
