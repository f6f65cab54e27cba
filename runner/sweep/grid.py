"""A sweep's jobs without one object per job held: the grid as cells, each job made
when it is asked for (a million jobs are a few hundred cells and a seed list).

A generator workload's cell is the jobs of one (workload, horizon, policy, params) that
differ by seed only: one template job and the seeds. A workload that reads data has a
job per seed that depends on the seed's data (its horizon, its data's identity), so
its cells hold their jobs, as many as there are data files. ``Subset`` is the jobs of
a grid at some positions (a plan's jobs to run): an index array, 8 bytes a job.
"""

from __future__ import annotations

import abc
import bisect
import dataclasses
import functools
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, overload

import numpy as np

from runner.spec.jobspec import JobSpec


class Cell(Protocol):
    """Jobs of a grid that are made together."""

    def __len__(self) -> int: ...

    def job(self, i: int) -> JobSpec: ...

    def representatives(self) -> Sequence[JobSpec]:
        """Jobs that between them carry every value but the seed (per-cell facts:
        the memory, the plugin code, the data)."""
        ...


@dataclass(frozen=True)
class SeedCell:
    """One template's jobs, one per seed."""

    template: JobSpec
    seeds: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.seeds)

    def job(self, i: int) -> JobSpec:
        return dataclasses.replace(self.template, seed=self.seeds[i])

    def representatives(self) -> Sequence[JobSpec]:
        return (self.template,)


@dataclass(frozen=True)
class ListCell:
    """Jobs made one by one (a data workload's, one per data file)."""

    jobs: tuple[JobSpec, ...]

    def __len__(self) -> int:
        return len(self.jobs)

    def job(self, i: int) -> JobSpec:
        return self.jobs[i]

    def representatives(self) -> Sequence[JobSpec]:
        return self.jobs


T = TypeVar("T")


class Made(Sequence[T]):
    """A sequence whose items are made when asked for (``_make``), none held."""

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @abc.abstractmethod
    def _make(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        n = len(self)
        if isinstance(i, slice):
            return [self._make(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"item {i} of {n}")
        return self._make(i)

    def __iter__(self) -> Iterator[T]:
        return (self._make(i) for i in range(len(self)))


class Grid(Made[JobSpec]):
    """Every job of a sweep, in a stable order: cell by cell, seed by seed."""

    def __init__(self, cells: Sequence[Cell]) -> None:
        self.cells = list(cells)
        self.offsets = [0]
        for cell in self.cells:
            self.offsets.append(self.offsets[-1] + len(cell))

    def __len__(self) -> int:
        return self.offsets[-1]

    def _make(self, i: int) -> JobSpec:
        c = bisect.bisect_right(self.offsets, i) - 1
        return self.cells[c].job(i - self.offsets[c])

    def __iter__(self) -> Iterator[JobSpec]:
        for cell in self.cells:
            for i in range(len(cell)):
                yield cell.job(i)

    def representatives(self) -> list[JobSpec]:
        """One job per generator cell, every job of a data cell."""
        return [j for cell in self.cells for j in cell.representatives()]

    def partitions(self) -> dict[tuple[str, str], list[int]]:
        """(workload, policy) -> its cells (the shards of a cell's jobs share a folder)."""
        out: dict[tuple[str, str], list[int]] = {}
        for c, cell in enumerate(self.cells):
            job = cell.representatives()[0]
            out.setdefault((job.workload, job.policy), []).append(c)
        return out

    def positions(self, c: int) -> Iterator[tuple[int, JobSpec]]:
        """(position in the grid, job) of every job of cell ``c``."""
        cell, start = self.cells[c], self.offsets[c]
        return ((start + i, cell.job(i)) for i in range(len(cell)))

    def has(self, job: JobSpec, *, any_code: bool = False) -> bool:
        """``job`` is one of this grid's (``any_code``: up to the plugin code and workload
        version that run it), known without a job held per job."""
        return (self._index_any_code if any_code else self._index).has(job)

    @functools.cached_property
    def _index(self) -> _Index:
        return _Index(self.cells, False)

    @functools.cached_property
    def _index_any_code(self) -> _Index:
        return _Index(self.cells, True)

    def weighted(self) -> Iterator[tuple[JobSpec, int]]:
        """(job, how many jobs it stands for): a generator cell's template and its
        seeds, a data cell's jobs one each."""
        for cell in self.cells:
            if isinstance(cell, SeedCell):
                yield cell.template, len(cell)
            else:
                yield from ((j, 1) for j in cell.representatives())


_Key = tuple[object, ...]


def _key(job: JobSpec, any_code: bool, seed: bool) -> _Key:
    """The fields a job is known by in a grid's index (no JSON, no hash of it): all but
    the seed for a generator cell's; ``any_code``: not its code, workload version or
    clock defaults."""
    code, version, defaults = (((), "1", ()) if any_code
                               else (job.code, job.workload_version, job.defaults))
    return (job.workload, job.policy, job.seed if seed else None, job.horizon, job.params,
            job.k, code, version, defaults)


def _seed_set(seeds: tuple[int, ...]) -> Container[int]:
    """The seeds, to test membership in: a range when they are one (``--seeds N``: no
    set of a million seeds), else a set."""
    if seeds and seeds == tuple(range(seeds[0], seeds[0] + len(seeds))):
        return range(seeds[0], seeds[0] + len(seeds))
    return frozenset(seeds)


def _either(a: Container[int], b: Container[int]) -> Container[int]:
    return a if a == b else frozenset(a) | frozenset(b)  # type: ignore[call-overload]


class _Index:
    """Membership in a grid: generator cells by their fields but the seed, and their
    seeds; a data cell's jobs each by its fields."""

    def __init__(self, cells: Sequence[Cell], any_code: bool) -> None:
        self.any_code = any_code
        self.seeds: dict[_Key, Container[int]] = {}
        self.data: set[_Key] = set()
        shared: dict[int, Container[int]] = {}  # (cells share their seed tuple)
        for cell in cells:
            if isinstance(cell, SeedCell):
                seeds = shared.setdefault(id(cell.seeds), _seed_set(cell.seeds))
                key = _key(cell.template, any_code, seed=False)
                # (two cells share a key when only their code differs: either's seeds)
                self.seeds[key] = _either(self.seeds[key], seeds) if key in self.seeds \
                    else seeds
            else:
                self.data.update(_key(j, any_code, seed=True) for j in cell.representatives())

    def has(self, job: JobSpec) -> bool:
        if job.seed in self.seeds.get(_key(job, self.any_code, seed=False), ()):
            return True
        return bool(self.data) and _key(job, self.any_code, seed=True) in self.data


class Subset(Made[JobSpec]):
    """The jobs of ``grid`` at ``positions`` (ascending), made when asked for."""

    def __init__(self, grid: Grid, positions: Sequence[int] | np.ndarray) -> None:
        self.grid = grid
        self.positions = np.asarray(positions, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.positions)

    def _make(self, i: int) -> JobSpec:
        return self.grid[int(self.positions[i])]

    def _counts(self) -> np.ndarray:
        cells = np.searchsorted(np.asarray(self.grid.offsets), self.positions, "right") - 1
        return np.bincount(cells, minlength=len(self.grid.cells))

    def representatives(self) -> list[JobSpec]:
        """One job per generator cell with a job here, every data job here."""
        return [job for job, _ in self.weighted()]

    def weighted(self) -> Iterator[tuple[JobSpec, int]]:
        """(job, how many jobs of this subset it stands for), as ``Grid.weighted``."""
        counts = self._counts()
        for c in np.flatnonzero(counts):
            cell = self.grid.cells[c]
            if isinstance(cell, SeedCell):
                yield cell.template, int(counts[c])
                continue
            start = self.grid.offsets[c]
            lo, hi = np.searchsorted(self.positions, [start, start + len(cell)])
            yield from ((cell.job(int(p) - start), 1) for p in self.positions[lo:hi])


class SpecJsons(Made[str]):
    """The canonical JSON of each job of a subset, made when asked for: what an
    executor is handed, without a string per job held."""

    def __init__(self, jobs: Subset, order: np.ndarray | None = None) -> None:
        """``order``: the subset's indices in the order to hand them out (default: as
        they are)."""
        self.jobs = jobs
        self.order = order

    def __len__(self) -> int:
        return len(self.jobs)

    def _make(self, i: int) -> str:
        return self.jobs[i if self.order is None else int(self.order[i])].canonical_json()
