"""Writing files so that a reader (or a killed writer) never sees half of one: a
temporary name in the same folder, then an atomic rename."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


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


def write_parquet(path: Path, table: pa.Table) -> None:
    write_atomic(path, lambda tmp: pq.write_table(table, tmp))


def write_text(path: Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    write_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_json(path: Path, doc: Any) -> None:
    write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
