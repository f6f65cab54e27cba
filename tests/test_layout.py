"""The listing of a sweep's shards: columns in path order, the same stamps as the files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from runner.results.layout import Layout, Listing, Stamp


def _touch(root: Path, rel: str, size: int) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_listing_holds_every_shard_in_path_order_with_its_stamp(tmp_path: Path) -> None:
    """Prevents a listing in plain string order (``workload=a.b`` before ``workload=a``,
    a loose file before a folder's), which would change the summary's fingerprint, or
    one that lists temporaries or other files, or stamps that are not the file's."""
    files = {
        "shards/workload=a/policy=p/j1.parquet": 3,
        "shards/workload=a.b/policy=p/j2.parquet": 5,
        "shards/workload=a/policy=p-q/j3.parquet": 7,
        "shards/z.parquet": 11,
        "shards/workload=a/policy=p/.j4.parquet.tmp": 1,
        "shards/workload=a/policy=p/.j5.parquet": 1,
        "shards/workload=a/policy=p/notes.txt": 1,
    }
    for rel, size in files.items():
        _touch(tmp_path, rel, size)
    listing = Listing(tmp_path)
    want = sorted(
        (Stamp(rel, os.stat(tmp_path / rel).st_size, os.stat(tmp_path / rel).st_mtime_ns)
         for rel in files if rel.endswith(".parquet") and "/." not in rel),
        key=Stamp.sort_key)
    assert [s.shard for s in want] == [
        "shards/workload=a/policy=p/j1.parquet", "shards/workload=a/policy=p-q/j3.parquet",
        "shards/workload=a.b/policy=p/j2.parquet", "shards/z.parquet"]
    assert listing.stamp_list() == want
    assert listing.locs() == [tmp_path / s.shard for s in want]
    assert listing.locs(1, 3) == [tmp_path / s.shard for s in want[1:3]]
    assert [listing.index(j) for j in ("j1", "j2", "j3", "z", "j4", "j")] == [
        0, 2, 1, 3, None, None]
    assert listing.has(np.array([b"z", b"j9", b"j3"])).tolist() == [True, False, True]


def test_an_empty_or_missing_shards_folder_lists_nothing(tmp_path: Path) -> None:
    """Prevents an error (or a phantom file) where a sweep has not written yet."""
    lay = Layout(tmp_path)
    assert (len(lay.listing), lay.raw_files, lay.stamps().num_rows) == (0, [], 0)
    assert lay.listing.index("j1") is None
    assert lay.listing.has(np.array([], "S1")).tolist() == []
