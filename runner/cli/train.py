"""``fbench train``: retrain the shipped weights, or check they are reproduced."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from runner.cli.app import app, console, user_errors


@app.command()
@user_errors
def train(
    model: Annotated[str, typer.Argument(help="tagger, forget or all.")] = "all",
    check: Annotated[
        bool, typer.Option(help="Retrain and compare with the shipped weights; write nothing.")
    ] = False,
) -> None:
    """Retrain the shipped PyTorch weights (bit-for-bit the same on any x86-64 CPU)."""
    from runner.errors import lookup
    from runner.train import TRAINERS, likely_cause, weight_differences, write_weights

    names = sorted(TRAINERS) if model == "all" else [model]
    for name in names:
        lookup(TRAINERS, name, "model")
    failed = []
    for name in names:
        start = time.perf_counter()
        if check:
            diffs = weight_differences(name)
            verdict = "identical to" if not diffs else "DIFFERS from"
            console.print(f"{name}: {verdict} the shipped weights "
                          f"({time.perf_counter() - start:.1f} s)")
            for line in diffs:
                console.print(f"  {line}", markup=False)
            if diffs:
                console.print(f"  likely cause: {likely_cause(name, diffs)}", markup=False)
                failed.append(name)
        else:
            path = write_weights(name)
            console.print(f"{name}: wrote {path} ({time.perf_counter() - start:.1f} s)")
    if failed:
        raise typer.Exit(1)


