"""Columnar entry storage: one numpy array per field plus a live mask.

Rows ``[0, n)`` are in use; a removed row stays until ``compact()`` squeezes the
dead rows out (preserving order, so a lower row is always an older entry). The
embedding matrix is stored dimension-major (``emb[:, row]``) so a sparse query
reads only the dimensions it uses.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np


class Columns:
    """Growable, compactable arrays of memory entries."""

    _FIELDS: ClassVar[dict[str, type]] = {
        "eid": np.int64,          # entry id, increasing with insertion
        "obs_id": np.int64,       # the caller's observation id
        "turn": np.int64,         # time of the observation
        "importance": np.float64,
        "superseded": np.bool_,
        "slot": np.int32,         # interned extracted slot, -1 for none
        "live": np.bool_,
        "ntok": np.int64,         # whitespace tokens of the text
        "last_access": np.int64,
        "access_count": np.int64,
        "tags": np.int64,         # bit mask over tag_names (meta "tags", comma-separated)
        "score": np.float64,      # a policy's own stored score (lethe)
        "tier": np.int8,          # a policy's own tier (lethe: short, long, cold)
        "since": np.int64,        # when the entry entered its tier
    }

    def __init__(self, dim: int, capacity: int = 256) -> None:
        self.dim = dim
        self.n = 0
        self.n_live = 0
        self.emb = np.zeros((dim, capacity))
        for name, dtype in self._FIELDS.items():
            setattr(self, name, np.zeros(capacity, dtype=dtype))
        self.texts: list[str] = []
        self.tag_names: list[str] = []   # bit i of ``tags`` is tag_names[i]

    MAX_TAGS = 63

    def tag_mask(self, names: list[str] | tuple[str, ...], add: bool = True) -> int:
        """The bit mask of ``names``; unseen names get a new bit (or none if ``add`` is
        False, so a lookup never grows the vocabulary)."""
        mask = 0
        for name in names:
            if name not in self.tag_names:
                if not add:
                    continue
                if len(self.tag_names) == self.MAX_TAGS:
                    raise ValueError(f"more than {self.MAX_TAGS} distinct tags")
                self.tag_names.append(name)
            mask |= 1 << self.tag_names.index(name)
        return mask

    # typed views for mypy
    eid: np.ndarray
    obs_id: np.ndarray
    turn: np.ndarray
    importance: np.ndarray
    superseded: np.ndarray
    slot: np.ndarray
    live: np.ndarray
    ntok: np.ndarray
    last_access: np.ndarray
    access_count: np.ndarray
    tags: np.ndarray
    score: np.ndarray
    tier: np.ndarray
    since: np.ndarray

    @property
    def capacity(self) -> int:
        return self.emb.shape[1]

    def _grow(self) -> None:
        cap = self.capacity * 2
        emb = np.zeros((self.dim, cap))
        emb[:, : self.n] = self.emb[:, : self.n]
        self.emb = emb
        for name in self._FIELDS:
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def append(self, vec: np.ndarray) -> int:
        """Reserve the next row with embedding ``vec``; the caller fills the fields."""
        if self.n == self.capacity:
            self._grow()
        row = self.n
        self.emb[:, row] = vec
        self.live[row] = True
        self.texts.append("")
        self.n += 1
        self.n_live += 1
        return row

    def compact(self) -> np.ndarray:
        """Drop dead rows, keeping order. Returns the old row of each new row."""
        keep = np.flatnonzero(self.live[: self.n])
        m = len(keep)
        self.emb[:, :m] = self.emb[:, keep]
        self.emb[:, m : self.n] = 0.0
        for name in self._FIELDS:
            arr = getattr(self, name)
            arr[:m] = arr[keep]
            arr[m : self.n] = 0
        self.texts = [self.texts[i] for i in keep]
        self.n = m
        return keep
