"""Read a sweep's rows in one pass over its files: each file checked, then scanned for
only the columns asked, its final rows and its every-checkpoint rows split as they stream.

Files are read with the explicit shard schema of their query categories (pyarrow would
otherwise take the first file's schema and silently drop the columns it lacks). A shard
missing a metric column reads as null for that metric (counted in ``n_missing``,
excluded from ``n``); a shard missing a coordinate or checkpoint column, or holding a
column no installed metric declares (a plugin's, uninstalled since: reading it with the
schema would drop it), is an error that names the file.

The files are scanned ``FILES_PER_SCAN`` at a time, each batch its own dataset streamed
one file and one record batch ahead, so that the scan holds one batch's footers and a few
decoded record batches besides the rows kept and the listing of the files
(``runner.results.layout.Listing``: columns, not an object per file). The rows kept are
gathered into tables of many scans each, so that they hold few Arrow objects per row.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.layout import CHECKPOINTS, FINALS, ROW_ORDER, Layout
from runner.results.shard import SCHEMA, column_categories, conform, shard_schema
from runner.results.validate import REQUIRED, footer_problem
from runner.results.where import Loc, arrow_source, dataset_source, location

FILES_PER_SCAN = 16
SCAN_ROWS = 1 << 14  # rows a record batch of the scan holds at most
BLOCK_ROWS = 1 << 16  # rows kept are gathered into tables of this many ...
BLOCK_TABLES = 64  # ... or of this many scans' tables
RERUN = "rerun the sweep (the same command): it sets the file aside and reruns its jobs"


@dataclass(frozen=True)
class Rows:
    """What one read of a sweep keeps, both tables in ``ROW_ORDER``: the final row of
    each job (``final``) and every checkpoint row (``every``), each of the columns asked."""

    final: pa.Table
    every: pa.Table


def shard_files(out: Loc) -> list[Loc]:
    """Every file holding a sweep's rows: ``OUT/shards/**/*.parquet`` (sorted, skipping
    names that start with ".", temporaries), then the committed compacted parts that
    still hold rows no shard overrides (``runner.results.layout``)."""
    return Layout(out).files()


def load_shards(out: Loc, *, final_only: bool = False, columns: Sequence[str] | None = None,
                skip: Collection[str] = ()) -> pa.Table:
    """Every shard row (or only final rows) of ``columns`` (default: all but ``skip``):
    ``read_rows`` asked for one of its two tables."""
    if final_only:
        return read_rows(out, final=columns, skip=skip).final
    return read_rows(out, final=(), every=columns, skip=skip).every


def read_rows(out: Loc, final: Sequence[str] | None = None, every: Sequence[str] | None = (),
              skip: Collection[str] = ()) -> Rows:
    """One pass over the sweep's files (its shards, then the compacted parts, each job's
    rows from one place: ``runner.results.layout``): the final rows of ``final`` and every
    row of ``every``, each None for every column but ``skip``, each () for none. The
    columns come in the shard schema's order of the query categories the files hold (a
    job without a category has nulls in its columns)."""
    out = location(out)
    lay = Layout(out)
    published = (out / FINALS).is_file()
    if not len(lay.listing) and not lay.live_parts:
        if published:
            return _published(out, final, every, skip, set())
        raise FbenchError(f"no shards in {out / 'shards'}; run a sweep with this output first")
    if published:
        return _with_published(out, lay, final, every, skip)
    return _read_files(out, lay, final, every, skip)


def _read_files(out: Loc, lay: Layout, final: Sequence[str] | None,
                every: Sequence[str] | None, skip: Collection[str]) -> Rows:
    """``read_rows`` of the shards and compacted parts."""
    scans = [_Scan(final, every, skip, shards) for shards in (True, False)]
    try:
        for start in range(0, len(lay.listing), FILES_PER_SCAN):
            scans[0].add(lay.listing.locs(start, start + FILES_PER_SCAN), [])
        parts = [lay.part_path(p) for p in lay.live_parts]
        for start in range(0, len(parts), FILES_PER_SCAN):
            scans[1].add(parts[start:start + FILES_PER_SCAN], sorted(lay.superseded))
    except (OSError, pa.ArrowException) as exc:
        raise FbenchError(f"cannot read the shards in {out / 'shards'}: {_first(exc)}") from None
    schema = shard_schema(sorted(scans[0].categories | scans[1].categories))
    return Rows(_joined([t for s in scans for t in s.final.done()], schema, final, skip, out),
                _joined([t for s in scans for t in s.every.done()], schema, every, skip, out))


def _with_ordering(want: Sequence[str] | None) -> Sequence[str] | None:
    return want if want is None or _none(want) else list(dict.fromkeys([*want, *ROW_ORDER]))


def _with_published(out: Loc, lay: Layout, final: Sequence[str] | None,
                    every: Sequence[str] | None, skip: Collection[str]) -> Rows:
    """The rows of the shards and parts, and the published rows of every job they do
    not hold (a published folder a sweep resumed in), in ``ROW_ORDER``."""
    wants = (_with_ordering(final), _with_ordering(every))
    files = _read_files(out, lay, *wants, [c for c in skip if c not in ROW_ORDER])
    held = {Path(s).stem for s in lay.stamps().column("shard").to_pylist()}
    pub = _published(out, *wants, skip, held)
    tables = []
    for want, mine, theirs in ((final, files.final, pub.final),
                               (every, files.every, pub.every)):
        if _none(want):
            tables.append(mine)
            continue
        table = pa.concat_tables([mine, theirs], promote_options="default")
        order = pc.sort_indices(table, sort_keys=[(c, "ascending") for c in ROW_ORDER])
        table = table.take(order)
        names = [c for c in table.column_names if c not in skip] if want is None else want
        tables.append(table.select(list(names)))
    return Rows(*tables)


def _published(out: Loc, final: Sequence[str] | None, every: Sequence[str] | None,
               skip: Collection[str], held: set[str]) -> Rows:
    """``read_rows`` of a published folder (``runner.results.finals``) but the jobs in
    ``held``: its final rows from ``finals.parquet``, its checkpoint rows from
    ``checkpoints.parquet``, which holds only the columns the report's plots read."""
    tables = []
    for name, want in ((FINALS, final), (CHECKPOINTS, every)):
        path = out / name
        if _none(want):
            tables.append(pa.table({}))
            continue
        try:
            table = pq.read_table(arrow_source(path))
        except (OSError, pa.ArrowException) as exc:
            raise FbenchError(f"cannot read {path}: {_first(exc)}") from None
        if held:
            table = table.filter(pc.invert(pc.is_in(table.column("job_id"),
                                                    pa.array(sorted(held), pa.string()))))
        names = [c for c in table.column_names if c not in skip] if want is None else list(want)
        absent = [c for c in names if c not in table.column_names]
        if absent:
            raise FbenchError(f"cannot read {path}: no column {absent[0]!r} in it (a published "
                              "folder keeps the final rows and the plots' checkpoint columns)")
        tables.append(table.select(names))
    return Rows(*tables)


def _none(want: Sequence[str] | None) -> bool:
    """``want`` asks for no column (None asks for all)."""
    return want is not None and len(want) == 0


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _Scan:
    """The rows one kind of file (shards, or compacted parts) gives, a batch of files at a
    time: each batch checked, then scanned once for both tables' columns."""

    def __init__(self, final: Sequence[str] | None, every: Sequence[str] | None,
                 skip: Collection[str], shards: bool) -> None:
        self.want, self.skip, self.shards = (final, every), skip, shards
        self.categories: set[str] = set()
        self.final, self.every = _Blocks(), _Blocks()

    def _columns(self, want: Sequence[str] | None, schema: pa.Schema) -> list[str]:
        names = [c for c in schema.names if c not in self.skip] if want is None else want
        return [c for c in names if c in schema.names]

    def add(self, files: list[Loc], drop: list[str]) -> None:
        paths, filesystem = dataset_source(files)
        dataset = ds.dataset(paths, schema=SCHEMA, format="parquet", filesystem=filesystem)
        named = dict(zip(paths, files, strict=True))
        cats = _check_files(dataset, self.shards, named)
        self.categories |= cats
        schema = shard_schema(sorted(cats))
        final, every = ([] if _none(w) else self._columns(w, schema) for w in self.want)
        read = list(dict.fromkeys([*final, *every, *ROW_ORDER, "is_final"]))
        conditions = [ds.field("is_final")] if _none(self.want[1]) else []
        if drop:  # rows a shard overrides (a rerun, or a copy a crash left)
            conditions.append(~ds.field("job_id").isin(drop))
        where = functools.reduce(operator.and_, conditions) if conditions else None
        keep_final = list(dict.fromkeys([*final, *ROW_ORDER]))
        keep_every = list(dict.fromkeys([*every, *ROW_ORDER]))
        finals: list[pa.Table] = []
        everys: list[pa.Table] = []
        for batch in _scan(dataset.replace_schema(schema), read, where):
            table = pa.Table.from_batches([batch])
            if not _none(self.want[0]):
                finals.append(table.filter(pc.field("is_final")).select(keep_final))
            if not _none(self.want[1]):
                everys.append(table.select(keep_every))
        for blocks, pieces in ((self.final, finals), (self.every, everys)):
            if pieces:
                blocks.add(pa.concat_tables(pieces).combine_chunks())


def _scan(dataset: ds.Dataset, columns: list[str],
          where: ds.Expression | None) -> Iterator[pa.RecordBatch]:
    """The record batches of ``columns`` that pass ``where``, in file order, read one file
    and one batch of ``SCAN_ROWS`` ahead: a batch's columns that neither table keeps are
    freed with it (a compacted part's row group is decoded a batch at a time)."""
    return dataset.scanner(columns=columns, filter=where, batch_size=SCAN_ROWS,
                           batch_readahead=1, fragment_readahead=1).to_batches()


class _Blocks:
    """The scans' tables gathered into one-chunk tables of ``BLOCK_ROWS`` rows or
    ``BLOCK_TABLES`` scans (a scan of shards gives one final row a file): a table kept per
    scan would hold its arrays' objects, per column, per scan."""

    def __init__(self) -> None:
        self.tables: list[pa.Table] = []
        self._pending: list[pa.Table] = []
        self._rows = 0

    def add(self, table: pa.Table) -> None:
        if table.num_rows:
            self._pending.append(table)
            self._rows += table.num_rows
            if self._rows >= BLOCK_ROWS or len(self._pending) >= BLOCK_TABLES:
                self._flush()

    def _flush(self) -> None:
        if self._pending:
            # (scans of files with other query categories have other columns: unified
            # by name, a column a scan lacks null; ``_joined`` then orders them)
            self.tables.append(pa.concat_tables(self._pending, promote_options="default")
                               .combine_chunks())
            self._pending, self._rows = [], 0

    def done(self) -> list[pa.Table]:
        self._flush()
        return self.tables


def _joined(tables: list[pa.Table], schema: pa.Schema, want: Sequence[str] | None,
            skip: Collection[str], out: Loc) -> pa.Table:
    """The batches' tables as one, in ``schema`` (a category a batch lacks: nulls) and
    ``ROW_ORDER``, of the columns ``want`` (None: all but ``skip``)."""
    if _none(want):
        return schema.empty_table().select([])
    names = [c for c in schema.names if c not in skip] if want is None else list(want)
    absent = [c for c in names if c not in schema.names]
    if absent:
        raise FbenchError(f"cannot read the shards in {out / 'shards'}: no column "
                          f"{absent[0]!r} in them")
    read = list(dict.fromkeys([*names, *ROW_ORDER]))
    target = pa.schema([schema.field(c) for c in read])
    table = pa.concat_tables([conform(t, target) for t in tables]) if tables \
        else target.empty_table()
    order = pc.sort_indices(table, sort_keys=[(c, "ascending") for c in ROW_ORDER])
    if not np.array_equal(order.to_numpy(), np.arange(table.num_rows)):
        table = table.take(order)  # (shards alone come in order: no copy)
    return table.select(names)


def _check_files(dataset: ds.Dataset, shards: bool, named: dict[str, Loc]) -> set[str]:
    """Each file has the coordinates and checkpoint columns (else the explicit schema
    would read them as nulls), and each shard (``shards``) is one whole job's
    (``runner.results.validate``, from the footers, which the scan then reuses); a file
    that is not Parquet, truncated or empty fails here, named. Returns the query
    categories of their own the files' columns split metrics by."""
    found: set[str] = set()
    what = "shard" if shards else "compacted part"
    for frag in dataset.get_fragments():
        try:
            schema, meta = frag.physical_schema, frag.metadata
        except (OSError, pa.ArrowException) as exc:
            raise FbenchError(f"{what} {frag.path} cannot be read ({_first(exc)}); "
                              f"{RERUN}") from None
        missing = [c for c in REQUIRED if c not in schema.names]
        if missing:
            raise FbenchError(f"{what} {frag.path} lacks {', '.join(missing)}: not an fbench "
                              f"shard; {RERUN}")
        cats, unknown = column_categories(schema.names)
        found.update(cats)
        if unknown:  # never dropped silently
            raise FbenchError(
                f"{what} {frag.path} has column(s) no installed metric declares "
                f"({', '.join(unknown[:3])}{', …' if len(unknown) > 3 else ''}): install the "
                "plugin that declares them, or rerun the sweep without it")
        if shards:
            loc = named.get(frag.path, Path(frag.path))
            problem = footer_problem(loc, loc.stem, meta, schema, exact=False)
            if problem:
                raise FbenchError(f"shard {frag.path} does not validate ({problem}); {RERUN}")
    return found
