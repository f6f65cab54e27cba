"""The parameters of a ``MemoryStore`` (``StoreParams``) and their validation: retrieval
weights, the pluggable axes (extractor, embedder, backend) and the budgets."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.backends import BACKENDS, unknown_backend


@dataclass(frozen=True)
class StoreParams:
    """Retrieval weights and the store's pluggable axes.

    ``backend``: ``memory`` (default; nothing persisted) or ``sqlite`` (durable,
    transactional). ``path``: the SQLite file, which must not exist yet; empty (the
    default) is a private temporary file deleted when the store is closed or collected
    (so a job leaves no file behind unless given a path), ``":memory:"`` SQLite's
    in-memory database. Only a durable backend takes a path. ``log_keep``: how many
    of the newest forget records the in-memory log holds (-1: every one), so a
    long run's memory stays bounded; the counts per reason are always complete, and a
    durable backend stores every record.
    """

    w_recency: float = 0.15
    w_importance: float = 0.15
    w_relevance: float = 0.7
    recency_base: float = 0.999
    extractor: str = "auto"  # the learned tagger where trained for the workload, else teacher
    embedder: str = "hashing"
    backend: str = "memory"
    path: str = ""
    log_keep: int = 10_000  # forget records held in memory (newest); -1: all
    budget: int = 0         # most live entries whatever the policy (0: no budget)
    budget_tokens: int = 0  # most live tokens whatever the policy (0: no budget)
    extract_miss: float = 0.0         # extractor=noisy: share of slot assertions unlinked
    extract_false_merge: float = 0.0  # extractor=noisy: share linked to a wrong attribute

    def __post_init__(self) -> None:
        ws = (self.w_recency, self.w_importance, self.w_relevance)
        if min(ws) < 0 or sum(ws) <= 0:
            raise ValueError("retrieval weights must be non-negative with a positive sum")
        if not 0 < self.recency_base <= 1:
            raise ValueError(f"recency_base must be in (0, 1], got {self.recency_base}")
        if self.backend not in BACKENDS:
            raise ValueError(unknown_backend(self.backend))
        if self.log_keep < -1:
            raise ValueError(f"log_keep must be -1 (keep all) or >= 0, got {self.log_keep}")
        if self.budget < 0 or self.budget_tokens < 0:
            raise ValueError("budget and budget_tokens must be >= 0 (0: no budget)")
        rates = (self.extract_miss, self.extract_false_merge)
        if min(rates) < 0 or sum(rates) > 1:
            raise ValueError("extract_miss and extract_false_merge must be >= 0 and sum to "
                             f"at most 1, got {rates[0]} and {rates[1]}")
        if sum(rates) > 0 and self.extractor != "noisy":
            raise ValueError("extract_miss and extract_false_merge need extractor=noisy, "
                             f"not {self.extractor!r}")
        if self.path and self.backend == "memory":
            raise ValueError(f"path {self.path!r} needs a durable backend (backend=sqlite)")
