"""A job's evidence (``runner.job.samples``): exact, complete where the memory reports its
removals, partial and labelled so where it does not, and never a change to the job."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.job.run import run_job
from runner.job.samples import recompute_quality
from runner.results.samples import (
    DELETIONS_FILE,
    PARTIAL,
    QUERIES_FILE,
    REPORTED,
    UNREPORTED,
    samples_problem,
)
from runner.spec.resolve import make_spec
from workloads import WORKLOADS, FromData

POLICIES = ("keep_all", "last_write_wins", "ebbinghaus", "lethe", "lru", "oracle")
SHORT = {"turns": 400, "days": 45}  # a short horizon per unit
TIMING = ("wall_s", "query_ms_mean", "query_ms_p95")
GENERATED = [n for n in WORKLOADS.builtin_names() if not isinstance(WORKLOADS[n], FromData)]


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float)
                      and math.isnan(a) and math.isnan(b))


def _spec(workload: str, policy: str, params: list[tuple[str, Any]] | None = None,
          horizon: int | None = None) -> Any:
    unit = WORKLOADS[workload].horizon_unit
    return make_spec(workload, policy, 1, horizon or SHORT.get(unit), 5, params or [])


def _check_exact(spec: Any) -> None:
    plain, recorded = run_job(spec), run_job(spec, samples=True)
    assert recorded.samples is not None
    want = {k: v for k, v in plain.metrics().items() if k not in TIMING}
    got = {k: v for k, v in recorded.metrics().items() if k not in TIMING}
    assert [k for k in want if not _same(want[k], got[k])] == [], "samples changed the job"
    again = recompute_quality(recorded.samples.queries, recorded.categories)
    assert again, "no quality metric recomputed"
    assert {k: v for k, v in again.items() if not _same(v, got[k])} == {}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("workload", GENERATED)
def test_every_quality_metric_is_the_queries_tables_mean_to_the_bit(
        workload: str, policy: str) -> None:
    """Prevents a queries table that does not account for the shard (a flag recorded from
    another path than the one scored, a question left out or counted twice) and a
    recording that changes what the job measures: on every generated workload and the
    reference policies, each quality metric, overall and per category, recomputed from
    the table equals the final row bit for bit, and the shard is unchanged."""
    _check_exact(_spec(workload, policy))


@pytest.mark.parametrize("policy", ["lethe", "oracle"])
@pytest.mark.parametrize("workload", ["statebench", "trace"])
def test_data_workloads_are_exact_too(workload: str, policy: str, tmp_path: Path) -> None:
    """Prevents the same on the workloads whose stream comes from data (StateBench's
    scenarios; a trace, here one exported from ``contradiction``)."""
    params: list[tuple[str, Any]] = []
    horizon = None
    if workload == "trace":
        path = tmp_path / "t.jsonl"
        res = CliRunner().invoke(app, ["trace", "export", "contradiction", "--seed", "1",
                                       "--horizon", "300", "--output", str(path)])
        assert res.exit_code == 0, res.output
        params = [("workload.path", str(path))]
    else:
        horizon = 300
    _check_exact(_spec(workload, policy, params, horizon))


def _forgotten(result: Any) -> Mapping[str, int]:
    return {k: v for k, v in result.forgotten.items() if v}


@pytest.mark.parametrize(("workload", "policy"), [
    *[("contradiction", p) for p in ("last_write_wins", "ebbinghaus", "lethe", "lru", "oracle")],
    # (ebbinghaus deletes nothing on lifecycle's 45 days)
    *[("lifecycle", p) for p in ("last_write_wins", "lethe", "lru", "oracle")]])
def test_the_reference_store_reports_every_deletion(workload: str, policy: str) -> None:
    """Prevents a deletions table that misses removals or invents them: for the reference
    store the rows per reason are its forget log's counts, and every question flagged
    ``current_forgotten`` has its slot's current assertion among the deletions made
    before it (``still_current``)."""
    result = run_job(_spec(workload, policy), samples=True)
    assert result.samples is not None and result.samples.reported
    d = result.samples.deletions
    assert d.num_rows == result.final["n_forgotten"] > 0
    assert dict(Counter(d.column("reason").to_pylist())) == _forgotten(result)
    deleted_at = {o: t for o, t, cur in zip(d.column("obs_id").to_pylist(),
                                             d.column("t").to_pylist(),
                                             d.column("still_current").to_pylist(),
                                             strict=True) if cur}
    q = result.samples.queries.to_pylist()
    flagged = [r for r in q if r["current_forgotten"]]
    assert len(flagged) == round(result.final["false_forget_rate"] * len(q))
    assert all(r["current_obs"] in deleted_at and deleted_at[r["current_obs"]] <= r["t"]
               for r in flagged)


def test_a_deletion_names_what_it_removed_and_when_its_slot_came_back() -> None:
    """Prevents a deletion row with the wrong text, age or next question: each row's text
    is its observation's, its age its time since observed, and ``next_asked_t`` the
    first question on its slot asked after it."""
    result = run_job(_spec("lifecycle", "lru"), samples=True)
    assert result.samples is not None
    from runner.spec.resolve import materialize

    spec = result.spec
    r = materialize(spec)
    events = list(r.workload.events(spec.seed, spec.horizon, r.workload_params))
    obs = [ev for ev in events if type(ev).__name__ == "Observe"]
    asked = [(q["t"], q["query_index"], q["slot"]) for q in result.samples.queries.to_pylist()]
    rows = result.samples.deletions.to_pylist()
    assert rows
    for row in rows:
        ev = obs[row["obs_id"]]
        assert (row["text"], row["age"], row["category"]) == (ev.text, row["t"] - ev.t,
                                                              ev.truth.kind)
        later = [t for t, _, slot in asked if slot == row["slot"] and t >= row["t"]]
        if row["next_asked_t"] is None:
            assert not later or later[0] == row["t"]
        else:
            assert row["next_asked_t"] in later


class Forgetful:
    """A memory that keeps its last 20 observations and does not report removals."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.texts[obs_id] = text
        while len(self.texts) > 20:
            del self.texts[min(self.texts)]

    def query(self, t: int, text: str, k: int) -> list[Any]:
        from runner.adapters import Hit

        words = set(text.lower().split())
        ranked = sorted(self.texts, key=lambda o: (-len(words & set(
            self.texts[o].lower().split())), -o))
        return [Hit(o, float(len(words & set(self.texts[o].lower().split()))))
                for o in ranked[:k]]

    def tick(self, t: int) -> None:
        pass

    def holds(self, obs_id: int) -> bool:
        return obs_id in self.texts

    def size(self) -> int:
        return len(self.texts)

    def tokens(self) -> int:
        return sum(len(t.split()) for t in self.texts.values())

    def forgotten(self) -> dict[str, int]:
        return {}


def test_a_memory_that_does_not_report_gets_a_partial_table_said_so(tmp_path: Path) -> None:
    """Prevents a deletions table that looks complete for a memory that never said what
    it removed: the harness records the removals it sees when a slot is asked (reason
    ``unreported``, each one no longer held), and the files say ``partial``."""
    result = run_job(_spec("contradiction", "tests.test_samples:Forgetful"), samples=True)
    s = result.samples
    assert s is not None and not s.reported
    rows = s.deletions.to_pylist()
    assert rows and {r["reason"] for r in rows} == {UNREPORTED}
    asked = {(q["t"], q["slot"]) for q in s.queries.to_pylist()}
    assert all((r["t"], r["slot"]) in asked for r in rows)
    assert len({r["obs_id"] for r in rows}) == len(rows)
    from runner.results.samples import write_samples

    write_samples(s, result.spec, tmp_path / QUERIES_FILE, tmp_path / DELETIONS_FILE)
    meta = pq.read_schema(tmp_path / DELETIONS_FILE).metadata
    assert meta[b"fbench.deletions"] == PARTIAL.encode()
    assert samples_problem(tmp_path / DELETIONS_FILE, DELETIONS_FILE, result.spec.job_id) \
        is None


def test_fbench_run_samples_writes_both_tables(tmp_path: Path) -> None:
    """Prevents ``fbench run --samples DIR`` writing nothing, one table, or tables another
    check would refuse (the wrong kind, another job's)."""
    out = tmp_path / "ev"
    res = CliRunner().invoke(app, ["run", "--workload", "contradiction", "--policy", "lru",
                                   "--horizon", "300", "--samples", str(out), "--json"])
    assert res.exit_code == 0, res.output
    import json

    job = json.loads(res.stdout)["spec"]["job_id"]
    for kind in (QUERIES_FILE, DELETIONS_FILE):
        assert samples_problem(out / kind, kind, job) is None
    assert samples_problem(out / QUERIES_FILE, DELETIONS_FILE) is not None
    assert samples_problem(out / QUERIES_FILE, QUERIES_FILE, "0" * 16) is not None
    meta = pq.read_schema(out / DELETIONS_FILE).metadata
    assert meta[b"fbench.deletions"] == REPORTED.encode()
    (tmp_path / "f").write_text("x")
    bad = CliRunner().invoke(app, ["run", "--workload", "contradiction", "--policy", "lru",
                                   "--samples", str(tmp_path / "f")])
    assert bad.exit_code == 2 and "is a file" in bad.output
