"""The inline executor: jobs run one after another in this process (debugging, tiny
sweeps, and the reference every other executor must match)."""

from __future__ import annotations

from collections.abc import Sequence

from cluster.base import OnOutcome, TaskFn, register_executor


@register_executor("inline")
class InlineExecutor:
    name = "inline"

    def __init__(self, task: TaskFn, **_: object) -> None:
        self.task = task

    def start(self) -> None:
        pass

    def run(self, spec_jsons: Sequence[str], on_outcome: OnOutcome) -> None:
        for spec_json in spec_jsons:
            for outcome in self.task([spec_json], "inline"):
                on_outcome(outcome)

    def close(self) -> None:
        pass
