"""Deliberately broken memories, one rule each, for `fbench check` to catch
(tests/test_plugins.py). ``Good`` keeps every rule; each subclass breaks one."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from runner.adapters import Hit


@dataclass(frozen=True)
class Params:
    capacity: int = 30


class Good:
    """The newest `capacity` observations, ranked by shared words."""

    Params = Params

    def __init__(self, params: Params) -> None:
        self.capacity = params.capacity
        self.items: OrderedDict[int, set[str]] = OrderedDict()
        self.n_tokens: dict[int, int] = {}
        self.evicted = 0
        self.n_obs = 0

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.n_obs += 1
        self.items[obs_id] = set(text.lower().split())
        self.n_tokens[obs_id] = len(text.split())
        while len(self.items) > self.capacity:
            old, _ = self.items.popitem(last=False)
            del self.n_tokens[old]
            self.evicted += 1

    def ranked(self, text: str, k: int) -> list[int]:
        words = set(text.lower().split())
        return [i for _, i in sorted(((len(words & w), i) for i, w in self.items.items()),
                                     reverse=True)[:k]]

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        return [Hit(i, 1.0) for i in self.ranked(text, k)]

    def tick(self, t: int) -> None:
        pass

    def holds(self, obs_id: int) -> bool:
        return obs_id in self.items

    def size(self) -> int:
        return len(self.items)

    def tokens(self) -> int:
        return sum(self.n_tokens.values())

    def forgotten(self) -> dict[str, int]:
        return {"capacity": self.evicted} if self.evicted else {}


class ForeignIds(Good):
    """Returns its own ids instead of the harness's."""

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        return [Hit(1000 + i, 1.0) for i in self.ranked(text, k)]


class ReturnsForgotten(Good):
    """Keeps returning what it evicted (the first observations)."""

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        return [Hit(i, 1.0) for i in range(min(k, self.n_obs))]


class HoldsAfterDelete(Good):
    """Says it still holds what it deleted."""

    def holds(self, obs_id: int) -> bool:
        return 0 <= obs_id < self.n_obs


class GrowsPastObservations(Good):
    """Counts each observation twice."""

    def size(self) -> int:
        return 2 * len(self.items)


class ReturnsForgottenLate(Good):
    """Deletes nothing before step 400, then keeps the newest 30 and still returns the
    first observations (a short check never sees it delete)."""

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.capacity = 30 if t >= 400 else 1 << 30
        super().observe(obs_id, t, text, meta)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        return [Hit(i, 1.0) for i in range(min(k, self.n_obs))]


class RanksAtRandom(Good):
    """Keeps every rule, but ranks what it holds in a seeded random order."""

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        import random

        ids = list(self.items)
        random.Random(t).shuffle(ids)
        return [Hit(i, 1.0) for i in ids[:k]]


class NeedsASystemLibrary(Good):
    """Cannot build: a system library it loads is missing."""

    def __init__(self, params: Params) -> None:
        try:
            raise OSError("libfbenchmissing.so.1: cannot open shared object file")
        except OSError as exc:
            raise RuntimeError("could not construct the store") from exc
