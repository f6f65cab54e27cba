"""The web page's drill-down: for a sweep run with ``--samples``, each cell's evidence
(``runner.results.samples``, told by ``runner.analysis.explain``) as a folded part of an
"Evidence" section, which the cells of the primary comparisons link to.

The page stays self-contained and bounded: per cell, the evidence of its
``SEEDS_SHOWN`` lowest seeds, and of each their ``SHOWN`` worst queries and first
``SHOWN`` false forgets, besides the deletions of every shown seed by reason. The
section says so; ``fbench explain`` tells any job's whole story.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from runner.analysis import explain as ex
from runner.report.page import Drill, Page, Section, Table
from runner.results.samples import DELETIONS_FILE, QUERIES_FILE, SAMPLES, samples_problem
from runner.results.shard import partition
from runner.results.tables import variant_label
from runner.results.where import Loc, arrow_source

SEEDS_SHOWN = 3
SHOWN = 8
CellKey = tuple[str, str, int, int, str, str]  # sweep, workload, horizon, k, policy, params


def anchor(key: CellKey) -> str:
    """The cell's evidence's id on the page."""
    return "ev-" + hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class CellEvidence:
    """One cell's shown evidence: its key, the seeds shown and the rows of its tables."""

    key: CellKey
    seeds: tuple[int, ...]
    questions: int
    failed: int
    queries: tuple[tuple[str, ...], ...]
    forgets: tuple[tuple[str, ...], ...]
    reasons: tuple[tuple[str, ...], ...]


def sweep_evidence(out: Loc, final: pa.Table, sweep: str) -> list[CellEvidence]:
    """The evidence of each cell of a sweep whose samples are in ``OUT/samples`` (none
    when it has none); ``final``: its final rows (coordinates, seed, job_id)."""
    if not (out / SAMPLES).is_dir():
        return []
    cols = ["workload", "horizon", "k", "policy", "params", "seed", "job_id"]
    jobs: dict[CellKey, list[tuple[int, str]]] = {}
    for r in final.select(cols).to_pylist():
        key = (sweep, r["workload"], r["horizon"], r["k"], r["policy"], r["params"])
        jobs.setdefault(key, []).append((r["seed"], r["job_id"]))
    found = []
    for key in sorted(jobs):
        cell = _cell(out, key, sorted(jobs[key]))
        if cell is not None:
            found.append(cell)
    return found


def _read(out: Loc, key: CellKey, job: str) -> tuple[pa.Table, pa.Table] | None:
    folder = out / SAMPLES / partition(key[1], key[4])
    paths = [folder / f"{job}.{kind}" for kind in (QUERIES_FILE, DELETIONS_FILE)]
    if any(not p.is_file() or samples_problem(p, kind, job) for p, kind in
           zip(paths, (QUERIES_FILE, DELETIONS_FILE), strict=True)):
        return None
    q, d = (pq.read_table(arrow_source(p)) for p in paths)
    return q, d


def _cell(out: Loc, key: CellKey, seeds: list[tuple[int, str]]) -> CellEvidence | None:
    shown: list[int] = []
    queries, forgets, reasons = [], [], []
    questions = failed = 0
    for seed, job in seeds:
        if len(shown) == SEEDS_SHOWN:
            break
        tables = _read(out, key, job)
        if tables is None:
            continue
        q, d = tables
        shown.append(seed)
        questions += q.num_rows
        failed += int(ex.failed(q).sum())
        queries += [_query_row(seed, w) for w in ex.worst_queries(q, SHOWN)]
        forgets += [_forget_row(seed, f) for f in ex.false_forgets(d, SHOWN)]
        reasons += [(str(seed), reason, str(c["removed"]), str(c["still_current"]))
                    for reason, c in ex.by_reason(d).items()]
    if not shown:
        return None
    return CellEvidence(key, tuple(shown), questions, failed, tuple(queries), tuple(forgets),
                        tuple(reasons))


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _query_row(seed: int, w: ex.WorstQuery) -> tuple[str, ...]:
    got = "; ".join(f"{i.rank}. [{i.label}] {i.text} (age {_fmt(i.age)}, score "
                    f"{_fmt(i.score)})" for i in w.items) or "nothing"
    return (str(seed), str(w.t), w.category, w.text, w.value, str(w.stale_above),
            "yes" if w.forgotten else "no", got)


def _forget_row(seed: int, f: dict[str, Any]) -> tuple[str, ...]:
    return (str(seed), str(f["t"]), f["category"], f["text"], f["reason"], _fmt(f["score"]),
            _fmt(f["age"]), "never" if f["next_asked_t"] is None else str(f["next_asked_t"]))


def _title(key: CellKey) -> str:
    sweep, workload, horizon, k, policy, params = key
    return f"{sweep} · {workload} · horizon {horizon} · k={k} · {variant_label(policy, params)}"


def _drill(cell: CellEvidence) -> Drill:
    seeds = ", ".join(map(str, cell.seeds))
    return Drill(anchor(cell.key), _title(cell.key), (
        f"Seeds {seeds}: {cell.failed} of {cell.questions} questions failed (a stale "
        "value in the top-k, or the current value missing).",), (
        Table("Worst queries", ("seed", "t", "category", "question", "current value",
                                "stale above", "current deleted", "returned"),
              cell.queries, ("seed", "category"),
              (True, True, False, False, False, True, False, False)),
        Table("False forgets", ("seed", "t", "kind", "fact", "reason", "score", "age",
                                "next asked"), cell.forgets, ("seed", "reason"),
              (True, True, False, False, False, True, True, True)),
        Table("Deleted, by reason", ("seed", "reason", "removed", "of them current"),
              cell.reasons, ("seed", "reason"), (True, False, True, True))))


def with_evidence(page: Page, cells: Sequence[CellEvidence]) -> Page:
    """The page with an Evidence section: an index of the cells, each one's evidence
    folded below it (the page itself when no sweep has samples)."""
    if not cells:
        return page
    index = tuple((c.key[0], c.key[1], str(c.key[2]),
                   f"[{variant_label(c.key[4], c.key[5])}](#{anchor(c.key)})",
                   ", ".join(map(str, c.seeds)), str(c.failed), str(c.questions))
                  for c in cells)
    section = Section("Evidence", (
        f"Why each cell scored as it did, from the samples its sweep recorded: for each "
        f"cell, its {SEEDS_SHOWN} lowest seeds, and of each their {SHOWN} worst queries "
        f"and first {SHOWN} false forgets (a capped sample: `fbench explain OUT --policy "
        "P --seed S` tells any job's whole story).",),
        tables=(Table("Cells with evidence", ("sweep", "workload", "horizon", "policy",
                                              "seeds", "failed", "questions"), index,
                      ("sweep", "workload")),),
        drills=tuple(_drill(c) for c in cells))
    return replace(page, sections=(*page.sections, section))
