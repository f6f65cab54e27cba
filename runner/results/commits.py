"""The commit log: which shards are known whole, so a resumed sweep need not reopen them.

```
OUT/commits/SEGMENT.json   {"format": 1, "shards": {job_id: [size, mtime_ns], ...}}
```

Whoever writes a shard (the driver, or a worker that reports back) stamps it as it
lies on disk, size and mtime, and the driver adds the stamp to the log: a segment of
many stamps at a time, each segment written whole (``runner.results.atomic``), so a
killed driver loses at most the stamps it had not flushed. Segment names sort in the
order they were written; a later stamp of a job replaces an earlier one.

Resume trusts a shard whose size and mtime are the ones its log stamp says (object
storage: mtime to the second, which is all a HEAD request reports); any other shard,
stamped or not, is validated from its Parquet footer (``runner.results.validate``) as
before. So the log only saves work: losing it, or a stale stamp, costs one footer
read, never a wrong answer, and a shard changed in place (a different size or a later
mtime) is read again. When a sweep starts it folds the log into one segment of the
shards the plan found whole, dropping the stamps of shards that are gone.
"""

from __future__ import annotations

import json
import os
import time

from runner.results.atomic import write_text
from runner.results.where import Loc, location

COMMITS = "commits"
COMMITS_FORMAT = 1
FLUSH_STAMPS = 2000  # stamps per segment while a sweep runs ...
FLUSH_SECONDS = 30.0  # ... or fewer, when this long has passed since the last one

Stamped = tuple[int, int]  # (size, mtime_ns)


def same_stamp(logged: Stamped | None, listed: Stamped, *, remote: bool) -> bool:
    """The file listed now is the one the log stamped (remote: mtime to the second)."""
    if logged is None or logged[0] != listed[0]:
        return False
    if remote:
        return logged[1] // 10**9 == listed[1] // 10**9
    return logged[1] == listed[1]


def _segments(out: Loc) -> list[Loc]:
    folder = location(out) / COMMITS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.name.endswith(".json") and not p.name.startswith("."))


def read_commits(out: Loc) -> dict[str, Stamped]:
    """job_id -> its latest logged stamp; a segment that does not read is skipped (its
    shards are validated from their footers instead)."""
    stamps: dict[str, Stamped] = {}
    for seg in _segments(out):
        try:
            doc = json.loads(seg.read_text(encoding="utf-8"))
            if doc.get("format") != COMMITS_FORMAT:
                continue
            stamps.update({str(j): (int(s[0]), int(s[1])) for j, s in doc["shards"].items()})
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            continue
    return stamps


def _segment_name() -> str:
    return f"{time.time_ns():020d}-{os.getpid()}.json"


def _write_segment(out: Loc, stamps: dict[str, Stamped]) -> Loc:
    folder = location(out) / COMMITS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _segment_name()
    while path.exists():  # (two segments within one clock tick)
        path = folder / _segment_name()
    lines = ",\n".join(f"{json.dumps(j)}: [{size}, {mtime}]"
                        for j, (size, mtime) in sorted(stamps.items()))
    write_text(path, f'{{"format": {COMMITS_FORMAT}, "shards": {{\n{lines}\n}}}}\n')
    return path


def fold_commits(out: Loc, stamps: dict[str, Stamped]) -> None:
    """Replace the log by one segment of ``stamps`` (none: remove the log, as
    ``--overwrite always`` does): written first, then the older segments removed (a
    crash in between leaves both, which read the same)."""
    old = _segments(out)
    if stamps:
        _write_segment(out, stamps)
    for seg in old:
        seg.unlink(missing_ok=True)


class CommitLog:
    """The stamps of the shards a running sweep writes, flushed as segments."""

    def __init__(self, out: Loc) -> None:
        self.out = location(out)
        self.pending: dict[str, Stamped] = {}
        self.flushed_at = time.monotonic()

    def add(self, job_id: str, stamp: Stamped) -> None:
        self.pending[job_id] = stamp
        if (len(self.pending) >= FLUSH_STAMPS
                or time.monotonic() - self.flushed_at >= FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if self.pending:
            _write_segment(self.out, self.pending)
            self.pending = {}
        self.flushed_at = time.monotonic()
