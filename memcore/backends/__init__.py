"""Storage backends of ``MemoryStore``, registered by name: ``memory`` (default, keeps
nothing beyond the numpy columns) and ``sqlite`` (durable, transactional)."""

from memcore.backends import memory as _memory  # noqa: F401  (registers)
from memcore.backends import sqlite as _sqlite  # noqa: F401
from memcore.backends.base import (
    BACKENDS,
    Backend,
    Snapshot,
    make_backend,
    register_backend,
    unknown_backend,
)
from memcore.backends.sqlite import SqliteBackend
from memcore.fields import StoredEntry

__all__ = [
    "BACKENDS",
    "Backend",
    "Snapshot",
    "SqliteBackend",
    "StoredEntry",
    "make_backend",
    "register_backend",
    "unknown_backend",
]
