"""The backend interface: the durable record behind a ``MemoryStore``.

The store's numpy columns are the compute engine for every backend (retrieval and
policies read them); a backend only *persists*. The store tells it three things:

- ``on_remove(batch)``: the forget records of one applied ``Removal`` (the store's one
  removal path calls it right after appending the batch to its in-memory log);
- ``on_compact(keep)``: the columns dropped their dead rows (``keep``: the old row of
  each new row), so row numbers moved;
- ``commit(cols, slot_names, peak_size)``: a transaction boundary. Everything since
  the previous commit (new entries, removals, changed mutable columns) is written in
  ONE transaction, all or nothing. ``MemoryStore`` commits at the end of every ``add``
  (the insert and any removals it triggered) and every ``tick`` (the whole
  consolidation), and at the end of a ``retrieve`` only if it removed something:
  retrieval-time reinforcement (last access, access count, a policy's score) is
  written lazily, at the next boundary.

``load()`` returns what a reopened backend holds (``Snapshot``), ``problems()`` what is
inconsistent in it, ``resync(cols)`` says the columns now mirror it, ``close()``
commits nothing (the store flushes first) and releases the storage. The base class is
the in-memory backend: it keeps nothing (the store's columns and ``ForgetLog`` are the
whole record).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from fbench.registry import Registry, unknown
from memcore.columns import Columns
from memcore.fields import StoredEntry
from memcore.forget_log import ForgetBatch, ForgetRecord


@dataclass(frozen=True)
class Snapshot:
    """The contents of a reopened backend: live entries by entry id, the forget log in
    append order, and the store's peak size."""

    entries: list[StoredEntry] = field(default_factory=list)
    forgotten: list[ForgetRecord] = field(default_factory=list)
    peak_size: int = 0


class Backend:
    """The in-memory backend (and the interface): every hook does nothing."""

    name: ClassVar[str] = ""
    durable: ClassVar[bool] = False

    def on_remove(self, batch: ForgetBatch) -> None:
        pass

    def on_compact(self, keep: np.ndarray) -> None:
        pass

    def commit(self, cols: Columns, slot_names: Sequence[str], peak_size: int) -> None:
        pass

    def resync(self, cols: Columns) -> None:
        pass

    def load(self) -> Snapshot:
        return Snapshot()

    def problems(self) -> list[str]:
        """What is inconsistent in the stored record (empty when nothing is)."""
        return []

    def close(self) -> None:
        pass


# name -> factory(path, reopen): ``path`` is the ``store.path`` parameter; ``reopen``
# asks to open an existing store instead of creating a fresh one.
BackendFactory = Callable[[str, bool], Backend]
BACKENDS: Registry[BackendFactory] = Registry("backend")


register_backend = BACKENDS.register


def unknown_backend(name: str) -> str:
    """The one-line message for an unregistered backend name."""
    return unknown(name, "backend", BACKENDS.names())


def make_backend(name: str, path: str = "", reopen: bool = False) -> Backend:
    """Build the backend registered as ``name`` (ValueError if unknown or unusable)."""
    if name not in BACKENDS:
        raise ValueError(unknown_backend(name))
    return BACKENDS[name](path, reopen)
