"""``fbench check NAME``: the adapter contract, on any memory."""

from __future__ import annotations

from typing import Annotated

import typer

from runner.cli.app import app, console, user_errors


@app.command()
@user_errors
def check(
    name: Annotated[str, typer.Argument(help="A memory or policy: a name, an installed "
                                             "plugin, or module:attr.")],
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="policy.KEY=VALUE (repeatable).")] = None,
) -> None:
    """Run the adapter contract on a memory, on small streams of both workload families;
    print each rule as pass or fail (with what to fix); exit 1 if any fails."""
    from runner.adapters.contract import check_memory
    from runner.spec.params import split_assignment

    verdicts = check_memory(name, [split_assignment(p) for p in param or []])
    for v in verdicts:
        mark = "pass" if v.ok else "FAIL"
        console.print(f"{mark}  {v.rule.name}: {v.rule.says}", markup=False)
        if not v.ok:
            console.print(f"      {v.failure}", markup=False)
            console.print(f"      fix: {v.rule.fix}", markup=False)
    failed = [v for v in verdicts if not v.ok]
    console.print(f"{name}: {len(verdicts) - len(failed)} of {len(verdicts)} rules hold",
                  markup=False)
    if failed:
        raise typer.Exit(1)
