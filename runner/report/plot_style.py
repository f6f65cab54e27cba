"""The conventions every report figure shares, so the same shards give byte-identical
PNGs: a fixed dpi and sizes on an Agg canvas, no ``Software`` metadata, colours, line
styles and hollow markers in a fixed order, error bars from a mean and its interval,
the titles' and axes' wording, and how a setting's curves are split into panels.

**Panels.** A panel shows at most ``MAX_CURVES`` curves (legend entries), references
included. When a figure's curves do not fit in one, they are split (``split_panels``):
first by the curves' non-policy parameters (a memory budget, an embedder: the cells the
report pairs with one baseline cell), then, within such a group, by policy family
(``FAMILIES``), whole families sharing a panel while they fit, a family too large for
one split between its policies, and a policy with too many variants split into even
chunks. The references — the oracle (black, dashed) and the sweep's baseline (grey,
dash-dot) — are drawn in every panel of their group; the oracle, where it ran, in every
panel of the figure (at the panel's parameters if it ran there, else at its first)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
from matplotlib import style as mpl_style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from runner.metrics import METRICS
from runner.report.png import DPI, PNG_METADATA, save_png  # noqa: F401 (the plots save here)
from runner.results.aggregate import Setting, params_sort_key
from runner.results.tables import horizon_unit, variant_label

COLORS = [matplotlib.colormaps["tab10"](i) for i in range(10)]
# A panel's own curves: tab10 without its grey (the baseline's colour).
PANEL_COLORS = [c for i, c in enumerate(COLORS) if i != 7]
LINESTYLES = ["-", "--", ":", "-."]
# Hollow markers of distinct shapes, so cells at the same point stay visible.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
HOLLOW: dict[str, Any] = {"markerfacecolor": "none", "markersize": 8, "markeredgewidth": 1.5}

MAX_CURVES = 8  # legend entries per panel, references included
ORACLE = "oracle"
ORACLE_COLOR = "black"
BASELINE_COLOR = "0.45"
# label, policies (a ``pinned.`` wrapper is in its inner policy's family); any other
# policy is a family of its own, after these, by name
FAMILIES = (
    ("keep or overwrite", ("keep_all", "last_write_wins")),
    ("decay and expiry", ("ebbinghaus", "learned_forget", "lethe", "ttl", "window")),
    ("capacity", ("fifo", "lfu", "lifo", "lru")),
    ("incumbents", ("lethe_agent", "mem0")),
)


@dataclass(frozen=True)
class Point:
    mean: float
    lo: float
    hi: float

    def err(self) -> list[list[float]]:
        """Asymmetric error bar lengths (0 where the interval is undefined)."""
        lo = 0.0 if np.isnan(self.lo) else self.mean - self.lo
        hi = 0.0 if np.isnan(self.hi) else self.hi - self.mean
        return [[lo], [hi]]


def directed_label(metric: str) -> str:
    m = METRICS.get(metric)
    return f"{metric} {m.arrow}".strip() if m is not None else metric


def panel_style(i: int) -> dict[str, Any]:
    """The ``i``-th own curve of a panel: a distinct colour (a panel has at most 8)."""
    return {"color": PANEL_COLORS[i % len(PANEL_COLORS)],
            "linestyle": LINESTYLES[(i // len(PANEL_COLORS)) % len(LINESTYLES)]}


def reference_style(policy: str, j: int) -> dict[str, Any]:
    """The ``j``-th reference curve of a panel: the oracle black and dashed, the
    baseline grey and dash-dot (further ones of the same policy dotted, ...)."""
    if policy == ORACLE:
        return {"color": ORACLE_COLOR, "linestyle": ("--", ":", "-.")[j % 3]}
    return {"color": BASELINE_COLOR, "linestyle": ("-.", ":", "--")[j % 3]}


@contextmanager
def report_style() -> Iterator[None]:
    """matplotlib's default style (a user's matplotlibrc is ignored) and the report's
    sizes: every figure is drawn inside it."""
    with mpl_style.context("default"), matplotlib.rc_context(
        {"font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 8,
         "figure.dpi": DPI, "savefig.dpi": DPI}
    ):
        yield


def new_grid(width: float, height: float, nrows: int,
             ncols: int) -> tuple[Figure, list[list[Axes]]]:
    """A constrained-layout figure with an ``nrows`` x ``ncols`` grid of axes, by row."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, [list(row) for row in axes]


def new_rows(width: float, height: float, titles: Sequence[str],
             ncols: int) -> tuple[Figure, list[list[Axes]]]:
    """A constrained-layout figure of one row of ``ncols`` axes per title, each row a
    subfigure titled with it (one untitled row: plain axes)."""
    if len(titles) == 1 and not titles[0]:
        return new_grid(width, height, 1, ncols)
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    rows = []
    for sub, title in zip(fig.subfigures(len(titles), 1, squeeze=False)[:, 0], titles,
                          strict=True):
        sub.suptitle(title)
        rows.append(list(sub.subplots(1, ncols, squeeze=False)[0]))
    return fig, rows


def legend_right(ax: Axes, handles: Sequence[Any], labels: Sequence[str]) -> None:
    """The legend outside the axes, to its right: constrained layout makes room for it
    inside the figure."""
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0.0)


def setting_title(setting: Setting) -> str:
    w, h, k = setting
    unit = horizon_unit(w)
    return f"{w}, horizon {h}{' ' + unit if unit else ''}, k={k}"


# --- panels ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Panel:
    """One panel's curves, as indices into the figure's curve list: ``refs`` (the oracle,
    the baseline) drawn in the reference style, then ``own``."""

    title: str  # "" when the figure has one panel
    refs: tuple[int, ...]
    own: tuple[int, ...]

    @property
    def curves(self) -> tuple[int, ...]:
        return self.refs + self.own


def family(policy: str) -> tuple[int, str]:
    """(order, label) of the policy's family."""
    inner = policy.removeprefix("pinned.")
    for i, (label, names) in enumerate(FAMILIES):
        if inner in names:
            return i, label
    return len(FAMILIES), policy


def params_text(params: str) -> str:
    """``store.budget=60``: overrides as the report writes them ("" for none)."""
    return variant_label("", params).strip()


@dataclass
class _Chunk:
    own: list[int]
    policies: list[str]
    families: list[str]
    whole: bool  # whole families only
    part: tuple[int, int] | None = None  # (i, n): the i-th of a policy's n chunks

    def body(self) -> str:
        if self.part is not None:
            return f"{self.policies[0]} ({self.part[0]} of {self.part[1]})"
        if len(self.policies) <= 3 or not self.whole:
            return ", ".join(self.policies)
        return " + ".join(self.families)


def _pack(own: list[int], curves: Sequence[tuple[str, str]], cap: int) -> list[_Chunk]:
    """``own`` into chunks of at most ``cap``: by family; a family larger than ``cap`` by
    policy, its smaller policies together while they fit, then each policy with more than
    ``cap`` in even chunks; then neighbouring chunks (not parts of a policy) together
    while they fit."""
    by_policy: dict[str, list[int]] = {}
    for i in own:
        by_policy.setdefault(curves[i][0], []).append(i)
    families: dict[tuple[int, str], list[str]] = {}
    for policy in by_policy:
        families.setdefault(family(policy), []).append(policy)
    chunks: list[_Chunk] = []
    for fam in sorted(families):
        chunks += _family_chunks(fam[1], families[fam], by_policy, cap)
    return _merge(chunks, cap)


def _family_chunks(label: str, policies: list[str], by_policy: dict[str, list[int]],
                   cap: int) -> list[_Chunk]:
    """One family's curves in chunks of at most ``cap``: the whole family if it fits;
    else its policies of at most ``cap`` curves together while they fit, then each
    larger policy in even chunks."""
    idx = [i for p in policies for i in by_policy[p]]
    if len(idx) <= cap:
        return [_Chunk(idx, list(policies), [label], True)]
    chunks: list[_Chunk] = []
    current: _Chunk | None = None
    for p in (p for p in policies if len(by_policy[p]) <= cap):
        pi = by_policy[p]
        if current is not None and len(current.own) + len(pi) <= cap:
            current.own += pi
            current.policies.append(p)
        else:
            current = _Chunk(list(pi), [p], [label], False)
            chunks.append(current)
    for p in (p for p in policies if len(by_policy[p]) > cap):
        pi = by_policy[p]
        n = math.ceil(len(pi) / cap)
        size = math.ceil(len(pi) / n)
        chunks += [_Chunk(pi[j * size:(j + 1) * size], [p], [label], False, (j + 1, n))
                   for j in range(n)]
    return chunks


def _merge(chunks: list[_Chunk], cap: int) -> list[_Chunk]:
    """Neighbouring chunks together while they fit in ``cap`` (never a part of a
    policy)."""
    merged: list[_Chunk] = []
    for c in chunks:
        last = merged[-1] if merged else None
        if (last is not None and last.part is None and c.part is None
                and len(last.own) + len(c.own) <= cap):
            last.own += c.own
            last.policies += c.policies
            last.families += [f for f in c.families if f not in last.families]
            last.whole = last.whole and c.whole
        else:
            merged.append(c)
    return merged


def split_panels(curves: Sequence[tuple[str, str]], baseline: str,
                 limit: int = MAX_CURVES) -> list[Panel]:
    """The panels of a figure whose curves are ``curves`` (policy, the parameters that
    group them: the non-policy ones), each at most ``limit`` curves; every curve is in
    exactly one panel's ``own`` or is a reference of its group. Deterministic: the order
    of ``curves`` and of the groups' parameters."""
    oracle, base = _references(curves, baseline)
    max_refs = max(1, limit // 2 - 1)  # 3 of 8: the rest of a panel is its own curves
    if len(curves) <= limit:
        return [_one_panel(len(curves), oracle, base, max_refs)]
    rests = sorted({r for _, r in curves}, key=params_sort_key)
    elsewhere = _oracle_elsewhere(curves, oracle, rests)
    panels: list[Panel] = []
    for rest in rests:
        group = [i for i, (_, r) in enumerate(curves) if r == rest]
        ref_o = [i for i in group if i in oracle] or elsewhere
        refs = _group_refs(ref_o, [i for i in group if i in base], max_refs)
        own = [i for i in group if i not in refs]
        panels += _group_panels(params_text(rest), refs, own, curves, limit)
    return panels


def _references(curves: Sequence[tuple[str, str]], baseline: str
                ) -> tuple[list[int], list[int]]:
    """The curves drawn as references: the oracle's, and the baseline's."""
    oracle = [i for i, (p, _) in enumerate(curves) if p == ORACLE]
    base = [i for i, (p, _) in enumerate(curves) if p == baseline and p != ORACLE]
    return oracle, base


def _one_panel(n: int, oracle: list[int], base: list[int], max_refs: int) -> Panel:
    """The one panel of a figure whose ``n`` curves fit, its references as a group's."""
    refs = _group_refs(oracle, base, max_refs)
    return Panel("", tuple(refs), tuple(i for i in range(n) if i not in refs))


def _oracle_elsewhere(curves: Sequence[tuple[str, str]], oracle: list[int],
                      rests: list[str]) -> list[int]:
    """The oracle's curves at the first of ``rests`` it ran at: a group it did not run in
    draws them as its references (none if the oracle did not run)."""
    first = next((r for r in rests if any(curves[i][1] == r for i in oracle)), None)
    return [i for i in oracle if curves[i][1] == first]


def _group_refs(ref_o: list[int], ref_b: list[int], max_refs: int) -> list[int]:
    """A group's references: its oracle curves (at most ``max_refs``), then its baseline
    curves if they all fit too."""
    ref_o = ref_o[:max_refs]
    if len(ref_o) + len(ref_b) > max_refs:
        ref_b = []
    return ref_o + ref_b


def _group_panels(prefix: str, refs: list[int], own: list[int],
                  curves: Sequence[tuple[str, str]], limit: int) -> list[Panel]:
    """One group's panels, titled after ``prefix`` (its parameters): one if its curves
    fit in ``limit``, else its own curves packed into chunks, each drawn with ``refs``."""
    if len(refs) + len(own) <= limit:
        names = list(dict.fromkeys(curves[i][0] for i in own or refs))
        body = ", ".join(names) if len(names) <= 3 else " + ".join(
            dict.fromkeys(family(p)[1] for p in names))
        return [Panel(_title(prefix, body), tuple(refs), tuple(own))]
    return [Panel(_title(prefix, chunk.body()), tuple(refs), tuple(chunk.own))
            for chunk in _pack(own, curves, limit - len(refs))]


def _title(prefix: str, body: str) -> str:
    return f"{prefix}: {body}" if prefix else body


def rest_params(params: str, drop: Sequence[str] = ()) -> str:
    """The cell's non-policy overrides (and not ``drop``), as canonical JSON: what groups
    curves into panels."""
    kept = {k: v for k, v in json.loads(params).items()
            if not k.startswith("policy.") and k not in drop}
    return json.dumps(kept, sort_keys=True)
