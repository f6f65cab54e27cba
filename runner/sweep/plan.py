"""Planning a sweep in its folder: what is done (resume), what to set aside (shards
that do not validate; shards of plugin code that has changed), and refusing a folder
that holds another sweep, all before anything is written."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from runner.errors import FbenchError
from runner.results.layout import Layout
from runner.results.validate import shard_is_valid
from runner.spec.jobspec import JobSpec
from runner.sweep.expand import OVERWRITE, SweepSpec

SWEEP_FORMAT = 1  # sweep.json's layout: {"format", "spec", "jobs"}


def plugins(jobs: list[JobSpec]) -> dict[str, str]:
    """``{name: where its code came from}`` of every plugin the jobs run."""
    out = {}
    for job in jobs:
        roles = dict(job.code)
        if "memory" in roles:
            out[job.policy] = roles["memory"]
        if "workload" in roles:
            out[job.workload] = roles["workload"]
    return dict(sorted(out.items()))


def check_out_dir(out: Path) -> None:
    """OUT must be a writable folder (created if missing); fail before writing anything."""
    if out.exists() and not out.is_dir():
        raise FbenchError(f"--out {str(out)!r} is a file; give a folder")
    probe_parent = out if out.exists() else next(p for p in out.parents if p.exists())
    if not os.access(probe_parent, os.W_OK | os.X_OK):
        raise FbenchError(f"--out {str(out)!r} is not writable; choose another folder")


def existing_shards(out: Path) -> dict[str, Path]:
    """job_id -> the file holding the job's rows: its shard, or (after ``fbench compact``)
    the compacted part that holds it (``runner.results.layout``)."""
    return Layout(out).sources()


@dataclass
class Plan:
    jobs: list[JobSpec]
    to_run: list[JobSpec]
    skipped: int
    invalid: list[str]
    # files in OUT/shards that do not validate (this sweep's or stray): moved aside
    # to OUT/quarantine when the sweep starts, never deleted
    quarantine: list[Path] = field(default_factory=list)
    # shards of jobs whose plugin code has changed: moved to OUT/superseded (the new
    # code's jobs run instead; the old rows are never aggregated with the new)
    superseded: list[Path] = field(default_factory=list)


def _differs(old: dict[str, object], new: dict[str, object]) -> str:
    """The first field two sweep specs disagree on, shown briefly."""
    def short(v: object) -> str:
        text = json.dumps(v, sort_keys=True)
        return text if len(text) <= 40 else text[:37] + "..."

    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            there, now = (short(d.get(key, "(none)")) for d in (old, new))
            return f"{key}: {there} there, {now} now"
    return "the same spec, expanded to other jobs by another fbench"


def check_same_sweep(out: Path, spec: SweepSpec, jobs: list[JobSpec]) -> list[JobSpec]:
    """The jobs of the sweep recorded in OUT (``sweep.json``; none if there is none).

    A folder holding another sweep (an older format, or a spec whose jobs are not all
    among this one's) is refused before anything is written; ``--overwrite always``
    replaces it. A sweep that grows one (more seeds, another policy) resumes in it:
    every job it held is still one of its jobs, up to the plugin code that runs it
    (a job whose plugin changed is the same cell, run again)."""
    path = Path(out) / "sweep.json"
    if not path.is_file():
        return []
    fix = "use a new --out, or --overwrite always to replace its shards"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        old = doc["spec"]
        fmt = doc.get("format", SWEEP_FORMAT)  # sweep.json before "format" was format 1
        if not isinstance(old, dict):
            raise TypeError("spec is not a table")
        old_jobs = [JobSpec.from_dict(j) for j in doc["jobs"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FbenchError(f"{path} is not a sweep record fbench can read ({exc}); {fix}"
                          ) from None
    if fmt != SWEEP_FORMAT:
        raise FbenchError(f"{path} is from another fbench (sweep format {fmt!r}, this one "
                          f"writes {SWEEP_FORMAT}); {fix}")
    new = json.loads(json.dumps(spec.to_dict()))
    cells = {j.without_code().job_id for j in jobs}
    if not {j.without_code().job_id for j in old_jobs} <= cells:
        raise FbenchError(f"{str(out)!r} holds another sweep ({_differs(old, new)}); {fix}")
    return old_jobs


def plan(jobs: list[JobSpec], out: Path, overwrite: str, spec: SweepSpec | None = None
         ) -> Plan:
    """Which jobs to run: resume skips jobs whose shard exists and validates; a shard
    that does not validate (corrupt, truncated, empty, another job's or a foreign
    file) is quarantined and its job rerun."""
    if overwrite not in OVERWRITE:
        raise FbenchError(f"--overwrite {overwrite!r} is not one of {', '.join(OVERWRITE)}")
    old_jobs = check_same_sweep(out, spec, jobs) if spec is not None and overwrite != "always" \
        else []
    layout = Layout(out)
    have = layout.sources()
    ids = {j.job_id for j in jobs}
    # jobs of the recorded sweep whose plugin code has changed since: set aside
    outdated = {j.job_id for j in old_jobs if j.job_id not in ids and j.job_id in have}
    in_parts = sorted(outdated - set(layout.raw))
    if in_parts:
        raise FbenchError(
            f"{len(in_parts)} job(s) whose plugin changed are in compacted parts of "
            f"{str(out)!r} (e.g. {in_parts[0]}); rerun with --overwrite always")
    superseded = sorted(layout.raw[j] for j in outdated)
    stray = [p for j, p in layout.raw.items()
             if j not in ids and j not in outdated and not shard_is_valid(p, j)]
    foreign = sorted(set(have) - ids - outdated - {p.stem for p in stray})
    if foreign and overwrite != "always":
        raise FbenchError(
            f"{str(out)!r} holds {len(foreign)} shard(s) of another sweep (e.g. {foreign[0]}); "
            "use a new --out, or --overwrite always to replace them"
        )
    if overwrite == "always":
        return Plan(jobs, list(jobs), 0, [])
    to_run, invalid = [], []
    for job in jobs:
        if job.job_id not in have:
            to_run.append(job)
        elif not layout.is_valid(job.job_id):
            invalid.append(job.job_id)
            to_run.append(job)
    if (invalid or stray) and overwrite == "never":
        first = invalid[0] if invalid else stray[0].name
        raise FbenchError(
            f"{len(invalid) + len(stray)} shard(s) in {str(out)!r} do not validate (e.g. "
            f"{first}); rerun with --overwrite failed to quarantine them and rerun their jobs"
        )
    bad = [layout.raw[j] for j in invalid if j in layout.raw] + stray
    return Plan(jobs, to_run, len(jobs) - len(to_run), invalid, sorted(bad), superseded)


