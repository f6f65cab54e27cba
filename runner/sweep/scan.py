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
    scanner = _Scanner(grid, out, outdated, committed)
    for folder in sorted(set(cells) | set(partition_folders(out)) | set(held)):
        ids = _Ids(grid, cells.get(folder, []))
        has_shard, listed_others = scanner.shards(folder, ids)
        scanner.parts(held.get(folder, {}), ids, has_shard, listed_others)
    scanner.loose()
    return scanner.result()


class _Scanner:
    """A scan of OUT in progress: what it has found, and the stamps of the shards found
    whole."""

    def __init__(self, grid: Grid, out: Loc, outdated: set[str], committed: Stamps) -> None:
        self.out, self.outdated, self.committed = out, outdated, committed
        self.remote = is_remote(out)
        self.found = Scan(np.zeros(len(grid), dtype=bool))
        self.whole = StampsBuilder()
        self.part_ok: dict[str, bool] = {}

    def shards(self, folder: str, ids: _Ids) -> tuple[np.ndarray, set[str]]:
        """Sorts out one partition folder's shards; which of its jobs have one, and the
        ids of the shards of no job of the grid listed there (few)."""
        found = self.found
        has_shard = np.zeros(len(ids.ids), dtype=bool)
        listed_others: set[str] = set()
        for path, st in files_stat(self.out / SHARDS / folder):
            if not path.name.endswith(".parquet"):
                continue
            job_id = path.stem
            i = ids.find(job_id)
            if i is None:
                listed_others.add(job_id)
                self._other_shard(path, job_id)
                continue
            has_shard[i] = True
            stamp = (st.st_size, st.st_mtime_ns)
            if same_stamp(self.committed.get(job_id), stamp, remote=self.remote) or \
                    shard_is_valid(path, job_id):
                found.done[ids.pos[i]] = True
                self.whole.add(job_id, stamp)
            else:
                found.invalid.append((int(ids.pos[i]), job_id))
                found.bad.append(path)
        return has_shard, listed_others

    def _other_shard(self, path: Loc, job_id: str) -> None:
        """A shard of no job of the grid: superseded, stray or foreign."""
        if job_id in self.outdated:
            self.found.superseded.append(path)
        elif not shard_is_valid(path, job_id):
            self.found.stray.append(path)
        else:
            self._foreign(job_id)

    def parts(self, jobs: dict[str, Part], ids: _Ids, has_shard: np.ndarray,
              listed_others: set[str]) -> None:
        """Sorts out one partition's jobs whose rows are compacted (``jobs``: each one's
        part); a job with a shard counts by its shard."""
        found = self.found
        for job_id, part in jobs.items():
            i = ids.find(job_id)
            if i is None:
                if job_id in listed_others:
                    continue  # (its shard counts, sorted out by ``shards``)
                if job_id in self.outdated:
                    found.in_parts.append(job_id)
                else:
                    self._foreign(job_id)
            elif not has_shard[i]:
                if self._part_is_valid(part):
                    found.done[ids.pos[i]] = True
                else:
                    found.invalid.append((int(ids.pos[i]), job_id))

    def loose(self) -> None:
        """Sorts out the files outside a partition folder (``shards/`` itself, a
        workload's folder): no job's, they do not validate or are another sweep's."""
        root = self.out / SHARDS
        for loose in ["", *subfolders(root)]:
            for path, _ in files_stat(root / loose if loose else root, recursive=False):
                if path.name.endswith(".parquet"):
                    if shard_is_valid(path, path.stem):
                        self._foreign(path.stem)
                    else:
                        self.found.stray.append(path)

    def result(self) -> Scan:
        """What the scan found, its invalid jobs in grid order."""
        self.found.invalid.sort()
        self.found.whole = self.whole.build()
        return self.found

    def _part_is_valid(self, part: Part) -> bool:
        """The compacted part validates (each part is read once)."""
        if part.name not in self.part_ok:
            self.part_ok[part.name] = part_is_valid(self.out / COMPACTED / part.name, part)
        return self.part_ok[part.name]

    def _foreign(self, job_id: str) -> None:
        """Counts a job of another sweep with whole rows here."""
        self.found.foreign += 1
        self.found.first_foreign = min(self.found.first_foreign or job_id, job_id)
