"""The inline executor: jobs run one after another in this process (debugging, tiny
sweeps, and the reference every other executor must match)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster.base import OnOutcome, register_executor


@register_executor("inline")
class InlineExecutor:
    name = "inline"

    def __init__(self, provenance: dict[str, Any] | None = None, **_: object) -> None:
        self.provenance = provenance

    def start(self) -> None:
        pass

    def run(self, spec_jsons: Sequence[str], on_outcome: OnOutcome) -> None:
        from runner.shard import execute

        for spec_json in spec_jsons:
            on_outcome(execute(spec_json, "inline", self.provenance))

    def close(self) -> None:
        pass
