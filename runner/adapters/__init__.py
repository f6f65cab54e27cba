"""Adapters: every memory under test, reference or incumbent, behind one interface
(``runner.adapters.base``). fbench's own incumbents and the oracle are registered
through its entry points (``fbench.memories``), the path an outside package takes."""

from runner.adapters.base import (
    MEMORIES,
    OWN,
    AnswersAsIds,
    AnswersInBatches,
    Deletion,
    Foresees,
    Hit,
    IgnoresTicks,
    LinksSlots,
    MemoryAdapter,
    MemoryFactory,
    MemoryKind,
    Prefetches,
    ReportsDeletions,
    TakesTruthHints,
    UsesClock,
    register_memory,
)

__all__ = ["MEMORIES", "OWN", "AnswersAsIds", "AnswersInBatches", "Deletion", "Foresees", "Hit",
           "IgnoresTicks", "LinksSlots", "MemoryAdapter", "MemoryFactory", "MemoryKind",
           "Prefetches", "ReportsDeletions", "TakesTruthHints", "UsesClock", "register_memory"]
