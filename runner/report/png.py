"""Saving a report figure: a 256-colour palette PNG, deterministic, written atomically."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from runner.results.atomic import write_bytes

DPI = 100
PNG_METADATA: dict[str, Any] = {"Software": None}  # no Software tag: the same bytes anywhere


def save_png(fig: Figure, path: Path) -> None:
    """The figure as a 256-colour palette PNG (Pillow's fast octree, no dithering: a
    fraction of the RGBA file's bytes, the same picture to the eye, since RESULTS.html
    embeds every plot), written atomically."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=DPI, metadata=PNG_METADATA)
    raw.seek(0)
    small = Image.open(raw).convert("RGB").quantize(
        colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    write_bytes(path, out.getvalue())
