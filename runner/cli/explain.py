"""``fbench explain``: why a job scored as it did, from its evidence
(``runner.job.samples``, told by ``runner.analysis.explain``).

Two ways in: a sweep's folder (``fbench explain OUT --policy P``: the job's samples as
``fbench sweep --samples`` wrote them), or the job itself (``fbench explain --workload W
--policy P``: run here, with its evidence). ``--against P2`` puts a second memory on the
same stream beside it.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict, dataclass
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import typer
from rich.markup import escape
from rich.table import Table

from runner.cli.app import app, console, user_errors
from runner.errors import FbenchError

HEADLINE = ("contradiction_rate", "recall_at_k", "recall_current_at_k", "false_forget_rate",
            "final_size", "n_forgotten", "n_queries")
COORDS = ("job_id", "workload", "policy", "seed", "horizon", "k", "params")


@dataclass(frozen=True)
class Story:
    """One job's evidence and final metrics."""

    job: dict[str, Any]  # the job's coordinates (``COORDS``)
    metrics: dict[str, float]
    queries: pa.Table
    deletions: pa.Table
    reported: bool  # the memory reported its removals (else the table is partial)


@app.command()
@user_errors
def explain(
    out: Annotated[str | None, typer.Argument(
        help="A sweep's folder run with --samples; leave out to run the job here.")] = None,
    policy: Annotated[str, typer.Option(help="The memory to explain.")] = "",
    workload: Annotated[str | None, typer.Option(help="Its workload (needed when OUT "
                                                       "holds several).")] = None,
    seed: Annotated[int | None, typer.Option(help="Its seed (default: the lowest).")] = None,
    horizon: Annotated[str | None, typer.Option(
        metavar="N|Nx", help="Its horizon (in OUT: needed when several ran).")] = None,
    k: Annotated[int, typer.Option(help="Items retrieved per query (running here).")] = 5,
    param: Annotated[list[str] | None, typer.Option(
        help="namespace.key=value, as fbench run takes them (running here).")] = None,
    against: Annotated[str | None, typer.Option(
        help="A second memory on the same stream: the questions where one fails and the "
             "other does not.")] = None,
    top: Annotated[int, typer.Option(help="How many worst queries and false forgets.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Why a memory scored as it did: its worst queries, its false forgets, and what it
    deleted, by reason and over time."""
    if not policy:
        raise FbenchError("give --policy P (the memory to explain)")
    if top < 1:
        raise FbenchError(f"--top must be at least 1, got {top}")
    if out is not None:
        stories = _from_sweep(out, policy, workload, seed, horizon, against)
    else:
        if workload is None:
            raise FbenchError("give OUT (a sweep run with --samples) or --workload W to run "
                              "the job here")
        stories = _run_here(workload, policy, seed or 0, horizon, k, param or [], against)
    _tell(stories, top, as_json)


# --- finding the jobs --------------------------------------------------------------------


def _from_sweep(out: str, policy: str, workload: str | None, seed: int | None,
                horizon: str | None, against: str | None) -> list[Story]:
    from runner.results.load import read_rows
    from runner.results.where import location

    folder = location(out)
    final = read_rows(folder, final=[*COORDS, *_metric_columns()]).final
    first = _pick(final, folder, policy, workload, seed, horizon)
    stories = [_story_in(folder, first)]
    if against is not None:
        same = {"workload": first["workload"], "seed": first["seed"],
                "horizon": str(first["horizon"])}
        other = _pick(final, folder, against, same["workload"], int(same["seed"]),
                      same["horizon"])
        stories.append(_story_in(folder, other))
    return stories


def _metric_columns() -> list[str]:
    from runner.metrics import METRICS

    return [name for name in METRICS if name in HEADLINE or name.startswith("n_queries")]


def _pick(final: pa.Table, out: Any, policy: str, workload: str | None, seed: int | None,
          horizon: str | None) -> dict[str, Any]:
    """The one final row of OUT for these coordinates, or one line saying which to add."""
    rows = final.filter(pc.field("policy") == policy)
    if rows.num_rows == 0:
        have = sorted(set(final.column("policy").to_pylist()))
        raise FbenchError(f"no policy {policy!r} in {out}; it holds {', '.join(have)}")
    for name, want in (("workload", workload), ("horizon", horizon)):
        if want is not None:
            value = int(want) if name == "horizon" and want.isdigit() else want
            kept = rows.filter(pc.field(name) == value)
            if kept.num_rows == 0:
                have = sorted(set(rows.column(name).to_pylist()))
                raise FbenchError(f"{policy} ran with no {name} {want} in {out}; it ran "
                                  f"{', '.join(map(str, have))}")
            rows = kept
    seeds = sorted(set(rows.column("seed").to_pylist()))
    pick = seeds[0] if seed is None else seed
    if pick not in seeds:
        raise FbenchError(f"{policy} has no seed {seed} in {out}; it ran seeds "
                          f"{_short(seeds)} (choose one with --seed)")
    rows = rows.filter(pc.field("seed") == pick)
    for name, flag in (("workload", "--workload"), ("horizon", "--horizon"), ("k", None),
                       ("params", None)):
        values = sorted(set(rows.column(name).to_pylist()), key=str)
        if len(values) > 1:
            fix = f"choose one with {flag}" if flag else "explain one of them from its " \
                  "own sweep folder, or run it here (without OUT)"
            raise FbenchError(f"{policy} ran with several {name} values in {out} "
                              f"({_short(values)}): {fix}")
    return dict(rows.slice(0, 1).to_pylist()[0])


def _short(values: list[Any]) -> str:
    text = ", ".join(map(str, values[:6]))
    return text + (", …" if len(values) > 6 else "")


def _story_in(out: Any, row: dict[str, Any]) -> Story:
    """The job's samples in OUT, checked, with its final row's metrics."""
    from runner.results.samples import (
        DELETIONS_FILE,
        QUERIES_FILE,
        REPORTED,
        SAMPLES,
        samples_problem,
    )
    from runner.results.shard import partition
    from runner.results.where import arrow_source

    folder = out / SAMPLES / partition(row["workload"], row["policy"])
    paths = {kind: folder / f"{row['job_id']}.{kind}" for kind in (QUERIES_FILE, DELETIONS_FILE)}
    for kind, path in paths.items():
        if not path.is_file():
            raise FbenchError(f"no samples for {row['policy']} on {row['workload']} seed "
                              f"{row['seed']} in {out}: run the sweep again with --samples "
                              "(it reruns only the jobs that lack them)")
        problem = samples_problem(path, kind, row["job_id"])
        if problem:
            raise FbenchError(f"{path} is not usable ({problem}): run the sweep again with "
                              "--samples")
    queries, deletions = (pq.read_table(arrow_source(paths[k]))
                          for k in (QUERIES_FILE, DELETIONS_FILE))
    meta = deletions.schema.metadata or {}
    return Story({c: row[c] for c in COORDS}, _metrics(row), queries, deletions,
                 meta.get(b"fbench.deletions") == REPORTED.encode())


def _metrics(row: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in row.items() if k not in COORDS and (
        k in HEADLINE or (k.startswith("n_queries_") and v))}


def _run_here(workload: str, policy: str, seed: int, horizon: str | None, k: int,
              param: list[str], against: str | None) -> list[Story]:
    """The job (and ``against``'s, on the same stream: its own policy parameters left
    out) run here with their evidence."""
    from runner.cli.job import run_horizon
    from runner.job.run import run_job
    from runner.spec.params import split_assignment
    from runner.spec.resolve import make_spec

    assignments = [split_assignment(p) for p in param]
    stories = []
    for name in [policy] + ([against] if against else []):
        mine = assignments if name == policy else [
            (key, v) for key, v in assignments if not key.startswith("policy.")]
        spec = make_spec(workload, name, seed, run_horizon(horizon, workload), k, mine)
        result = run_job(spec, samples=True)
        assert result.samples is not None
        job = {"job_id": spec.job_id, "workload": spec.workload, "policy": spec.policy,
               "seed": spec.seed, "horizon": spec.horizon, "k": spec.k,
               "params": json.dumps(dict(spec.params), sort_keys=True)}
        stories.append(Story(job, _metrics(result.metrics()), result.samples.queries,
                             result.samples.deletions, result.samples.reported))
    return stories


# --- telling it ---------------------------------------------------------------------------


def story_doc(stories: list[Story], top: int) -> dict[str, Any]:
    """The whole story as plain data (``--json``; the terminal shows the same)."""
    from runner.analysis import explain as ex

    def one(s: Story) -> dict[str, Any]:
        return {
            "job": s.job, "metrics": {k: _plain(v) for k, v in s.metrics.items()},
            "queries": s.queries.num_rows, "failed": int(ex.failed(s.queries).sum()),
            "deletions_reported": s.reported,
            "worst_queries": [asdict(q) for q in ex.worst_queries(s.queries, top)],
            "false_forgets": ex.false_forgets(s.deletions, top),
            "deleted_by_reason": ex.by_reason(s.deletions),
            "deleted_over_time": ex.over_time(s.deletions, int(s.job["horizon"])),
        }

    doc: dict[str, Any] = one(stories[0])
    if len(stories) > 1:
        first, second = stories
        try:
            vs = ex.against(first.queries, second.queries)
        except ex.DifferentStreams as exc:
            raise FbenchError(f"{first.job['policy']} and {second.job['policy']}: {exc}; "
                              "compare jobs of one workload, seed and horizon") from None
        rows = first.queries.to_pylist()
        doc["against"] = {
            "policy": second.job["policy"], "job": second.job,
            "metrics": {k: _plain(v) for k, v in second.metrics.items()},
            "both_fail": vs.both_fail, "neither_fails": vs.neither_fails,
            "only_this_fails": [_asked(rows[i]) for i in vs.only_first_fails[:top]],
            "only_this_fails_count": len(vs.only_first_fails),
            "only_other_fails": [_asked(rows[i]) for i in vs.only_second_fails[:top]],
            "only_other_fails_count": len(vs.only_second_fails),
        }
    return doc


def _asked(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("query_index", "t", "category", "text", "value")}


def _plain(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _tell(stories: list[Story], top: int, as_json: bool) -> None:
    doc = story_doc(stories, top)
    if as_json:
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    job = doc["job"]
    console.print(escape(f"{job['workload']} × {job['policy']}, seed {job['seed']}, horizon "
                         f"{job['horizon']}, k={job['k']}  [{job['job_id']}]"), style="bold")
    console.print(" · ".join(f"{k} {_fmt(v)}" for k, v in doc["metrics"].items()),
                  markup=False, highlight=False)
    console.print(f"{doc['failed']} of {doc['queries']} questions failed (a stale value in "
                  "the top-k, or the current value missing)", markup=False, highlight=False)
    _worst(doc["worst_queries"])
    _forgets(doc["false_forgets"], doc["deletions_reported"])
    _deleted(doc["deleted_by_reason"], doc["deleted_over_time"], doc["deletions_reported"])
    if "against" in doc:
        _against(job["policy"], doc["against"])


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}" if not value.is_integer() else f"{value:.0f}"
    return str(value)


def _worst(worst: list[dict[str, Any]]) -> None:
    table = Table(title="worst queries", title_justify="left")
    for col in ("t", "question → current value", "returned (rank, label, age, score)"):
        table.add_column(col)
    for q in worst:
        items = "\n".join(
            f"{i['rank']}. [{i['label']}] {i['text']}  (age {_fmt(i['age'])}, "
            f"score {_fmt(i['score'])})" for i in q["items"]) or "nothing"
        head = f"{q['text']}\n→ {q['value']}" + (
            "\n(its current assertion was deleted)" if q["forgotten"] else "")
        table.add_row(str(q["t"]), escape(head), escape(items))
    console.print(table if worst else "no question failed")


def _forgets(rows: list[dict[str, Any]], reported: bool) -> None:
    table = Table(title="false forgets (a slot's current assertion deleted)",
                  title_justify="left")
    for col in ("t", "fact", "reason", "score", "age", "next asked"):
        table.add_column(col)
    for r in rows:
        table.add_row(str(r["t"]), escape(r["text"]), escape(r["reason"]), _fmt(r["score"]),
                      _fmt(r["age"]), _fmt(r["next_asked_t"]) if r["next_asked_t"] is not None
                      else "never")
    console.print(table if rows else "no false forgets" + ("" if reported else
                                                           " seen (partial record)"))


def _deleted(reasons: dict[str, dict[str, int]], spans: list[dict[str, Any]],
             reported: bool) -> None:
    if not reasons:
        console.print("nothing deleted" + ("" if reported else " seen (partial record: the "
                                                               "memory does not report its "
                                                               "removals)"))
        return
    table = Table(title="deleted, by reason" + ("" if reported else
                                                 " (partial: seen when a slot was asked)"),
                  title_justify="left")
    table.add_column("reason")
    table.add_column("removed", justify="right")
    table.add_column("of them current", justify="right")
    for reason, c in reasons.items():
        table.add_row(escape(reason), str(c["removed"]), str(c["still_current"]))
    console.print(table)
    line = "  ".join(f"≤{s['until']}: {sum(s['removed'].values())}" for s in spans)
    console.print(f"over time: {line}", markup=False, highlight=False)


def _against(policy: str, vs: dict[str, Any]) -> None:
    other = vs["policy"]
    console.print(f"against {other} on the same stream: {vs['only_this_fails_count']} fail "
                  f"only with {policy}, {vs['only_other_fails_count']} only with {other}, "
                  f"{vs['both_fail']} with both, {vs['neither_fails']} with neither",
                  markup=False, highlight=False)
    for title, rows in ((f"failed by {policy}, answered by {other}", vs["only_this_fails"]),
                        (f"failed by {other}, answered by {policy}", vs["only_other_fails"])):
        if rows:
            table = Table(title=escape(title), title_justify="left")
            for col in ("t", "category", "question", "current value"):
                table.add_column(col)
            for r in rows:
                table.add_row(str(r["t"]), escape(r["category"]), escape(r["text"]),
                              escape(r["value"]))
            console.print(table)
