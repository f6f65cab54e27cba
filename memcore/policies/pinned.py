"""pinned.<inner>: never removes pinned entries; the inner policy governs the rest.

The policy registry derives one wrapper for every policy that is not a wrapper itself,
when it is looked up (a plugin's included): ``pinned.fifo``, ``pinned.ebbinghaus``,
... Its parameters are the inner policy's plus ``pin_tags``
(comma-separated tag names, matched against an observation's meta ``tags``).

An entry is pinned when its tags intersect the pin tags. The pin mask is
recomputed at every call without growing the tag vocabulary, so a pin tag first
seen later is honoured from then on. The inner policy sees a view of the columns
in which only the *unpinned* live entries are live (``live`` = live & ~pinned,
``n_live`` accordingly): it keeps forgetting among them exactly as it would alone.
In particular **a pinned store's capacity bounds its unpinned entries**: a
``pinned.fifo`` of capacity 100 holds 100 unpinned entries plus every pinned one,
and evicts among the unpinned. ``capacity`` mirrors the inner policy's. Ranking
strength is the inner policy's, over every entry (pinning protects from removal,
not from ranking).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, Removals

DEFAULT_PIN_TAGS = "fact,instruction"


def parse_pin_tags(raw: object) -> tuple[str, ...]:
    """The tag names of a ``pin_tags`` value; ValueError unless non-empty names."""
    if not isinstance(raw, str):
        raise ValueError(f"pin_tags must be a string, got {raw!r}")
    names = tuple(t.strip() for t in raw.split(","))
    if not all(names):
        raise ValueError(
            f"pin_tags must be comma-separated non-empty tag names (e.g. "
            f"{DEFAULT_PIN_TAGS!r}), got {raw!r}"
        )
    return names


def unpinned_view(cols: Columns, unpinned: np.ndarray) -> Columns:
    """A shallow view of ``cols`` (arrays shared) whose live entries are ``unpinned``
    (a boolean mask over rows ``[0, n)``, already and-ed with ``live``)."""
    view = copy.copy(cols)
    view.live = unpinned
    view.n_live = int(np.count_nonzero(unpinned))
    return view


class Pinned(Policy):
    """Base of the generated ``pinned.<inner>`` wrappers."""

    inner_cls: ClassVar[type[Policy]] = Policy
    wrapper: ClassVar[bool] = True

    def __init__(self, params: Any = None) -> None:
        super().__init__(params)
        p = self.params
        inner_params = self.inner_cls.Params(
            **{f.name: getattr(p, f.name) for f in dataclasses.fields(self.inner_cls.Params)}
        )
        self.inner = self.inner_cls(inner_params)
        self.capacity = self.inner.capacity
        self.pin_names = parse_pin_tags(p.pin_tags)

    def pinned(self, cols: Columns) -> np.ndarray | None:
        """Rows ``[0, n)`` that are pinned, or ``None`` when no row can be."""
        mask = cols.tag_mask(self.pin_names, add=False)
        if mask == 0:
            return None
        return (cols.tags[: cols.n] & mask) != 0

    @staticmethod
    def _keep_unpinned(removal: Removal, pinned: np.ndarray) -> Removal:
        rows = np.asarray(removal.rows)
        keep = ~pinned[rows]
        if keep.all():
            return removal
        into = None if removal.merged_into is None else np.asarray(removal.merged_into)[keep]
        return Removal(rows[keep], removal.reason, np.asarray(removal.scores)[keep], into)

    def _guard(self, removals: Removals, pinned: np.ndarray) -> Removals:
        """Drop any pinned row from the inner policy's removals (none, for a policy that
        only removes live rows of the view it is given)."""
        if removals is None:
            return None
        if isinstance(removals, list):
            return [self._keep_unpinned(r, pinned) for r in removals]
        return self._keep_unpinned(removals, pinned)

    def _view(self, cols: Columns, pinned: np.ndarray) -> Columns:
        return unpinned_view(cols, cols.live[: cols.n] & ~pinned)

    def on_add(self, cols: Columns, row: int, now: int) -> Removals:
        pinned = self.pinned(cols)
        if pinned is None:
            return self.inner.on_add(cols, row, now)
        return self._guard(self.inner.on_add(self._view(cols, pinned), row, now), pinned)

    def on_access(self, cols: Columns, rows: np.ndarray, now: int,
                  relevance: np.ndarray | None = None) -> Removals:
        pinned = self.pinned(cols)
        if pinned is None:
            return self.inner.on_access(cols, rows, now, relevance=relevance)
        keep = ~pinned[rows]
        return self._guard(self.inner.on_access(
            self._view(cols, pinned), rows[keep], now,
            relevance=None if relevance is None else relevance[keep],
        ), pinned)

    def on_tick(self, cols: Columns, now: int) -> Removals:
        pinned = self.pinned(cols)
        if pinned is None:
            return self.inner.on_tick(cols, now)
        return self._guard(self.inner.on_tick(self._view(cols, pinned), now), pinned)

    def strength(self, cols: Columns, now: int) -> np.ndarray | None:
        return self.inner.strength(cols, now)


def _post_init(base: type) -> Callable[[Any], None]:
    base_post = getattr(base, "__post_init__", None)

    def __post_init__(self: Any) -> None:
        if base_post is not None:
            base_post(self)
        parse_pin_tags(self.pin_tags)

    return __post_init__


def wrap(name: str, inner: type[Policy]) -> type[Policy]:
    """Build ``pinned.<name>`` (the policy registry derives it on lookup), its Params
    (the inner's fields plus ``pin_tags``, frozen, validated by the inner's
    ``__post_init__`` then ours)."""
    ident = "Pinned_" + "".join(c if c.isalnum() else "_" for c in name)
    params = dataclasses.make_dataclass(
        ident + "_Params",
        [("pin_tags", str, dataclasses.field(default=DEFAULT_PIN_TAGS))],
        bases=(inner.Params,),
        frozen=True,
        namespace={
            "__post_init__": _post_init(inner.Params),
            "__module__": __name__,
            "__doc__": f"The parameters of {name!r} plus ``pin_tags`` (comma-separated).",
        },
    )
    description = f"{name} that never removes entries tagged with pin_tags"
    if any(f.name == "capacity" for f in dataclasses.fields(inner.Params)):
        description += " (capacity bounds the unpinned entries only)"
    cls: type[Policy] = type(ident, (Pinned,), {
        "__module__": __name__,
        "__doc__": f"{name!r} that never removes pinned entries.",
        "inner_cls": inner,
        "access_reranks": inner.access_reranks,
        "Params": params,
        "description": description + ".",
    })
    # Module globals, so the generated classes pickle by reference (Ray workers).
    globals()[params.__name__] = params
    globals()[cls.__name__] = cls
    cls.name = f"pinned.{name}"
    return cls
