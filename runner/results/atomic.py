"""Writing files so that a reader (or a killed writer) never sees half of one. A local
file: a temporary name in the same folder, then an atomic rename. A remote one (an
object store has no rename): the whole file made in memory first, then one upload,
which the store shows only once complete (``runner.results.where.ArrowPath``)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from runner.results.where import ArrowPath, Loc


@contextmanager
def _temporary(path: Path) -> Iterator[Path]:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)``, then rename ``tmp`` to ``path``."""
    with _temporary(path) as tmp:
        write(tmp)


def write_parquet(path: Loc, table: pa.Table) -> None:
    if isinstance(path, ArrowPath):
        buf = pa.BufferOutputStream()
        pq.write_table(table, buf)
        path.write_bytes(buf.getvalue().to_pybytes())
    else:
        write_atomic(path, lambda tmp: pq.write_table(table, tmp))


def write_text(path: Loc, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Loc, data: bytes) -> None:
    if isinstance(path, ArrowPath):
        path.write_bytes(data)
    else:
        write_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_chunks(path: Loc, chunks: Iterable[str]) -> None:
    """Text made of ``chunks``, written without holding it whole in a local folder (an
    object is still made in memory first: one upload, never half of one)."""
    if isinstance(path, ArrowPath):
        path.write_bytes("".join(chunks).encode("utf-8"))
        return

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(chunks)

    write_atomic(path, write)


def write_json(path: Loc, doc: Any) -> None:
    write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
