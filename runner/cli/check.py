"""``fbench check NAME``: the adapter contract on any memory, and what it did."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from runner.cli.app import app, console, user_errors

if TYPE_CHECKING:
    from runner.adapters.contract import Report, StreamReport, Verdict


@app.command()
@user_errors
def check(
    name: Annotated[str, typer.Argument(help="A memory or policy: a name, an installed "
                                             "plugin, or module:attr.")],
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="policy.KEY=VALUE (repeatable).")] = None,
    fast: Annotated[bool, typer.Option(
        "--fast", help="Short streams (240 turns, 12 days) for the edit-check loop; "
                       "rules about deletions may go unexercised.")] = False,
    horizons: Annotated[str | None, typer.Option(
        "--horizons", help="Both streams' horizon as a multiple of the default, e.g. 2x "
                           "(default 1x: 3000 turns, 365 days).")] = None,
) -> None:
    """Run the adapter contract on a memory, on a stream of each workload family at its
    default horizon (long enough that a memory which forgets does): each rule pass, FAIL
    (with what to fix), not exercised (with what to rerun) or not run; then what the
    memory did. Exit 1 if any rule fails."""
    from runner.adapters.contract import FAST_STREAMS, STREAMS, check_memory
    from runner.spec.params import split_assignment

    streams = FAST_STREAMS if fast else _scaled(STREAMS, horizons)
    report = check_memory(name, [split_assignment(p) for p in param or []], streams=streams)
    for v in report.verdicts:
        _verdict(v, report, fast)
    for s in report.streams:
        _stream(s)
    if report.forgot_nothing:
        console.print(f"{name} forgot nothing on these streams: its deletions are untested "
                      "(a longer --horizons, or a setting that forgets)", markup=False)
    console.print(_summary(name, report.verdicts), markup=False)
    if any(not v.ok for v in report.verdicts):
        raise typer.Exit(1)


def _scaled(streams: tuple[tuple[str, int | None], ...], horizons: str | None
            ) -> tuple[tuple[str, int | None], ...]:
    if horizons is None:
        return streams
    from runner.errors import FbenchError
    from workloads import WORKLOADS

    text = horizons.strip().lower()
    try:
        factor = float(text[:-1]) if text.endswith("x") else float("nan")
    except ValueError:
        factor = float("nan")
    if not factor > 0:
        raise FbenchError(f"--horizons {horizons!r} is not a multiple of the default "
                          "horizon: give e.g. 2x or 0.5x")
    return tuple((w, max(1, round(factor * WORKLOADS[w].default_horizon)))
                 for w, _ in streams)


def _verdict(v: Verdict, report: Report, fast: bool) -> None:
    console.print(f"{v.status:<14}{v.rule.name}: {v.rule.says}", markup=False)
    if not v.ok:
        console.print(f"{'':14}{v.failure}", markup=False)
        fix = (f"fix the build: {report.cause}" if v.rule.name == "builds" and _is_missing(
            report.cause) else f"fix: {v.rule.fix}")
        console.print(f"{'':14}{fix}", markup=False)
    elif v.status == "not exercised":
        rerun = ("rerun without --fast" if fast else
                 "rerun with a longer --horizons (e.g. 2x) or a setting that forgets")
        console.print(f"{'':14}the run never led {v.rule.needs}: {rerun}", markup=False)


def _is_missing(cause: str) -> bool:
    """A cause outside the adapter's code: a module, a package or a system library."""
    return cause.startswith(("ModuleNotFoundError", "ImportError", "OSError",
                             "FileNotFoundError", "MissingExtra", "FbenchError"))


def _stream(s: StreamReport) -> None:
    from runner.adapters.contract import RANDOM_SDS

    forgot = (", ".join(f"{n:,} {reason}" for reason, n in s.forgotten.items())
              if s.forgotten else "nothing")
    console.print(
        f"{s.workload}: {s.horizon:,} {s.unit}, {s.events:,} events ({s.observations:,} "
        f"observations, {s.questions:,} questions), {s.seconds_per_event * 1000:.2f} ms an "
        f"event; forgot {forgot}", markup=False)
    console.print(
        f"{'':4}current recall {s.recall:.3f}; keep_all's {s.keep_all_recall:.3f}; a random "
        f"top-k of what it held {s.random_recall:.3f}", markup=False)
    if s.looks_random:
        console.print(f"{'':4}warning: its retrieval looks random (its recall is within "
                      f"{RANDOM_SDS:g} standard deviations of a random top-k's): check how "
                      "it ranks (an embedder seeded per process, such as Python's hash(), "
                      "ranks at random)", markup=False)


def _summary(name: str, verdicts: list[Verdict]) -> str:
    counts = {s: sum(v.status == s for v in verdicts)
              for s in ("pass", "FAIL", "not exercised", "not run")}
    extra = "".join(f", {n} {s.lower() if s == 'FAIL' else s}"
                    for s, n in counts.items() if s != "pass" and n)
    return f"{name}: {counts['pass']} of {len(verdicts)} rules hold{extra}"
