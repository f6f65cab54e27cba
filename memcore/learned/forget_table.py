"""The learned-forget network's answers, memoized over its discrete inputs.

Three of the network's four inputs are discrete (``superseded``, ``slotted``, and the
age, a whole number of turns) and the fourth, ``importance``, takes few distinct
values in practice (the heuristic scorer's). So instead of a forward pass over every
live entry after every add, the table holds both outputs for every
``(importance, superseded, slotted)`` combination seen so far and every age below its
width, and a decision is a gather: O(1) per entry, no torch call on the hot path.

The table is a pure function of the network: each value is computed in a batch of
exactly ``net.rows_per_op`` rows at the position ``age mod rows_per_op`` (widths are
whole multiples of it), so it never depends on which other combinations or ages were
built, in which order, or by which earlier job in the process. (A direct forward's
value for an entry depends, in its last bits, on the entry's position in the batch.)
Ages at or past ``AGE_CAP``, or more than ``MAX_IMPORTANCES`` distinct importances,
fall back to the direct forward pass.

Both run on one torch thread. The table's elementwise ops (the sigmoid over every
combination and age) are far above torch's grain size, so with more threads they would
enter an OpenMP region, which on a busy machine waits for a core another process holds,
and a split over threads could move the boundaries the vectorized kernel works in.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
import torch

from memcore.learned.forget_net import LOG_RETENTION, STRENGTH, ForgetNet, forget_features
from memcore.torch_threads import one_torch_thread

AGE_CAP = 1 << 14
MAX_IMPORTANCES = 64
_FLAGS = 4  # (superseded, slotted) pairs: combo = importance_id * 4 + 2 * sup + slotted


class ForgetTable:
    """Both outputs of ``net`` (strength as a sigmoid, log-retention) by
    ``(importance, superseded, slotted)`` combination and age."""

    def __init__(self, net: ForgetNet) -> None:
        self.net = net
        self.block = net.rows_per_op
        self.importances = np.zeros(0, dtype=np.float32)  # sorted
        self.width = 0
        self.tables = np.zeros((2, 0, 0), dtype=np.float32)  # [output, combo, age]
        self.builds = 0  # tables built (a combination's number may change at each)
        self._importance_list: list[float] = []
        # next_below's ages below a threshold, per combination and threshold, per build
        self._below: dict[tuple[int, float], list[int]] = {}
        self._strengths = (-1, np.zeros(0))  # (build, ``strengths``)
        # (importance, superseded, slotted) -> ``combination``, per build
        self._combinations: dict[tuple[float, bool, bool], int] = {}
        # combination -> ``retentions``, per build
        self._retentions: dict[int, tuple[list[float], list[float]]] = {}

    def _build(self, importances: np.ndarray, width: int) -> None:
        n_combos = len(importances) * _FLAGS
        age = np.tile(np.arange(width), n_combos)
        flags = np.repeat(np.arange(n_combos) % _FLAGS, width)
        x = forget_features(age, np.repeat(importances, _FLAGS * width), flags >= 2,
                            flags % 2 == 1)
        with one_torch_thread(), torch.inference_mode():
            xt = torch.from_numpy(x)
            strength = self.net.predict(xt, STRENGTH).sigmoid_().numpy()
            log_r = self.net.predict(xt, LOG_RETENTION).numpy()
        self.tables = np.stack([strength, log_r]).reshape(2, n_combos, width)
        self.importances, self.width = importances, width
        self.builds += 1
        self._importance_list = importances.tolist()  # the same, as exact Python floats
        self._below = {}
        self._combinations = {}
        self._retentions = {}

    def _ensure(self, importance: np.ndarray, max_age: int) -> bool:
        """Grow the table to cover these importances and ages; False if it must not."""
        imps = self.importances
        pos = np.minimum(np.searchsorted(imps, importance), max(len(imps) - 1, 0))
        known = len(imps) > 0 and bool((imps[pos] == importance).all())
        if known and max_age < self.width:
            return True
        if max_age >= AGE_CAP:
            return False
        new_imps = imps if known else np.union1d(imps, importance)
        if len(new_imps) > MAX_IMPORTANCES:
            return False
        width = max(self.width, self.block)
        while width <= max_age:
            width *= 2
        self._build(new_imps.astype(np.float32), width)
        return True

    def covers(self, importance: np.float32 | np.ndarray) -> bool:
        """Whether the table holds ``importance`` (each of them: grown to them if it
        may): what a ``lookup`` of entries of that importance needs to read the table."""
        return self._ensure(np.atleast_1d(np.asarray(importance, dtype=np.float32)), 0)

    def combination(self, importance: float, superseded: bool, slotted: bool) -> int:
        """The combination of an entry (its importance as the columns hold it), as
        ``combos`` numbers it (plus 2 if superseded); -1 if the table does not hold its
        importance. By bisection on exact Python floats (float32 to float keeps every
        value and its order: ``np.searchsorted``'s answer), kept per build."""
        key = (importance, superseded, slotted)
        combo = self._combinations.get(key)
        if combo is None:
            imp, held = float(np.float32(importance)), self._importance_list
            at = bisect_left(held, imp)
            combo = self._combinations[key] = (
                at * _FLAGS + 2 * superseded + slotted
                if at < len(held) and held[at] == imp else -1)
        return combo

    def next_below(self, log_threshold: np.float32, combo: int, age: int) -> int:
        """The first age from ``age`` on whose log-retention in the table is below
        ``log_threshold``, for an entry of combination ``combo`` (``combination``); the
        table's width if none within it is (the caller asks again from there)."""
        ages = self._below.get((combo, float(log_threshold)))
        if ages is None:
            ages = np.flatnonzero(self.tables[LOG_RETENTION, combo] < log_threshold).tolist()
            self._below[combo, float(log_threshold)] = ages
        at = bisect_left(ages, age)
        return ages[at] if at < len(ages) else self.width

    def retentions(self, combo: int) -> tuple[list[float], list[float]]:
        """Combination ``combo``'s log-retention at each age of the table, as Python
        floats (float32 to float keeps every value and its order), and its exp in
        float64 (``np.exp`` over the row, the values ``every_row``'s removal scores
        get), kept per build: a decision on one entry reads two list items."""
        kept = self._retentions.get(combo)
        if kept is None:
            row = self.tables[LOG_RETENTION, combo]
            kept = self._retentions[combo] = (row.tolist(),
                                              np.exp(row.astype(np.float64)).tolist())
        return kept

    def read(self, output: int, age: np.ndarray, importance: np.ndarray,
             superseded: np.ndarray, slotted: np.ndarray) -> np.ndarray:
        """``lookup`` for entries whose importances the table holds (``covers``): the
        same values, without checking them again."""
        if len(age) == 0 or int(age.max()) >= self.width:
            return self.lookup(output, age, importance, superseded, slotted)
        return self.gather(output, age, importance, superseded, slotted)

    def combos(self, importance: np.ndarray, slotted: np.ndarray) -> np.ndarray:
        """Each held entry's combination as ``gather`` numbers it, supersession aside (a
        superseded entry's is 2 more): valid until the next build (``builds``)."""
        combo = np.searchsorted(self.importances, importance.astype(np.float32)) * _FLAGS
        combo += slotted
        return combo

    @property
    def combinations(self) -> int:
        """The combinations held (``combos`` numbers them from 0)."""
        return self.tables.shape[1]

    def strengths(self) -> np.ndarray:
        """The strengths as float64 (the same values), by age, then combination: an
        entry's is at ``age · combinations + combination``."""
        if self._strengths[0] != self.builds:
            self._strengths = (self.builds, np.ascontiguousarray(
                self.tables[STRENGTH].T, dtype=np.float64).ravel())
        return self._strengths[1]

    def gather(self, output: int, age: np.ndarray, importance: np.ndarray,
               superseded: np.ndarray, slotted: np.ndarray) -> np.ndarray:
        """``read`` for entries the table holds, ages included (the caller has checked
        both)."""
        combo = self.combos(importance, slotted)
        combo += superseded * 2
        return self.tables[output, combo, age]

    def lookup(self, output: int, age: np.ndarray, importance: np.ndarray,
               superseded: np.ndarray, slotted: np.ndarray) -> np.ndarray:
        """Output ``output`` (``STRENGTH``, already a sigmoid, or ``LOG_RETENTION``) of
        each entry: float32, one per row of the inputs."""
        if len(age) == 0:
            return np.zeros(0, dtype=np.float32)
        imp = importance.astype(np.float32)
        if not self._ensure(imp, int(age.max())):
            return self._direct(output, age, importance, superseded, slotted)
        combo = self.combos(imp, slotted)
        combo += superseded * 2
        return self.tables[output, combo, age]

    def _direct(self, output: int, age: np.ndarray, importance: np.ndarray,
                superseded: np.ndarray, slotted: np.ndarray) -> np.ndarray:
        x = forget_features(age, importance, superseded, slotted)
        with one_torch_thread(), torch.inference_mode():
            out = self.net.predict(torch.from_numpy(x), output)
            if output == STRENGTH:
                out = out.sigmoid_()
            return out.numpy()


__all__ = ["AGE_CAP", "LOG_RETENTION", "MAX_IMPORTANCES", "STRENGTH", "ForgetTable"]
