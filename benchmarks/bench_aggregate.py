"""`fbench aggregate` on N per-job shards: its seconds raw and after `fbench compact`
(in this process), and its seconds and peak RSS as N grows (one fresh process each).

The shards are synthetic but schema-valid: 24 real tiny jobs (contradiction at
horizon 300 and lifecycle at 30 days, four policies, seeds 0-2) run once, their
tables replicated under new seeds (new job ids and specs) and written with
``runner.results.shard.write_shard`` to ``shards/workload=W/policy=P/JOB.parquet``, as a
sweep writes them: 8 cells of N/8 seeds, 20 checkpoint rows per job (about 36 KB a file).

Seconds (``--shards``, the default; ``measure(n_shards, workdir)`` for the suite): the
named command, run in this process through Typer's test runner (imports done, no
interpreter start-up) on files just written (so in the page cache). The summaries
before and after compaction must be byte-identical. Target on this 2-core machine:
10,000 shards aggregate in <= 10 s after compaction.

Memory (``--jobs``; ``measure_memory``): for each N the shards are made once in
``WORKDIR/N/raw`` and copied (hard links) to ``WORKDIR/N/compacted``, where
``fbench compact`` runs; a folder is reused when its ``.done`` file says it is
complete, so runs of different code measure the same files. Each measurement reads
every file of the folder once (page cache warm), removes what a previous command wrote
beside ``shards/`` and ``compacted/``, and runs ``python -m runner.cli aggregate OUT`` in
a fresh process with ``PYTHONPATH=CODE`` (``--code``, default this repository), from
``WORKDIR`` (so the current folder shadows nothing): its wall seconds, CPU seconds (user
+ system: steadier than wall time on a shared machine) and peak RSS (``ru_maxrss``), of
that one child (``os.wait4``); one whose RSS passes
``--max-rss-mb`` (default 12 GB, half this machine's memory) is killed, and recorded so
(its figures lower bounds). With ``--report`` it also times
``fbench report OUT --report-dir WORKDIR/N/report-LAYOUT`` the same way (the report
aggregates, the summary being gone). Beside each figure: the machine's speed just
before it (``python_loop_1e7_s``, as ``python -m benchmarks`` records it), the load
average, and the summary's SHA-256 (the same files give the same summary whatever the
code).

The per-cell table at N is the floor any in-memory per-seed statistics need: one row per
job's final row, holding the cell (workload, horizon, k, policy, params), job_id, seed,
embedder and every compared metric, as Arrow bytes (the 24 templates' final rows' bytes
per row, times N), and the numbers alone (compared metrics and seed, 8 bytes each). For
each code label and layout, peak RSS is fitted against N by least squares (the line
through the points; exact with two) and read at 1,000,000 jobs, as is peak RSS minus the
per-cell table (flat when nothing but that table grows with N). Target: <= 2 GB
projected at 1,000,000 jobs.

Figures go to ``benchmarks/results.json`` under ``aggregate_memory.runs.LABEL``
(``--label``); a run replaces the rows of the N and layouts it measured and keeps the
others. Usage::

    python benchmarks/bench_aggregate.py [--shards 1000,10000] [--workdir DIR]
    python benchmarks/bench_aggregate.py --jobs 10000,100000,300000 [--layouts raw,compacted]
        [--workdir /tmp/aggbench] [--code DIR] [--label after] [--report] [--max-rss-mb MB]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from runner.spec.jobspec import JobSpec

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results.json"
PROJECT_TO = 1_000_000
TARGET_RSS_MB = 2048.0  # aggregate's peak RSS projected at PROJECT_TO jobs
MAX_RSS_MB = 12_288.0  # a measured command past this is killed (half this machine's memory)
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


# --- peak RSS as N grows -----------------------------------------------------------------

LAYOUTS = ("raw", "compacted")
# The per-cell table's columns beside the compared metrics: what a cell's per-seed
# statistics and pairing read of each job's final row.
CELL_TABLE = ("workload", "horizon", "k", "policy", "params", "job_id", "seed", "embedder")
KEPT = frozenset({"shards", "compacted"})  # what a measurement leaves in OUT
MB = 1 << 20


def cell_table(n_jobs: int) -> dict[str, Any]:
    """The per-cell table's size at ``n_jobs`` jobs: Arrow bytes (the templates' final rows'
    bytes per row, times ``n_jobs``) and the numbers alone (metrics and seed, 8 bytes)."""
    from runner.results.shard import compared_metrics

    finals = pa.concat_tables([t.filter(t.column("is_final")) for _, t in _templates()])
    metrics = [m.name for m in compared_metrics(finals.column_names)]
    table = finals.select([*CELL_TABLE, *metrics]).combine_chunks()
    per_row = table.nbytes / table.num_rows
    return {"jobs": n_jobs, "columns": len(CELL_TABLE) + len(metrics), "metrics": len(metrics),
            "arrow_bytes_per_row": round(per_row, 1),
            "arrow_mb": round(per_row * n_jobs / MB, 1),
            "values_mb": round((len(metrics) + 1) * 8 * n_jobs / MB, 1)}


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _child(argv: list[str], code: Path, cwd: Path, log: Path,
           cap_mb: float = float("inf")) -> dict[str, Any]:
    """``python -m runner.cli ARGV`` in a fresh process with ``PYTHONPATH=code``: its wall
    seconds, CPU seconds (user + system, every thread) and peak RSS (MB, ``ru_maxrss``),
    of that child alone (``os.wait4``). A child whose RSS passes ``cap_mb`` (polled every
    0.1 s) is killed: ``killed`` is true and its figures are lower bounds."""
    if not (code / "runner" / "__init__.py").is_file():  # else the installed tree would run
        raise SystemExit(f"{code} has no runner package: give --code an fbench checkout")
    env = dict(os.environ, PYTHONPATH=str(code))
    killed = False
    with log.open("w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "runner.cli", *argv], cwd=cwd, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if not killed and _rss_mb(proc.pid) > cap_mb:
                proc.kill()
                killed = True
            time.sleep(0.1)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 and not killed:
        tail = log.read_text()[-2000:]
        raise RuntimeError(f"fbench {' '.join(argv)} exited {proc.returncode}: {tail}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2), "killed": killed}


def runner_file(code: Path, cwd: Path) -> str:
    """The ``runner/__init__.py`` a child with ``PYTHONPATH=code`` imports (checked to be
    ``code``'s: an editable install's finder must not win)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    found = subprocess.run([sys.executable, "-c", "import runner; print(runner.__file__)"],
                           cwd=cwd, env=env, capture_output=True, text=True, check=True)
    path = found.stdout.strip()
    if not Path(path).resolve().is_relative_to(code.resolve()):
        raise SystemExit(f"PYTHONPATH={code} imports runner from {path}, not from {code}")
    return path


def _marker(folder: Path) -> Path:
    return folder.parent / f"{folder.name}.done"


def _files(folder: Path) -> list[Path]:
    return [Path(d) / f for d, _, names in os.walk(folder) for f in names]


def prepare(n_jobs: int, workdir: Path, code: Path,
            cap_mb: float = float("inf")) -> dict[str, Path]:
    """``WORKDIR/N/raw`` (N shards) and ``WORKDIR/N/compacted`` (their hard-linked copy,
    compacted by ``fbench compact`` with ``code``), each made unless its ``.done`` file
    says it is complete."""
    base = workdir / str(n_jobs)
    raw, compacted = base / "raw", base / "compacted"
    if not _marker(raw).exists():
        shutil.rmtree(raw, ignore_errors=True)
        print(f"making {n_jobs:,} shards in {raw}", flush=True)
        start = time.perf_counter()
        make_shards(n_jobs, raw)
        made = {"shards": n_jobs, "make_s": round(time.perf_counter() - start, 1),
                "bytes": sum(f.stat().st_size for f in _files(raw / "shards"))}
        _marker(raw).write_text(json.dumps(made) + "\n")
        print(f"  {made['make_s']:.0f} s, {made['bytes'] / MB:,.0f} MB", flush=True)
    if not _marker(compacted).exists():
        shutil.rmtree(compacted, ignore_errors=True)
        print(f"compacting a copy in {compacted}", flush=True)
        shutil.copytree(raw / "shards", compacted / "shards", copy_function=os.link)
        done = _child(["compact", str(compacted)], code, workdir, base / "compact.log", cap_mb)
        if done["killed"]:
            raise SystemExit(f"fbench compact {compacted} passed {cap_mb:.0f} MB: killed")
        files = _files(compacted)
        done |= {"code": str(code), "files": len(files),
                 "bytes": sum(f.stat().st_size for f in files)}
        _marker(compacted).write_text(json.dumps(done) + "\n")
        print(f"  {done['seconds']:.0f} s, peak RSS {done['peak_rss_mb']:.0f} MB: "
              f"{done['files']} files, {done['bytes'] / MB:,.0f} MB", flush=True)
    return {"raw": raw, "compacted": compacted}


def _warm(out: Path) -> tuple[int, int]:
    """Read every file under ``out`` once (into the page cache): their count and bytes."""
    files = _files(out)
    total = 0
    for f in files:
        with f.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
    return len(files), total


def _clear(out: Path) -> None:
    """Remove what an earlier command wrote in ``out`` beside the shards."""
    for entry in out.iterdir():
        if entry.name in KEPT:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def measure_memory(n_jobs: int, layout: str, out: Path, command: str, code: Path,
                   workdir: Path, cap_mb: float = float("inf")) -> dict[str, Any]:
    """One measurement: ``fbench COMMAND`` on ``out`` (its previous outputs removed, its
    files read once) in a fresh process with ``code``."""
    from benchmarks.__main__ import loop_seconds

    _clear(out)
    files, size = _warm(out)
    argv = ["aggregate", str(out)]
    if command == "report":
        report = out.parent / f"report-{layout}"
        shutil.rmtree(report, ignore_errors=True)
        argv = ["report", str(out), "--report-dir", str(report)]
    speed = loop_seconds()
    load = os.getloadavg()[0]
    when = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    got = _child(argv, code, workdir, out.parent / f"{command}-{layout}.log", cap_mb)
    summary = out / "summary.parquet"
    digest = hashlib.sha256(summary.read_bytes()).hexdigest() if summary.exists() else None
    return {"jobs": n_jobs, "layout": layout, "command": command, **got, "when": when,
            "python_loop_1e7_s": round(speed, 3), "load_average_before": round(load, 2),
            "load_average_after": round(os.getloadavg()[0], 2), "files": files,
            "mb_on_disk": round(size / MB, 1), "summary_sha256": digest}


def fits(rows: list[dict[str, Any]], cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per command and layout: the least-squares lines of seconds, peak RSS and peak RSS
    minus the per-cell table against jobs (rows killed at the RSS cap left out), each read
    at ``PROJECT_TO`` jobs."""
    import numpy as np

    out: dict[str, Any] = {}
    for key in sorted({(r["command"], r["layout"]) for r in rows}):
        mine = sorted((r for r in rows if (r["command"], r["layout"]) == key
                       and not r.get("killed")),
                      key=lambda r: r["jobs"])
        if len({r["jobs"] for r in mine}) < 2:
            continue
        n = np.array([r["jobs"] for r in mine], dtype=float)
        fit: dict[str, Any] = {"from_jobs": [r["jobs"] for r in mine], "at_jobs": PROJECT_TO}
        series = {
            "seconds": [r["seconds"] for r in mine],
            "peak_rss_mb": [r["peak_rss_mb"] for r in mine],
            "rss_beyond_cell_table_mb": [r["peak_rss_mb"] - cells[str(r["jobs"])]["arrow_mb"]
                                         for r in mine],
        }
        for name, ys in series.items():
            slope, intercept = np.polyfit(n, np.array(ys, dtype=float), 1)
            fit[name] = {"intercept": round(float(intercept), 2),
                         "per_1000_jobs": round(float(slope) * 1000, 4),
                         "projected": round(float(intercept + slope * PROJECT_TO), 1)}
        out[f"{key[0]} {key[1]}"] = fit
    return out


METHOD = ("each row: one fresh `python -m runner.cli COMMAND OUT` process with "
          "PYTHONPATH=code, files read once before (page cache warm), previous outputs "
          "removed; seconds = wall time, cpu_seconds = its user + system time, peak_rss_mb = "
          "ru_maxrss of that child (os.wait4); killed = passed the RSS cap (lower bounds). "
          "fits: numpy.polyfit(jobs, y, 1) over the label's measured jobs (killed rows left "
          "out), read at "
          f"{PROJECT_TO:,} jobs; rss_beyond_cell_table_mb = peak_rss_mb - cell_table.arrow_mb. "
          "cell_table: per final row the cell, job_id, seed, embedder and every compared "
          "metric (Arrow bytes per row of the 24 templates' final rows x jobs); values_mb: "
          "the compared metrics and seed as 8-byte numbers.")


def _save(path: Path, update: Any) -> None:
    """Apply ``update`` to ``path``'s ``aggregate_memory`` entry and write it atomically."""
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    entry = results.setdefault("aggregate_memory", {})
    update(entry)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def run_memory(args: argparse.Namespace) -> None:
    """The ``--jobs`` measurement: prepare each N, measure each layout and command, and
    record every row in ``args.output`` as it comes."""
    workdir: Path = args.workdir or Path(tempfile.gettempdir()) / "aggbench"
    workdir.mkdir(parents=True, exist_ok=True)
    code = args.code.resolve()
    sizes = [int(s) for s in args.jobs.split(",")]
    commands = ["aggregate", *(["report"] if args.report else [])]
    layouts = args.layouts.split(",")
    found = runner_file(code, workdir)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; workdir {workdir}; "
          f"code {code} (runner from {found}); label {args.label}", flush=True)
    line = f"python benchmarks/bench_aggregate.py {' '.join(sys.argv[1:])}"

    def record(row: dict[str, Any] | None, cells: dict[str, Any]) -> None:
        def update(entry: dict[str, Any]) -> None:
            entry["method"] = METHOD
            entry["workdir"] = str(workdir)
            entry.setdefault("cell_table", {}).update(cells)
            run = entry.setdefault("runs", {}).setdefault(args.label, {"rows": []})
            run |= {"code": str(code), "runner": found}
            run["commands"] = [*(c for c in run.get("commands", []) if c != line), line]
            if row is not None:
                same = (row["jobs"], row["layout"], row["command"])
                run["rows"] = sorted(
                    [r for r in run["rows"] if (r["jobs"], r["layout"], r["command"]) != same]
                    + [row], key=lambda r: (r["command"], r["layout"], r["jobs"]))
            run["fits"] = fits(run["rows"], entry["cell_table"])
        _save(args.output, update)

    for n in sizes:
        folders = prepare(n, workdir, code, args.max_rss_mb)
        cells = {str(n): cell_table(n)}
        record(None, cells)
        for layout in layouts:
            for command in commands:
                row = measure_memory(n, layout, folders[layout], command, code, workdir,
                                     args.max_rss_mb)
                print(f"{n:>9,} {layout:<10} {command:<9} {row['seconds']:9.1f} s "
                      f"{row['peak_rss_mb']:9.0f} MB{' KILLED' * row['killed']}  (per-cell table "
                      f"{cells[str(n)]['arrow_mb']:.0f} MB; loop {row['python_loop_1e7_s']} s, "
                      f"load {row['load_average_before']})", flush=True)
                record(row, cells)
    print_memory(json.loads(args.output.read_text())["aggregate_memory"])


def print_memory(entry: dict[str, Any]) -> None:
    """Every label's rows side by side, then each label's fits."""
    runs: dict[str, Any] = entry.get("runs", {})
    labels = sorted(runs)
    keys = sorted({(r["command"], r["layout"], r["jobs"]) for run in runs.values()
                   for r in run["rows"]})
    head = "".join(f"{lab + ' s':>12}{lab + ' MB':>12}" for lab in labels)
    print(f"\n{'command':<10}{'layout':<11}{'jobs':>9}{'cell MB':>9}{head}")
    for command, layout, n in keys:
        cell = entry["cell_table"].get(str(n), {}).get("arrow_mb", float("nan"))
        line = f"{command:<10}{layout:<11}{n:>9,}{cell:>9.0f}"
        for lab in labels:
            r = next((r for r in runs[lab]["rows"]
                      if (r["command"], r["layout"], r["jobs"]) == (command, layout, n)), None)
            if r is None:
                line += f"{'-':>12}{'-':>12}"
            else:
                more = ">" if r.get("killed") else ""
                line += f"{more + format(r['seconds'], '.1f'):>12}" \
                        f"{more + format(r['peak_rss_mb'], '.0f'):>12}"
        print(line)
    for lab in labels:
        for key, fit in runs[lab].get("fits", {}).items():
            rss, beyond, sec = fit["peak_rss_mb"], fit["rss_beyond_cell_table_mb"], fit["seconds"]
            verdict = "ok" if rss["projected"] <= TARGET_RSS_MB else "OVER"
            print(f"{lab} {key}: at {fit['at_jobs']:,} jobs (least squares over "
                  f"{', '.join(f'{j:,}' for j in fit['from_jobs'])}) peak RSS "
                  f"{rss['projected']:,.0f} MB ({rss['per_1000_jobs']:.2f} MB per 1,000 jobs; "
                  f"target <= {TARGET_RSS_MB:,.0f} MB: {verdict}), beyond the per-cell table "
                  f"{beyond['projected']:,.0f} MB ({beyond['per_1000_jobs']:.2f} MB per 1,000), "
                  f"{sec['projected']:,.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shards", default="1000,10000",
                    help="seconds: comma-separated shard counts (the default measurement)")
    ap.add_argument("--jobs", default=None,
                    help="memory: comma-separated job counts (e.g. 10000,100000,300000)")
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help="memory: raw,compacted")
    ap.add_argument("--report", action="store_true", help="memory: also time fbench report")
    ap.add_argument("--code", type=Path, default=ROOT,
                    help="memory: the checkout the commands run (PYTHONPATH); default this one")
    ap.add_argument("--label", default="after", help="memory: the code's name in results.json")
    ap.add_argument("--output", type=Path, default=RESULTS, help="memory: the results file")
    ap.add_argument("--max-rss-mb", type=float, default=MAX_RSS_MB,
                    help="memory: kill a command whose RSS passes this (a shared machine)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="seconds: default a temporary folder, removed; memory: default "
                         "TMP/aggbench, kept")
    args = ap.parse_args()
    if args.jobs is not None:
        run_memory(args)
        return
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
    if not __package__:  # run as a file: `benchmarks` importable, as with -m
        sys.path.insert(0, str(ROOT))
    main()
