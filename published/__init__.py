"""fbench's published results, shipped with it as package data: each published sweep's
folder (``results``, ``incumbents``, ...) with its per-seed rows (``finals.parquet``:
every job's final row and its whole identity, ``runner.results.finals``), its spec and
its memories; ``calibration/`` holds the headroom check of every default workload.
``fbench board`` pairs a new sweep with them by seed."""

from __future__ import annotations

from pathlib import Path


def folder() -> Path:
    """Where the published sweeps' folders are, in the repository or an installed fbench."""
    return Path(__file__).resolve().parent
