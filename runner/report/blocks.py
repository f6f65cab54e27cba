"""Markdown building blocks the report's sections share: escaped tables, seed ranges,
counts and spans, setting titles, directed metric names and image links."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from runner.metrics import Metric
from runner.results.aggregate import Setting
from runner.results.tables import horizon_unit


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> list[str]:
    """A Markdown table; ``align`` holds one of l/r per column."""
    sep = {"l": "---", "r": "---:"}
    lines = ["| " + " | ".join(_md(h) for h in header) + " |",
             "| " + " | ".join(sep[a] for a in align) + " |"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return lines


def seed_ranges(seeds: Iterable[int]) -> str:
    """``0–4, 7, 9–10``: sorted seeds with consecutive runs collapsed."""
    ordered = sorted(set(seeds))
    parts: list[str] = []
    start = prev = None
    for s in [*ordered, None]:
        if s is not None and prev is not None and s == prev + 1:
            prev = s
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}–{prev}")
        start = prev = s
    return ", ".join(parts)


def setting_title(setting: Setting) -> str:
    w, h, k = setting
    unit = horizon_unit(w)
    return f"{w}, horizon {h}{' ' + unit if unit else ''}, k = {k}"


def span(values: Iterable[int]) -> str:
    vs = sorted(set(values))
    return str(vs[0]) if len(vs) == 1 else f"{vs[0]} to {vs[-1]}"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def directed(m: Metric) -> str:
    return f"{m.name} {m.arrow}".strip()


def images(shown: Iterable[Any], folder: Path) -> list[str]:
    """An image link per plot, its path relative to ``folder``."""
    lines = []
    for p in shown:
        rel = Path(os.path.relpath(p.path.resolve(), folder.resolve())).as_posix()
        lines += [f"![{p.title}]({rel})", ""]
    return lines
