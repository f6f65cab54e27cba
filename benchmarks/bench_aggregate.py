"""Seconds of `fbench aggregate` on N per-job shards, raw and after `fbench compact`.

The shards are synthetic but schema-valid: 24 real tiny jobs (contradiction at
horizon 300 and lifecycle at 30 days, four policies, seeds 0-2) run once, their
tables replicated under new seeds (new job ids and specs) and written with
``runner.results.shard.write_shard`` to ``shards/workload=W/policy=P/JOB.parquet``, as a
sweep writes them: 8 cells of N/8 seeds, 20 checkpoint rows per job.

Each figure is the named command, run in this process through Typer's test runner
(imports done, no interpreter start-up) on files just written (so in the page
cache). The summaries before and after compaction must be byte-identical.
Target on this 2-core machine: 10,000 shards aggregate in <= 10 s after compaction.
Usage: ``python benchmarks/bench_aggregate.py [--shards 1000,10000] [--workdir DIR]``;
``measure(n_shards, workdir)`` is the same for one N, for a benchmark suite.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from runner.spec.jobspec import JobSpec

TARGET_S = 10.0  # aggregate of 10,000 shards after compaction
TEMPLATES = [(w, h, p, s) for w, h in (("contradiction", 300), ("lifecycle", 30))
             for p in ("keep_all", "ebbinghaus", "last_write_wins", "lru") for s in range(3)]


@functools.cache
def _templates() -> list[tuple[JobSpec, pa.Table]]:
    """The real jobs' specs and shard tables (run once per process)."""
    from runner.job.execute import execute
    from runner.spec.resolve import make_spec

    out = []
    for workload, horizon, policy, seed in TEMPLATES:
        spec = make_spec(workload, policy, seed, horizon=horizon)
        o = execute(spec.canonical_json(), "bench")
        assert o.table is not None, o.error
        out.append((spec, o.table))
    return out


def make_shards(n_shards: int, out: Path) -> None:
    """``n_shards`` distinct, schema-valid shards in ``out/shards``."""
    from runner.results.shard import SCHEMA, shard_path, write_shard
    from runner.results.validate import shard_is_valid

    templates = _templates()
    for i in range(n_shards):
        spec, table = templates[i % len(templates)]
        new = replace(spec, seed=spec.seed + 3 * (i // len(templates)))
        n = table.num_rows
        for name, value in (("job_id", new.job_id), ("seed", new.seed),
                            ("spec", new.canonical_json())):
            idx = SCHEMA.get_field_index(name)
            table = table.set_column(idx, SCHEMA.field(idx), pa.array([value] * n,
                                                                      SCHEMA.field(idx).type))
        path = shard_path(out, new)
        write_shard(path, table)
        if i == 0:
            assert shard_is_valid(path, new.job_id)


def _timed(argv: list[str]) -> float:
    from typer.testing import CliRunner

    from runner.cli.app import app

    start = time.perf_counter()
    result = CliRunner().invoke(app, argv)
    seconds = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    return seconds


def measure(n_shards: int, workdir: Path) -> dict[str, float]:
    """Seconds to aggregate ``n_shards`` raw shards, to compact them, to aggregate the
    compacted layout, and to compact again (nothing to do); ``workdir/sweep-N`` is made
    and left in place."""
    from runner.results.aggregate import SUMMARY
    from runner.results.layout import Layout

    out = Path(workdir) / f"sweep-{n_shards}"
    if out.exists():
        shutil.rmtree(out)
    start = time.perf_counter()
    make_shards(n_shards, out)
    made = time.perf_counter() - start
    raw = _timed(["aggregate", str(out)])
    before = (out / SUMMARY).read_bytes()
    compact = _timed(["compact", str(out)])
    lay = Layout(out)
    assert not lay.raw_files and len(lay.compacted) == n_shards
    compacted = _timed(["aggregate", str(out)])
    identical = (out / SUMMARY).read_bytes() == before
    assert identical, "the summary changed with compaction"
    again = _timed(["compact", str(out)])
    return {"shards": float(n_shards), "parts": float(len(lay.parts)), "make_s": made,
            "aggregate_raw_s": raw, "compact_s": compact, "aggregate_compacted_s": compacted,
            "compact_again_s": again, "summary_identical": float(identical)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shards", default="1000,10000", help="comma-separated shard counts")
    ap.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder")
    args = ap.parse_args()
    sizes = [int(s) for s in args.shards.split(",")]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="fbench-bench-aggregate-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; workdir {workdir}")
    start = time.perf_counter()
    _templates()
    print(f"{len(TEMPLATES)} template jobs: {time.perf_counter() - start:.1f} s")
    rows = []
    try:
        for n in sizes:
            m = measure(n, workdir)
            out = workdir / f"sweep-{n}"
            rows += [
                (n, "aggregate, raw shards", m["aggregate_raw_s"], f"fbench aggregate {out}"),
                (n, "compact", m["compact_s"], f"fbench compact {out}"),
                (n, f"aggregate, compacted ({m['parts']:.0f} file{'s' * (m['parts'] != 1)})",
                 m["aggregate_compacted_s"], f"fbench aggregate {out}"),
                (n, "compact again (nothing to do)", m["compact_again_s"],
                 f"fbench compact {out}"),
            ]
            print(f"{n} shards written in {m['make_s']:.1f} s; summary identical after "
                  f"compaction: {bool(m['summary_identical'])}")
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{'shards':>7}  {'step':<32}{'seconds':>9}  command")
    for n, step, seconds, cmd in rows:
        print(f"{n:>7}  {step:<32}{seconds:>9.2f}  {cmd}")
    worst = max((s for n, step, s, _ in rows if n >= 10_000 and step.startswith("aggregate, c")),
                default=None)
    if worst is not None:
        verdict = "ok" if worst <= TARGET_S else "OVER"
        print(f"10,000 shards aggregate after compaction in {worst:.2f} s "
              f"(target <= {TARGET_S:.0f} s): {verdict}")


if __name__ == "__main__":
    main()
