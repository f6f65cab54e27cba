"""A memory of the most recent observations, retrieved by word overlap."""

from collections import OrderedDict
from dataclasses import dataclass

from runner.adapters import Hit


@dataclass(frozen=True)
class Params:
    capacity: int = 200  # observations kept; the oldest goes first

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {self.capacity}")


class RecencyMemory:
    """Keeps the newest `capacity` observations; ranks by shared words, newer first."""

    Params = Params

    def __init__(self, params: Params) -> None:
        self.capacity = params.capacity
        self.items: OrderedDict[int, set[str]] = OrderedDict()
        self.n_tokens: dict[int, int] = {}
        self.evicted = 0

    def observe(self, obs_id, t, text, meta) -> None:
        self.items[obs_id] = set(text.lower().split())
        self.n_tokens[obs_id] = len(text.split())
        while len(self.items) > self.capacity:
            old, _ = self.items.popitem(last=False)
            del self.n_tokens[old]
            self.evicted += 1

    def query(self, t, text, k):
        words = set(text.lower().split())
        scored = [(len(words & w), i) for i, w in self.items.items()]
        best = sorted((s for s in scored if s[0] > 0), reverse=True)[:k]
        return [Hit(i, float(s)) for s, i in best]

    def tick(self, t) -> None:
        pass

    def holds(self, obs_id) -> bool:
        return obs_id in self.items

    def size(self) -> int:
        return len(self.items)

    def tokens(self) -> int:
        return sum(self.n_tokens.values())

    def forgotten(self) -> dict[str, int]:
        return {"capacity": self.evicted} if self.evicted else {}
