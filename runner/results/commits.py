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
import re
import time
from array import array
from collections.abc import Iterator, Mapping

import numpy as np

from runner.results.atomic import write_chunks
from runner.results.where import Loc, location, text_lines

COMMITS = "commits"
COMMITS_FORMAT = 1
FLUSH_STAMPS = 2000  # stamps per segment while a sweep runs ...
FLUSH_SECONDS = 30.0  # ... or fewer, when this long has passed since the last one

Stamped = tuple[int, int]  # (size, mtime_ns)
_HEAD = f'{{"format": {COMMITS_FORMAT}, "shards": {{'
_LINE = re.compile(r'"([0-9A-Za-z_.-]+)": \[(\d+), (\d+)\],?')


def same_stamp(logged: Stamped | None, listed: Stamped, *, remote: bool) -> bool:
    """The file listed now is the one the log stamped (remote: mtime to the second)."""
    if logged is None or logged[0] != listed[0]:
        return False
    if remote:
        return logged[1] // 10**9 == listed[1] // 10**9
    return logged[1] == listed[1]


class Stamps:
    """job_id -> (size, mtime_ns), held as three arrays sorted by id (about 32 bytes a
    shard, no object per shard): a million stamps are ~32 MB."""

    def __init__(self, ids: np.ndarray, sizes: np.ndarray, mtimes: np.ndarray) -> None:
        self.ids, self.sizes, self.mtimes = ids, sizes, mtimes

    @classmethod
    def empty(cls) -> Stamps:
        return cls(np.array([], dtype="S1"), np.array([], np.int64), np.array([], np.int64))

    @classmethod
    def latest(cls, parts: list[Stamps]) -> Stamps:
        """One table of ``parts``; where a job is in several, the last part's stamp."""
        if not parts:
            return cls.empty()
        ids = np.concatenate([p.ids for p in parts])
        sizes = np.concatenate([p.sizes for p in parts])
        mtimes = np.concatenate([p.mtimes for p in parts])
        # np.unique keeps each id's first position: look from the end
        _, first = np.unique(ids[::-1], return_index=True)
        keep = np.sort(len(ids) - 1 - first)
        order = np.argsort(ids[keep], kind="stable")
        return cls(ids[keep][order], sizes[keep][order], mtimes[keep][order])

    def __len__(self) -> int:
        return len(self.ids)

    def get(self, job_id: str) -> Stamped | None:
        key = job_id.encode()
        if len(key) > self.ids.dtype.itemsize:
            return None
        i = int(np.searchsorted(self.ids, key))
        if i < len(self.ids) and self.ids[i] == key:
            return int(self.sizes[i]), int(self.mtimes[i])
        return None

    def items(self) -> Iterator[tuple[str, Stamped]]:
        for j, size, mtime in zip(self.ids, self.sizes, self.mtimes, strict=True):
            yield j.decode(), (int(size), int(mtime))

    def as_dict(self) -> dict[str, Stamped]:
        return dict(self.items())


class StampsBuilder:
    """Stamps added one at a time, turned into arrays every ``CHUNK`` (so a million
    stamps never are a million objects at once) and into one table by ``build``."""

    CHUNK = 65536

    def __init__(self) -> None:
        self.chunks: list[Stamps] = []
        self.ids: list[bytes] = []
        self.sizes, self.mtimes = array("q"), array("q")

    def add(self, job_id: str, stamp: Stamped) -> None:
        self.ids.append(job_id.encode())
        self.sizes.append(stamp[0])
        self.mtimes.append(stamp[1])
        if len(self.ids) >= self.CHUNK:
            self._chunk()

    def _chunk(self) -> None:
        if self.ids:
            self.chunks.append(Stamps(np.array(self.ids, dtype="S"),
                                      np.frombuffer(self.sizes, np.int64).copy(),
                                      np.frombuffer(self.mtimes, np.int64).copy()))
        self.ids, self.sizes, self.mtimes = [], array("q"), array("q")

    def build(self) -> Stamps:
        self._chunk()
        return Stamps.latest(self.chunks)


def of(stamps: Mapping[str, Stamped]) -> Stamps:
    built = StampsBuilder()
    for job_id, stamp in stamps.items():
        built.add(job_id, stamp)
    return built.build()


def _segments(out: Loc) -> list[Loc]:
    folder = location(out) / COMMITS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.name.endswith(".json") and not p.name.startswith("."))


def _read_segment(seg: Loc) -> Stamps:
    """A segment's stamps: line by line as this module writes them, else decoded whole;
    ``ValueError`` (and the like) if it is not a segment of this format."""
    lines = text_lines(seg)
    head = next(lines, "").rstrip("\n")
    built = StampsBuilder()
    if head != _HEAD:
        doc = json.loads(head + "\n" + "".join(lines))
        if doc.get("format") != COMMITS_FORMAT:
            raise ValueError(f"format {doc.get('format')!r}")
        for j, s in doc["shards"].items():
            built.add(str(j), (int(s[0]), int(s[1])))
        return built.build()
    for line in lines:
        text = line.strip()
        if text == "}}":
            return built.build()
        if text:
            m = _LINE.fullmatch(text)
            if m is None:
                raise ValueError(f"not a stamp: {text[:40]!r}")
            built.add(m[1], (int(m[2]), int(m[3])))
    raise ValueError("ends before its stamps do")


def read_commits(out: Loc) -> Stamps:
    """job_id -> its latest logged stamp; a segment that does not read is skipped (its
    shards are validated from their footers instead)."""
    parts = []
    for seg in _segments(out):
        try:
            parts.append(_read_segment(seg))
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            continue
    return Stamps.latest(parts)


def _segment_name() -> str:
    return f"{time.time_ns():020d}-{os.getpid()}.json"


def _write_segment(out: Loc, stamps: Stamps) -> Loc:
    folder = location(out) / COMMITS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _segment_name()
    while path.exists():  # (two segments within one clock tick)
        path = folder / _segment_name()

    def chunks() -> Iterator[str]:
        yield _HEAD
        for i, (j, (size, mtime)) in enumerate(stamps.items()):
            yield f'{"," if i else ""}\n{json.dumps(j)}: [{size}, {mtime}]'
        yield "\n}}\n"

    write_chunks(path, chunks())
    return path


def fold_commits(out: Loc, stamps: Stamps) -> None:
    """Replace the log by one segment of ``stamps`` (none: remove the log, as
    ``--overwrite always`` does): written first, then the older segments removed (a
    crash in between leaves both, which read the same)."""
    old = _segments(out)
    if len(stamps):
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
            _write_segment(self.out, of(self.pending))
            self.pending = {}
        self.flushed_at = time.monotonic()
