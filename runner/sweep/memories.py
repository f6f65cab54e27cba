"""What a sweep's report needs to know of each memory it ran, written by the driver
(which has the registry) to ``OUT/memories.json``, so the results side never imports
the memory stack: each memory's family, the distributions it drives
(``MemoryKind.library``, whose versions every shard records) and its forgetting rule in
its adapter's words for each cell's parameters (``MemoryKind.forgets``). A rerun
with another grid adds to the file; what it held stays."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from runner.adapters import MEMORIES
from runner.results.atomic import write_json
from runner.results.layout import MEMORIES as FILE
from runner.results.where import Loc, location
from runner.spec.jobspec import JobSpec
from runner.spec.params import build

FORMAT = 1


def memory_libraries(jobs: Iterable[JobSpec]) -> tuple[str, ...]:
    """The distributions the jobs' memories drive, in first-seen order."""
    return tuple(dict.fromkeys(lib for policy in dict.fromkeys(j.policy for j in jobs)
                               for lib in MEMORIES[policy].library))


def describe(jobs: Iterable[JobSpec]) -> dict[str, dict[str, Any]]:
    """policy -> its family, libraries and rule per cell (the shards' ``params`` text)."""
    out: dict[str, dict[str, Any]] = {}
    for job in jobs:
        kind = MEMORIES[job.policy]
        entry = out.setdefault(job.policy, {"family": kind.family,
                                            "library": list(kind.library), "rules": {}})
        key = json.dumps(dict(job.params), sort_keys=True)
        if key not in entry["rules"]:
            entry["rules"][key] = kind.forgets(
                build(kind.Params, dict(job.params), "policy", job.policy))
    return out


def record_memories(out: Loc, jobs: Iterable[JobSpec]) -> None:
    """Add the jobs' memories to ``OUT/memories.json``."""
    path = location(out) / FILE
    merged: dict[str, dict[str, Any]] = (
        json.loads(path.read_text()).get("memories", {}) if path.is_file() else {})
    for policy, entry in describe(jobs).items():
        rules = {**merged.get(policy, {}).get("rules", {}), **entry["rules"]}
        merged[policy] = {**entry, "rules": rules}
    write_json(path, {"format": FORMAT, "memories": merged})
