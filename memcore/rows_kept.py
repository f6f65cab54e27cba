"""How far a cache of per-row values of some columns reaches (``RowsKept``)."""

from __future__ import annotations

from memcore.columns import Columns


class RowsKept:
    """How far a cache of per-row values of some ``Columns`` reaches: the columns, their
    layout and the rows filled. Only an add writes the fields such values come from, and
    only a compaction moves rows, so a cache computes the rows from ``first_new(cols)``
    on, then says so with ``filled(cols)``."""

    __slots__ = ("_of",)

    def __init__(self) -> None:
        self._of: tuple[Columns | None, int, int] = (None, -1, 0)

    @property
    def count(self) -> int:
        """The rows filled, of whichever columns."""
        return self._of[2]

    def first_new(self, cols: Columns) -> int:
        """The first row of ``cols`` without a kept value: 0 for other columns, after a
        compaction, or if the rows are fewer than were filled."""
        of, layout, done = self._of
        return done if of is cols and layout == cols.layout and done <= cols.n else 0

    def holds(self, cols: Columns, row: int) -> bool:
        """Whether ``row`` of ``cols``, as the rows are now, has a kept value."""
        of, layout, done = self._of
        return of is cols and layout == cols.layout and row < done

    def filled(self, cols: Columns) -> None:
        """Rows ``[0, n)`` of ``cols`` have their values kept."""
        self._of = (cols, cols.layout, cols.n)

    def filled_to(self, cols: Columns, count: int) -> None:
        """Rows ``[0, count)`` of ``cols`` have their values kept."""
        self._of = (cols, cols.layout, count)

    def forget(self) -> None:
        """No row has a kept value."""
        self._of = (None, -1, 0)
