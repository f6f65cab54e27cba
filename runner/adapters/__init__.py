"""Adapters: every memory under test, reference or incumbent, behind one interface."""

from runner.adapters import lethe_agent as _lethe_agent  # noqa: F401  (registers)
from runner.adapters import mem0 as _mem0  # noqa: F401  (registers)
from runner.adapters import oracle as _oracle  # noqa: F401  (registers)
from runner.adapters import reference as _reference  # noqa: F401  (registers)
from runner.adapters.base import MEMORIES, Hit, MemoryAdapter, MemoryKind, register_memory

__all__ = ["MEMORIES", "Hit", "MemoryAdapter", "MemoryKind", "register_memory"]
