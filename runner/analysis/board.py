"""The board: every memory cell of a setting ranked by its regret against the oracle at
equal memory, paired by seed, with the memories of a new sweep placed among them.

A *setting* is a workload, its version, the horizon, k and the workload's parameters
(``workload.*``). A *cell* is one memory at a setting: its source (a published sweep's
name, or ``yours``), its policy, its own parameters (``policy.*``, ``store.*``) and the
embedder it ranks with. Everything comes from per-seed final rows
(``runner.results.finals``).

- **Regret.** On each seed, the oracle's current recall at the cell's budget minus the
  cell's: the budget is the smallest oracle capacity published at the setting that
  holds the cell's mean final size (the unbounded oracle when none does), the oracle at
  the cell's embedder (at ``DEFAULT_EMBEDDER`` for a memory that ranks by its own
  means). Its interval is the interval of those per-seed differences within [-1, 1]
  (``runner.analysis.stats``), over the seeds both have.
- **Rank.** A range, from paired tests: every two cells of the setting are compared on
  their per-seed regrets (the sign-flip test of ``runner.analysis.stats``, over the
  seeds both have), Holm-adjusted over all the setting's pairs; a cell ranks at best
  1 + the number of cells significantly better, at worst the number of cells less those
  it is significantly better than. Cells no test tells apart share ranks; a cell of few
  seeds gets a wide range, never a top rank by default.
- **Yours against each.** A cell of yours gets the paired Δ of its regret against every
  published cell at its setting (yours − theirs, per seed, within [-2, 2]), with the
  sign-flip p, Holm-adjusted over that cell's comparisons.
- **Refusals.** A cell of yours that matches no published setting, or runs seeds the
  published oracle lacks, or ran a library at another version than the published cell
  of the same memory, is not placed; ``Board.refused`` says, in one line each, what
  differs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from runner.analysis import stats

YOURS = "yours"
ORACLE = "oracle"
DEFAULT_EMBEDDER = "hashing"
REGRET = "recall_current_at_k"
# the metrics each row shows besides its regret (mean and interval), and its cost
KEY_METRICS = ("contradiction_rate", "recall_current_at_k", "false_forget_rate", "final_size")
COST = ("wall_s", "query_ms_mean")
# an oracle cell's parameters: its budget (either way of setting one) and its embedder
ORACLE_PARAMS = frozenset({"policy.capacity", "store.budget", "store.embedder"})
COLUMNS = ("source", "workload", "workload_version", "horizon", "k", "policy", "params",
           "embedder", "seed", "versions", *KEY_METRICS, *COST)


@dataclass(frozen=True, order=True)
class Setting:
    workload: str
    version: str
    horizon: int
    k: int
    params: str  # the workload's parameters, canonical JSON

    def label(self) -> str:
        extra = f" {self.params}" if self.params != "{}" else ""
        return f"{self.workload} v{self.version}, horizon {self.horizon}, k {self.k}{extra}"


@dataclass(frozen=True, order=True)
class Cell:
    source: str
    policy: str
    params: str  # the memory's own parameters, canonical JSON
    embedder: str

    def budget(self) -> int:
        """The cell's memory budget in entries (0: unbounded): an oracle's capacity, or
        the store's budget."""
        p = json.loads(self.params)
        return int(p.get("policy.capacity", p.get("store.budget", 0)))


@dataclass(frozen=True)
class Versus:
    """One cell of yours against one published cell, paired by seed on regret."""

    theirs: Cell
    n: int
    delta: float
    ci_low: float
    ci_high: float
    p: float
    p_holm: float


@dataclass(frozen=True)
class Row:
    setting: Setting
    cell: Cell
    n: int
    budget: int
    regret: float
    regret_low: float
    regret_high: float
    metrics: Mapping[str, tuple[float, float, float]]  # mean, interval
    cost: Mapping[str, float]  # mean seconds a job, ms a query: timing, not deterministic
    per_seed: Mapping[int, float] = field(default_factory=dict)  # the regret by seed
    rank: int = 0  # best rank the intervals allow
    rank_worst: int = 0
    versus: tuple[Versus, ...] = ()


@dataclass(frozen=True)
class Board:
    rows: tuple[Row, ...]
    refused: tuple[str, ...] = ()
    placed: tuple[Cell, ...] = field(default=())


# --- reading final rows into cells ------------------------------------------------------


def split_params(params: str) -> tuple[str, str]:
    """(the workload's parameters, the memory's own), each canonical JSON."""
    p = json.loads(params or "{}")
    workload = {k: v for k, v in p.items() if k.startswith("workload.")}
    own = {k: v for k, v in p.items() if not k.startswith("workload.")}
    return json.dumps(workload, sort_keys=True), json.dumps(own, sort_keys=True)


class Cells:
    """Final rows grouped by setting and cell: each cell's per-seed values."""

    def __init__(self, rows: Iterable[Mapping[str, Any]], source: str | None = None) -> None:
        self.values: dict[Setting, dict[Cell, dict[int, Mapping[str, Any]]]] = {}
        for r in rows:
            if source is not None:
                r = {**r, "source": source}
            wparams, own = split_params(r["params"])
            setting = Setting(r["workload"], str(r["workload_version"]), int(r["horizon"]),
                              int(r["k"]), wparams)
            cell = Cell(r["source"], r["policy"], own, r["embedder"])
            self.values.setdefault(setting, {}).setdefault(cell, {})[int(r["seed"])] = r

    @classmethod
    def of(cls, table: pa.Table, source: str | None = None) -> Cells:
        """``source``: every row's, in place of the table's ``source`` column."""
        return cls(table.select([c for c in COLUMNS if c in table.column_names]).to_pylist(),
                   source)

    def seeds(self, setting: Setting, cell: Cell) -> list[int]:
        return sorted(self.values[setting][cell])

    def column(self, setting: Setting, cell: Cell, metric: str, seeds: Sequence[int]
               ) -> np.ndarray:
        by_seed = self.values[setting][cell]
        return np.array([_number(by_seed[s].get(metric)) for s in seeds], dtype=np.float64)


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


# --- the oracle at a cell's budget --------------------------------------------------------


def oracles(cells: Mapping[Cell, Mapping[int, Any]]) -> dict[tuple[str, int], Cell]:
    """The published oracle cells of a setting by (embedder, budget): of two sweeps'
    oracles at one budget (the same jobs), the one with the most seeds."""
    found: dict[tuple[str, int], Cell] = {}
    for c in sorted(cells, key=lambda c: (-len(cells[c]), c)):
        if c.policy == ORACLE and c.source != YOURS and \
                set(json.loads(c.params)) <= ORACLE_PARAMS:
            found.setdefault((c.embedder, c.budget()), c)
    return found


def oracle_for(cell: Cell, size: float, available: Mapping[tuple[str, int], Cell]
               ) -> Cell | None:
    """The oracle a cell's regret is taken against: at its embedder (the default one for
    a memory that ranks by its own means), the smallest budget holding ``size``."""
    embedder = cell.embedder if any(e == cell.embedder for e, _ in available) \
        else DEFAULT_EMBEDDER
    budgets = sorted(b for e, b in available if e == embedder)
    held = [b for b in budgets if b > 0 and b >= size]
    budget = held[0] if held else 0
    return available.get((embedder, budget))


# --- the board --------------------------------------------------------------------------


def build(published: pa.Table, yours: pa.Table | None = None) -> Board:
    """The board of ``published`` final rows (a ``source`` column naming each row's
    sweep): every setting's, or, with ``yours`` (one sweep's final rows), the settings
    its cells are placed at, those cells among them."""
    cells = Cells.of(published)
    if yours is None:
        return Board(tuple(r for s in sorted(cells.values) for r in setting_rows(cells, s)))
    mine = Cells.of(yours, source=YOURS)
    kept, refused = admit(cells, mine)
    for setting, cell in kept:
        cells.values[setting][cell] = mine.values[setting][cell]
    settings = sorted({s for s, _ in kept})
    return Board(tuple(r for s in settings for r in setting_rows(cells, s)), tuple(refused),
                 tuple(sorted({c for _, c in kept})))


def setting_rows(cells: Cells, setting: Setting) -> list[Row]:
    """Every cell of a setting but the oracle's, with its regret, ranked."""
    by_cell = cells.values[setting]
    available = oracles(by_cell)
    if not available:
        return []
    rows = [r for c in sorted(by_cell) if c.policy != ORACLE
            for r in [cell_row(cells, setting, c, available)] if r is not None]
    return [_versus(r, rows) if r.cell.source == YOURS else r for r in rank(rows)]


def cell_row(cells: Cells, setting: Setting, cell: Cell,
             available: Mapping[tuple[str, int], Cell]) -> Row | None:
    seeds = cells.seeds(setting, cell)
    size = float(np.nanmean(cells.column(setting, cell, "final_size", seeds)))
    oracle = oracle_for(cell, size, available)
    if oracle is None:
        return None
    seeds = sorted(set(seeds) & set(cells.seeds(setting, oracle)))
    per_seed = _regret(cells, setting, cell, oracle, seeds)
    if not per_seed:
        return None
    delta = np.array(list(per_seed.values()))
    lo, hi = stats.interval(delta, (-1.0, 1.0))
    metrics = {}
    for m in KEY_METRICS:
        x = cells.column(setting, cell, m, seeds)
        x = x[~np.isnan(x)]
        bounds = None if m == "final_size" else (0.0, 1.0)
        mlo, mhi = stats.interval(x, bounds)
        metrics[m] = (stats.mean(x) if len(x) else float("nan"), mlo, mhi)
    cost = {m: float(np.nanmean(cells.column(setting, cell, m, seeds))) for m in COST}
    return Row(setting, cell, len(delta), oracle.budget(), stats.mean(delta), lo, hi,
               metrics, cost, per_seed=per_seed)


def _regret(cells: Cells, setting: Setting, cell: Cell, oracle: Cell,
            seeds: Sequence[int]) -> dict[int, float]:
    """The cell's regret on each of ``seeds`` where both have a value."""
    delta = cells.column(setting, oracle, REGRET, seeds) - \
        cells.column(setting, cell, REGRET, seeds)
    return {s: float(d) for s, d in zip(seeds, delta, strict=True) if not np.isnan(d)}


def _pair(a: Mapping[int, float], b: Mapping[int, float], key: str) -> stats.Paired:
    """Per-seed regrets ``a`` against ``b`` over the seeds both have (within [-2, 2])."""
    seeds = sorted(set(a) & set(b))
    return stats.paired(np.array([a[s] for s in seeds]), np.array([b[s] for s in seeds]),
                        "lower", key, (-1.0, 1.0))


def rank(rows: Sequence[Row]) -> list[Row]:
    """Rows by mean regret, each with the range of ranks the setting's paired tests allow
    (module docstring)."""
    from dataclasses import replace

    ordered = sorted(rows, key=lambda r: (r.regret, r.cell))
    pairs = [(i, j) for i in range(len(ordered)) for j in range(i + 1, len(ordered))]
    found = [_pair(ordered[i].per_seed, ordered[j].per_seed,
                   f"{ordered[i].cell}\x1f{ordered[j].cell}") for i, j in pairs]
    adjusted = stats.holm([p.p for p in found]) if found else np.array([])
    beaten = [0] * len(ordered)  # cells significantly better than this one
    beats = [0] * len(ordered)  # cells this one is significantly better than
    for (i, j), p, q in zip(pairs, found, adjusted, strict=True):
        if q < stats.ALPHA and p.mean != 0:
            better, worse = (i, j) if p.mean < 0 else (j, i)
            beaten[worse] += 1
            beats[better] += 1
    return [replace(r, rank=1 + beaten[i], rank_worst=len(ordered) - beats[i])
            for i, r in enumerate(ordered)]


def _versus(row: Row, rows: Sequence[Row]) -> Row:
    """``row`` (a cell of yours) with its paired Δ regret against every published row,
    Holm-adjusted over those comparisons."""
    from dataclasses import replace

    found = [(o.cell, _pair(row.per_seed, o.per_seed, f"{row.cell}\x1f{o.cell}"))
             for o in rows if o.cell.source != YOURS]
    adjusted = stats.holm([p.p for _, p in found]) if found else np.array([])
    return replace(row, versus=tuple(
        Versus(c, p.n, p.mean, p.ci_low, p.ci_high, p.p, float(adjusted[i]))
        for i, (c, p) in enumerate(found)))


# --- what may be placed -----------------------------------------------------------------


def admit(published: Cells, yours: Cells) -> tuple[set[tuple[Setting, Cell]], list[str]]:
    """The (setting, cell) pairs of yours that can be placed, and one line for each cell
    that cannot, saying what differs."""
    kept: set[tuple[Setting, Cell]] = set()
    refused: list[str] = []
    for setting, by_cell in sorted(yours.values.items()):
        for cell in sorted(c for c in by_cell if c.policy != ORACLE):
            why = refusal(published, setting, cell, yours)
            if why is None:
                kept.add((setting, cell))
            else:
                refused.append(f"{cell.policy} {cell.params} on {setting.label()}: {why}")
    return kept, refused


def refusal(published: Cells, setting: Setting, cell: Cell, yours: Cells) -> str | None:
    """Why a cell of yours cannot be paired with the published results (None: it can)."""
    if setting not in published.values:
        return differs(setting, list(published.values))
    available = oracles(published.values[setting])
    if not available:
        return "the published results hold no oracle at this setting"
    seeds = set(yours.seeds(setting, cell))
    published_seeds = set().union(*(published.seeds(setting, o) for o in available.values()))
    missing = sorted(seeds - published_seeds)
    if missing:
        return (f"seeds {_ranges(missing)} are not published (published: "
                f"{_ranges(sorted(published_seeds))}); run with --seed-list "
                f"{','.join(map(str, sorted(seeds & published_seeds))) or '0'}")
    return _version_clash(published, setting, cell, yours)


def differs(setting: Setting, published: Sequence[Setting]) -> str:
    """One line naming how ``setting`` differs from the closest published one."""
    same = [s for s in published if s.workload == setting.workload]
    if not same:
        names = ", ".join(sorted({s.workload for s in published}))
        return f"workload {setting.workload} is not published (published: {names})"
    for name, hint in (("version", "the published results are of another version of "
                        "the workload"),
                       ("horizon", "run with --horizons {v}"), ("k", "run with --k {v}"),
                       ("params", "run with the published workload parameters")):
        values = sorted({getattr(s, name) for s in same})
        if getattr(setting, name) not in values:
            shown = ", ".join(map(str, values))
            return (f"{name} {getattr(setting, name)} vs published {shown}; "
                    f"{hint.format(v=values[0])}")
        same = [s for s in same if getattr(s, name) == getattr(setting, name)]
    return "no published setting matches"


def _version_clash(published: Cells, setting: Setting, cell: Cell, yours: Cells
                   ) -> str | None:
    """A library version of yours that differs from the published cells of the same
    memory at the setting."""
    mine = _versions(yours.values[setting][cell].values())
    for other, by_seed in published.values[setting].items():
        if other.policy != cell.policy:
            continue
        theirs = _versions(by_seed.values())
        for lib in sorted(set(mine) & set(theirs) - {"fbench", "python"}):
            if mine[lib] != theirs[lib]:
                return (f"{lib} {', '.join(sorted(mine[lib]))} vs published "
                        f"{', '.join(sorted(theirs[lib]))}")
    return None


def _versions(rows: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in rows:
        for lib, v in json.loads(r.get("versions") or "{}").items():
            out.setdefault(lib, set()).add(str(v))
    return out


def _ranges(seeds: Sequence[int]) -> str:
    """``0–19`` or ``0–4, 7``."""
    out: list[str] = []
    start = prev = None
    for s in seeds:
        if start is None:
            start = prev = s
        elif s == prev + 1:  # type: ignore[operator]
            prev = s
        else:
            out.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = s
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(out)
