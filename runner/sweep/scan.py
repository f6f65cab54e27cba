"""Resume's scan of OUT: which of a grid's jobs are done there, and what else OUT holds,
read as a stream.

OUT is read one partition folder (``shards/workload=W/policy=P``) at a time, its files
as they are listed (one ``os.scandir``; a remote OUT's one listing of the folder).
What the scan holds is arrays, never an object per shard: a byte per job (done or
not), the commit log's stamps (``runner.results.commits.Stamps``, ~32 bytes a shard),
and one partition's job ids and positions (24 bytes a job), besides the files to set
aside (the exceptions: shards that do not validate, of another sweep or of changed
plugin code) and the compaction index (``runner.results.layout``, read whole).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from runner.results.commits import Stamps, StampsBuilder, read_commits, same_stamp
from runner.results.layout import (
    COMPACTED,
    SHARDS,
    Part,
    by_partition,
    part_is_valid,
    partition_folders,
    read_index,
)
from runner.results.shard import partition
from runner.results.validate import shard_is_valid
from runner.results.where import Loc, files_stat, is_remote, location, subfolders
from runner.sweep.grid import Grid


@dataclass
class Scan:
    """What resume found in OUT for a grid."""

    done: np.ndarray  # a bool per job of the grid: its rows in OUT are whole
    invalid: list[tuple[int, str]] = field(default_factory=list)  # (position, job id)
    bad: list[Loc] = field(default_factory=list)  # those jobs' shards (a part stays)
    stray: list[Loc] = field(default_factory=list)  # no job's of this grid; do not validate
    superseded: list[Loc] = field(default_factory=list)  # shards of changed plugin code
    in_parts: list[str] = field(default_factory=list)  # ... of which the rows are compacted
    foreign: int = 0  # jobs of another sweep with whole rows here
    first_foreign: str = ""
    whole: Stamps = field(default_factory=Stamps.empty)  # the shards found whole


class _Ids:
    """One partition's job ids, sorted, and their positions in the grid."""

    def __init__(self, grid: Grid, cells: list[int]) -> None:
        raw, pos = bytearray(), array("q")
        for c in cells:
            for p, job in grid.positions(c):
                raw += job.job_id.encode()
                pos.append(p)
        ids = np.frombuffer(bytes(raw), dtype="S16") if raw else np.array([], "S16")
        order = np.argsort(ids, kind="stable")
        self.ids, self.pos = ids[order], np.frombuffer(pos, dtype=np.int64)[order]

    def find(self, job_id: str) -> int | None:
        """The index of ``job_id`` here, or None."""
        key = job_id.encode()
        if len(key) != 16:
            return None
        i = int(np.searchsorted(self.ids, key))
        return i if i < len(self.ids) and self.ids[i] == key else None


def scan(grid: Grid, out: Loc, outdated: set[str]) -> Scan:
    """Each job of ``grid`` done in OUT or not (``Scan.done``): its shard is stamped in
    the commit log as it lies, or validates from its footer, or (no shard) its rows are
    in a committed compacted part that validates. Files of no job of the grid are
    sorted out as ``outdated`` (the ids of jobs whose plugin code changed), stray (they
    do not validate) or foreign (another sweep's)."""
    out = location(out)
    committed, parts = read_commits(out), read_index(out)
    held = by_partition(parts)
    cells = {partition(w, p): c for (w, p), c in grid.partitions().items()}
    remote = is_remote(out)
    found = Scan(np.zeros(len(grid), dtype=bool))
    whole = StampsBuilder()
    part_ok: dict[str, bool] = {}

    def ok(part: Part) -> bool:
        if part.name not in part_ok:
            part_ok[part.name] = part_is_valid(out / COMPACTED / part.name, part)
        return part_ok[part.name]

    def other(job_id: str) -> None:
        found.foreign += 1
        found.first_foreign = min(found.first_foreign or job_id, job_id)

    for folder in sorted(set(cells) | set(partition_folders(out)) | set(held)):
        ids = _Ids(grid, cells.get(folder, []))
        has_shard = np.zeros(len(ids.ids), dtype=bool)
        listed_others: set[str] = set()  # (shards of no job of the grid: few)
        for path, st in files_stat(out / SHARDS / folder):
            if not path.name.endswith(".parquet"):
                continue
            job_id = path.stem
            i = ids.find(job_id)
            if i is None:
                listed_others.add(job_id)
                if job_id in outdated:
                    found.superseded.append(path)
                elif not shard_is_valid(path, job_id):
                    found.stray.append(path)
                else:
                    other(job_id)
                continue
            has_shard[i] = True
            stamp = (st.st_size, st.st_mtime_ns)
            if same_stamp(committed.get(job_id), stamp, remote=remote) or \
                    shard_is_valid(path, job_id):
                found.done[ids.pos[i]] = True
                whole.add(job_id, stamp)
            else:
                found.invalid.append((int(ids.pos[i]), job_id))
                found.bad.append(path)
        for job_id, part in held.get(folder, {}).items():  # rows compacted, no shard
            i = ids.find(job_id)
            if i is None:
                if job_id in listed_others:
                    continue  # (its shard counts, sorted out above)
                if job_id in outdated:
                    found.in_parts.append(job_id)
                else:
                    other(job_id)
            elif not has_shard[i]:
                if ok(part):
                    found.done[ids.pos[i]] = True
                else:
                    found.invalid.append((int(ids.pos[i]), job_id))
    # files outside a partition folder (``shards/`` itself, a workload's folder) are no
    # job's: they do not validate, or are another sweep's
    root = out / SHARDS
    for loose in ["", *subfolders(root)]:
        for path, _ in files_stat(root / loose if loose else root, recursive=False):
            if path.name.endswith(".parquet"):
                if shard_is_valid(path, path.stem):
                    other(path.stem)
                else:
                    found.stray.append(path)
    found.invalid.sort()
    found.whole = whole.build()
    return found
