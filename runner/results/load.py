"""Read a sweep's shards: every row (or only final rows) from raw shards and compacted
parts, with the explicit shard schema, each file checked before it is scanned.

Shards are always read with the explicit shard schema: pyarrow would otherwise
take the first file's schema and silently drop the columns it lacks. A shard
missing a metric column reads as null for that metric (counted in
``n_missing``, excluded from ``n``); a shard missing a coordinate or checkpoint
column, or holding a column no installed metric declares (a plugin's, uninstalled
since: reading it with the schema would drop it), is an error that names the file.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from runner.errors import FbenchError
from runner.results.known import conform, lookup
from runner.results.layout import ROW_ORDER, Layout
from runner.results.shard import SCHEMA, column_categories, shard_schema
from runner.results.validate import REQUIRED, footer_problem
from runner.results.where import Loc, dataset_source, location


def shard_files(out: Loc) -> list[Loc]:
    """Every file holding a sweep's rows: ``OUT/shards/**/*.parquet`` (sorted, skipping
    names that start with ".", temporaries), then the committed compacted parts that
    still hold rows no shard overrides (``runner.results.layout``)."""
    return Layout(out).files()


def load_shards(
    out: Loc, *, final_only: bool = False, columns: Sequence[str] | None = None,
    skip: Collection[str] = (),
) -> pa.Table:
    """Every shard row (or only final rows), read with the shard schema of the files' query
    categories (``runner.results.shard.shard_schema``: a job without a category has nulls
    in its columns), from raw shards and compacted parts alike (each job from one place:
    ``runner.results.layout``); ``columns`` only (default: all but ``skip``)."""
    out = location(out)
    lay = Layout(out)
    parts = [lay.part_path(p) for p in lay.live_parts]
    if not lay.raw_files and not parts:
        raise FbenchError(f"no shards in {out / 'shards'}; run a sweep with this output first")
    state = (str(out), tuple(lay.raw_stat.items()), tuple(p.name for p in lay.live_parts))
    if final_only:  # every column, kept for the next reader of the same files
        table = _FINAL[1] if _FINAL and _FINAL[0] == state else _read(
            out, lay, parts, state, True, None, ())
        if table.nbytes <= FINAL_KEPT_BYTES:
            _FINAL[:] = [state, table]
    else:
        table = _read(out, lay, parts, state, False, columns, skip)
    wanted = list(columns) if columns is not None else [
        c for c in table.column_names if c not in skip]
    absent = [c for c in wanted if c not in table.column_names]
    if absent:
        raise FbenchError(f"cannot read the shards in {out / 'shards'}: no column "
                          f"{absent[0]!r} in them")
    return table.select(wanted)


# The last final rows read, every column, and the state of the files they came from
# (each one's size and time): a report reads them twice (the summary's aggregation, the
# findings' evidence), each a pass over every shard (3,850 files at 50 seeds: 10 s).
_FINAL: list[Any] = []
FINAL_KEPT_BYTES = 256 << 20
# The last state whose every file was checked, and the query categories found: a report
# reads its folder's shards twice (final rows; every row of a few columns), and a check
# of each file's footer is 4 of those 10 s.
_CHECKED: list[Any] = []


def _read(out: Loc, lay: Layout, parts: list[Loc], state: tuple[Any, ...], final_only: bool,
          columns: Sequence[str] | None, skip: Collection[str]) -> pa.Table:
    """The rows (``ROW_ORDER``) of ``columns`` (default: all but ``skip``) plus those of
    ``ROW_ORDER``, every file checked first (unless this state's already were, or this
    process wrote it: ``runner.results.known``, whose final rows are taken from there)."""
    superseded = sorted(lay.superseded)
    known = {f: k for f in lay.raw_files if (k := lookup(f, lay.raw_stat[f])) is not None}
    raw = [f for f in lay.raw_files if f not in known] if final_only else lay.raw_files
    try:
        groups = [(_dataset(files), drop, shards)
                  for files, drop, shards in ((raw, [], True), (parts, superseded, False))
                  if files]
        if _CHECKED and _CHECKED[0] == state:
            found = _CHECKED[1]
        else:
            # each file checked (but those this process wrote); the schema read is the
            # union of the files' categories
            named = {dataset_source([f])[0][0]: f for f in lay.raw_files}
            written = {p for p, f in named.items() if f in known}
            found = sorted({c for k in known.values() for c in k.categories}
                           | {c for d, _, shards in groups
                              for c in _check_required(d, shards, named, written)})
            _CHECKED[:] = [state, found]
        schema = shard_schema(found)
        wanted = list(columns) if columns is not None else [
            c for c in schema.names if c not in skip]
        read = wanted + [c for c in ROW_ORDER if c not in wanted]
        tables = []
        for dataset, drop, _ in groups:
            conditions = [ds.field("is_final")] if final_only else []
            if drop:  # rows a shard overrides (a rerun, or a copy a crash left)
                conditions.append(~ds.field("job_id").isin(drop))
            where = functools.reduce(operator.and_, conditions) if conditions else None
            tables.append(dataset.replace_schema(schema).to_table(columns=read, filter=where))
        if final_only:  # (one table per kind of shard: 3,850 small ones are slow to join)
            kinds: dict[tuple[str, ...], list[pa.Table]] = {}
            for k in known.values():
                kinds.setdefault(k.categories, []).append(k.final)
            for finals in kinds.values():
                joined = pa.concat_tables(finals, promote_options="default").combine_chunks()
                tables.append(conform(joined, schema).select(read))
        table = pa.concat_tables(tables)  # (take, below, makes one contiguous copy)
    except (OSError, pa.ArrowException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FbenchError(f"cannot read the shards in {out / 'shards'}: {first}") from None
    order = pc.sort_indices(table, sort_keys=[(c, "ascending") for c in ROW_ORDER])
    return table.take(order)


RERUN = "rerun the sweep (the same command): it sets the file aside and reruns its jobs"


def _dataset(files: list[Loc]) -> ds.Dataset:
    paths, filesystem = dataset_source(files)
    return ds.dataset(paths, schema=SCHEMA, format="parquet", filesystem=filesystem)


def _check_required(dataset: ds.Dataset, shards: bool, named: dict[str, Loc],
                    written: Collection[str] = ()) -> set[str]:
    """Each file has the coordinates and checkpoint columns (else the explicit schema
    would read them as nulls), and each shard (``shards``) is one whole job's
    (``runner.results.validate``, from the footers, which the scan then reuses); a file
    that is not Parquet, truncated or empty fails here, named. Returns the query
    categories of their own the files' columns split metrics by. ``written``: paths
    this process wrote (``runner.results.known``), not checked again."""
    found: set[str] = set()
    for frag in dataset.get_fragments():
        if frag.path in written:
            continue
        what = "shard" if shards else "compacted part"
        try:
            schema, meta = frag.physical_schema, frag.metadata
        except (OSError, pa.ArrowException) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise FbenchError(f"{what} {frag.path} cannot be read ({first}); {RERUN}") from None
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
        loc = named.get(frag.path, Path(frag.path)) if shards else None
        problem = (footer_problem(loc, loc.stem, meta, schema, exact=False)
                   if loc is not None else "")
        if problem:
            raise FbenchError(f"shard {frag.path} does not validate ({problem}); {RERUN}")
    return found
