"""README.md and the docs site (docs/*.md) stay true: their fbench examples run, the site
builds strictly, every metric is defined, the snippets that read results run, and the
numbers the pages quote are the committed summaries' and the benchmarks'."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.metrics import CATEGORIES, METRICS
from tests.needs import marks_for

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text()
# README and every page of the site, by path from the repository's root
PAGES = {"README.md": README,
         **{f"docs/{p.name}": p.read_text() for p in sorted(DOCS.glob("*.md"))}}


def page(name: str) -> str:
    """A docs page's text (``metrics.md``)."""
    return PAGES[f"docs/{name}"]


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a whole Markdown heading line, ``## Metrics``) up to the
    next heading of its level or above."""
    level = len(heading) - len(heading.lstrip("#"))
    body = text.split(heading + "\n", 1)[1]
    end = re.search(rf"^#{{1,{level}}} ", body, flags=re.M)
    return body[:end.start()] if end else body


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def fbench_lines(block: str) -> list[str]:
    """The fbench commands of a bash block, in order (comments dropped, `a && b` split)."""
    out = []
    for line in block.splitlines():
        for part in line.split("#")[0].split("&&"):
            if part.strip().startswith("fbench "):
                out.append(part.strip())
    return out


def fbench_examples() -> list[str]:
    """Every fbench command of README and the docs, but the plugin quick start's (it runs
    whole: tests/test_readme.py) and retraining's."""
    return [c for text in PAGES.values() for block in bash_blocks(text)
            for c in fbench_lines(block) if " train" not in c and "mymem" not in c]


# The commands the block runner leaves to another test, or cannot run here, and why.
NOT_RUN = (
    ("fbench train", "retraining the weights: tests/test_learned.py"),
    ("mymem", "the plugin quick start runs whole: tests/test_readme.py"),
    ("fbench aggregate", "needs a sweep's folder: tests/test_aggregate_report.py"),
    ("fbench report", "needs a sweep's folder: tests/test_aggregate_report.py"),
    ("fbench compact", "needs a sweep's folder: tests/test_compact.py runs these"),
    ("fbench board", "needs a sweep's folder and published results: tests/test_board.py"),
    ("--address", "a Ray cluster: tests/test_cluster_recipe.py, tests/test_ray_cluster.py"),
    ("s3://", "object storage: tests/test_object_store.py"),
    ("longmemeval", "LongMemEval's data file: tests/test_trace.py imports its sample"),
    ("workload.path=lme.jsonl", "the LongMemEval import's output (above)"),
)


def not_run(cmd: str) -> str | None:
    return next((why for key, why in NOT_RUN if key in cmd), None)


def runnable(cmd: str) -> list[str]:
    """The example's argv; sweeps are checked end to end with --dry-run (no Ray needed),
    repository files named by absolute path."""
    argv = [str(ROOT / a) if (ROOT / a).is_file() else a for a in shlex.split(cmd)[1:]]
    return [*argv, "--dry-run"] if argv[0] == "sweep" and "--dry-run" not in argv else argv


def needs(commands: list[str]) -> list[pytest.MarkDecorator]:
    """The install markers of a block (tests/needs.py): those its policies, workloads and
    embedders need, on its command lines or in the sweep configs it reads."""
    names = set().union(*(names_in(c) for c in commands))
    return [getattr(pytest.mark, m) for m in sorted(marks_for(names))]


def names_in(cmd: str) -> set[str]:
    """Every word of a command, split at commas and ``=``, and every string value of a
    sweep config it reads (its policies, workloads, embedders)."""
    words = set(re.split(r"[\s,=]+", cmd))
    for arg in shlex.split(cmd):
        if arg.endswith(".toml") and (ROOT / arg).is_file():
            words |= set(toml_strings(tomllib.loads((ROOT / arg).read_text())))
    return words


def toml_strings(value: object) -> list[str]:
    """The strings in a parsed TOML value, at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in toml_strings(v)] if isinstance(value, list) else []


def example_blocks() -> list[object]:
    """Each bash block with a command to run, as a test case named page:block, marked
    with the installs it needs."""
    cases: list[object] = []
    for name, text in PAGES.items():
        for i, block in enumerate(bash_blocks(text), 1):
            commands = [c for c in fbench_lines(block) if not_run(c) is None]
            if commands:
                cases.append(pytest.param(commands, id=f"{name}:{i}", marks=needs(commands)))
    return cases


@pytest.mark.parametrize("commands", example_blocks())
def test_example_block_runs(commands: list[str], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents README and docs examples that no longer work (renamed flags, policies,
    params, files): a block's fbench commands run in order in an empty folder (a file one
    writes, the next reads), each sweep as a dry run."""
    monkeypatch.chdir(tmp_path)  # relative --out folders land here, not in the checkout
    for cmd in commands:
        result = CliRunner().invoke(app, runnable(cmd))
        assert result.exit_code == 0, f"{cmd}\n{result.output}"


def test_every_skipped_example_exists() -> None:
    """Prevents the runner's list of commands it leaves out from outliving the examples it
    names (each entry still matches some command of the pages)."""
    commands = [c for text in PAGES.values() for b in bash_blocks(text) for c in fbench_lines(b)]
    for key, why in NOT_RUN:
        assert any(key in c for c in commands), (key, why)


@pytest.mark.docs
def test_docs_site_builds_strictly(tmp_path: Path) -> None:
    """Prevents a broken docs site: a dead link or anchor, a page left out of the nav, a
    link to a file outside docs/, or an API page whose objects no longer resolve
    (`mkdocs build --strict`, as `make docs` runs it)."""
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, check=False)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").is_file()


def test_every_page_is_in_the_nav() -> None:
    """Prevents a docs page no reader can reach (or a nav entry naming a missing page),
    checked without the docs tools."""
    config = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r"^\s+- (?:[^:\n]+: )?([\w.-]+\.md)$", config, flags=re.M))
    assert listed == {p.name for p in DOCS.glob("*.md")}


def test_install_page_names_every_extra() -> None:
    """Prevents an extra of pyproject.toml that Getting started does not explain, or a row
    of its table naming an extra that does not exist."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    table = section(page("install.md"), "### Extras")
    assert set(re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.M)) == set(extras)


def test_docs_define_every_metric() -> None:
    """Prevents a metric the Metrics page does not define (or a page naming a dead metric)."""
    text = page("metrics.md")
    base = {n for n in METRICS if not any(n.endswith(f"_{c}") for c in CATEGORIES)
            or n.startswith("extract_link")}
    for name in base:
        assert f"`{name}`" in text, name
    for name in re.findall(r"^\| `([a-z0-9_]+)` \|", text, flags=re.M):
        assert name in METRICS, name


def readers_section() -> list[str]:
    return re.findall(r"```python\n(.*?)```",
                      section(page("sweeps.md"), "## Reading results elsewhere"), flags=re.S)


def test_reading_results_with_pandas_polars_and_duckdb(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the pandas, polars and duckdb snippets of Sweeps from rotting (a renamed
    column, hive partitions read with clashing types): each runs on a real sweep's folder
    and prints the sweep's policies."""
    blocks = readers_section()
    assert [("pandas" in b, "polars" in b, "duckdb" in b) for b in blocks] == [
        (True, False, False), (False, True, False), (False, False, True)]
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["sweep", "--policies", "keep_all,last_write_wins",
                                   "--workloads", "contradiction", "--seeds", "2", "--horizons",
                                   "150", "--executor", "inline", "--out", "tour", "--no-report"])
    assert res.exit_code == 0, res.output
    from runner.results.aggregate import aggregate

    aggregate(tmp_path / "tour")
    for block in blocks:
        out = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stderr
        assert "keep_all" in out.stdout and "last_write_wins" in out.stdout, out.stdout


def progress_example() -> list[str]:
    """The lines of Sweeps' example of a piped sweep's stderr."""
    blocks = re.findall(r"```text\n(.*?)```", section(page("sweeps.md"), "## Progress"),
                        flags=re.S)
    assert len(blocks) == 1
    return blocks[0].splitlines()


def test_progress_example_is_what_fbench_prints(tmp_path: Path) -> None:
    """Prevents Sweeps' example of progress in a log from drifting from the CLI: its
    progress lines are exactly what runner.cli.progress writes for the tallies they show,
    and a real three-job sweep with its stderr piped ends with a progress line and a
    summary of the same shape (numbers aside)."""
    from runner.cli.progress import SECONDS_VARIABLE, Tally, progress_line

    first, last, summary = progress_example()
    assert first == progress_line("sweep", Tally(1, 3, ran=1, skipped=0, failed=0), 2.0, 0.67)
    assert last == progress_line("sweep", Tally(3, 3, ran=3, skipped=0, failed=0), 4.0, 0.79)
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    res = subprocess.run([sys.executable, "-m", "runner.cli", "sweep", "--policies",
                          "keep_all,last_write_wins,ebbinghaus", "--workloads", "contradiction",
                          "--seeds", "1", "--horizons", "300", "--executor", "inline", "--out",
                          "tour", "--no-report"], cwd=tmp_path, capture_output=True, text=True,
                         env=env | {SECONDS_VARIABLE: "2"}, timeout=300, check=False)
    assert res.returncode == 0, res.stderr

    def shape(line: str) -> str:
        return re.sub(r"\d+(?:\\\.\d+)?", r"[\\d.]+", re.escape(line))

    assert re.fullmatch(shape(last), res.stderr.splitlines()[-2]), res.stderr
    assert res.stderr.splitlines()[-1] == summary


def test_share_of_hard_updates_found_is_computed() -> None:
    """Prevents Workloads' "finds the hard-updated value in N% of those queries" from being
    a typed-in number: the share is recomputed (seeds 0–2, oracle extractor,
    last_write_wins on contradiction.retrievable: its current recall on hard-updated
    slots), and on the seed's own stream it is 0."""
    import numpy as np

    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    m = re.search(r"finds the hard-updated value in (\d+)% of\s+those queries here "
                  r"\(seeds 0–2\) and never on the seed's stream", page("workloads.md"))
    assert m is not None
    oracle = [("store.extractor", "oracle")]
    share = np.mean([run_job(make_spec("contradiction.retrievable", "last_write_wins", s,
                                       params=oracle)).final["recall_current_at_k_hard"]
                     for s in range(3)])
    assert round(100 * share) == int(m.group(1))
    seed_stream = run_job(make_spec("contradiction", "last_write_wins", 0, params=oracle))
    assert seed_stream.final["recall_current_at_k_hard"] == 0.0


# The Incumbents page's numbers, each tied to the summary cell it quotes
# (published/incumbents/, the committed summary of sweeps/incumbents.toml): (quoted text,
# workload, policy, params, metric). A regenerated summary that moves a number fails here
# until the page follows.
E_MINI = {"store.embedder": "minilm"}
P_MINI = {"policy.embedder": "minilm"}
SQLITE = {"policy.backend": "sqlite"}
TTL7, TTL30 = {"policy.ttl_days": 7.0}, {"policy.ttl_days": 30.0}
INCUMBENT_QUOTES = [
    ("contradiction 0.076", "contradiction", "lethe_agent", {}, "contradiction_rate"),
    ("recall 0.240", "contradiction", "lethe_agent", {}, "recall_at_k"),
    ("false-forget 0.471", "contradiction", "lethe_agent", {}, "false_forget_rate"),
    ("holding 2,069 entries", "contradiction", "lethe_agent", {}, "final_size"),
    ("it has recall 0.488", "lifecycle", "lethe_agent", {}, "recall_at_k"),
    ("false-forget 0.271", "lifecycle", "lethe_agent", {}, "false_forget_rate"),
    ("at 1,665 entries", "lifecycle", "lethe_agent", {}, "final_size"),
    ("`lethe` at 0.764", "lifecycle", "lethe", {}, "recall_at_k"),
    ("0.142 /", "lifecycle", "lethe", {}, "false_forget_rate"),
    ("202 entries", "lifecycle", "lethe", {}, "final_size"),
    ("recall 0.202", "contradiction", "lethe_agent", {"policy.retention": "fifo"},
     "recall_at_k"),
    ("/ 0.379", "lifecycle", "lethe_agent", {"policy.retention": "fifo"},
     "recall_at_k"),
    ("contradiction 0.874", "contradiction", "mem0", {}, "contradiction_rate"),
    ("recall 0.867", "contradiction", "mem0", {}, "recall_at_k"),
    ("0.651 /", "lifecycle", "mem0", {}, "contradiction_rate"),
    ("/ 0.852", "lifecycle", "mem0", {}, "recall_at_k"),
    ("(2,645 and", "contradiction", "mem0", {}, "final_size"),
    ("and 2,372 entries", "lifecycle", "mem0", {}, "final_size"),
    ("keeps 7 entries", "contradiction", "mem0", {"policy.expire_days": 7.0}, "final_size"),
    ("false-forget 0.981", "contradiction", "mem0", {"policy.expire_days": 7.0},
     "false_forget_rate"),
    ("all 2,645 entries at", "contradiction", "langgraph_store", SQLITE, "final_size"),
    ("contradiction 0.861", "contradiction", "langgraph_store", SQLITE, "contradiction_rate"),
    ("falls to 0.001", "contradiction", "langgraph_store", SQLITE | TTL7,
     "contradiction_rate"),
    ("recall to 0.038", "contradiction", "langgraph_store", SQLITE | TTL7, "recall_at_k"),
    ("false-forget 0.962", "contradiction", "langgraph_store", SQLITE | TTL7,
     "false_forget_rate"),
    ("holds 340 entries", "lifecycle", "langgraph_store", SQLITE | TTL30, "final_size"),
    ("false-forget 0.170", "lifecycle", "langgraph_store", SQLITE | TTL30,
     "false_forget_rate"),
    ("keeps all 2,372 entries", "lifecycle", "yantrikdb", {}, "final_size"),
    ("recall is 0.970", "lifecycle", "yantrikdb", P_MINI, "recall_at_k"),
    ("(keep_all's 0.887)", "lifecycle", "keep_all", E_MINI, "recall_at_k"),
    ("contradiction 0.669.", "lifecycle", "yantrikdb", P_MINI, "contradiction_rate"),
    ("contradiction 0.319", "contradiction", "ebbinghaus", {}, "contradiction_rate"),
    ("recall 0.669", "contradiction", "ebbinghaus", {}, "recall_at_k"),
    ("to 0.552", "contradiction", "ebbinghaus", E_MINI, "contradiction_rate"),
    ("/ 0.931", "contradiction", "ebbinghaus", E_MINI, "recall_at_k"),
    ("(1,361 entries", "contradiction", "ebbinghaus", {}, "final_size"),
    ("keep_all's 2,645", "contradiction", "keep_all", {}, "final_size"),
    ("(0.774", "lifecycle", "keep_all", {}, "recall_at_k"),
    ("to 0.887", "lifecycle", "keep_all", E_MINI, "recall_at_k"),
]


# (the same, from published/incumbents-bounded/, the committed summary of
# sweeps/incumbents-bounded.toml)
FIFO60 = {"policy.capacity": 60, "policy.retention": "fifo"}
EVICT60 = {"policy.max_active": 60}
BOUNDED_QUOTES = [
    ("FIFO is at contradiction 0.011", "contradiction", "lethe_agent", FIFO60,
     "contradiction_rate"),
    ("current recall 0.131", "contradiction", "lethe_agent", FIFO60, "recall_current_at_k"),
    ("false-forget 0.810", "contradiction", "lethe_agent", FIFO60, "false_forget_rate"),
    ("entries (61)", "contradiction", "yantrikdb", EVICT60, "final_size"),
    ("contradiction 0.439", "contradiction", "yantrikdb", EVICT60, "contradiction_rate"),
    ("current recall 0.130", "contradiction", "yantrikdb", EVICT60, "recall_current_at_k"),
    ("false-forget 0.845", "contradiction", "yantrikdb", EVICT60, "false_forget_rate"),
    ("is 0.361 and", "lifecycle", "lethe_agent", FIFO60, "recall_current_at_k"),
    ("and 0.387.", "lifecycle", "yantrikdb", EVICT60, "recall_current_at_k"),
]


# (`memory`, not `policy`: a case reads a summary, so it needs no library installed;
# tests/conftest.py marks a case by the policy it runs)
@pytest.mark.parametrize("quote, workload, memory, params, metric, folder",
                         [(*q, "incumbents") for q in INCUMBENT_QUOTES]
                         + [(*q, "incumbents-bounded") for q in BOUNDED_QUOTES])
def test_incumbent_numbers_are_the_committed_summary(
        quote: str, workload: str, memory: str, params: dict[str, object], metric: str,
        folder: str) -> None:
    """Prevents a number the Incumbents page quotes from RESULTS.md from being typed in or
    going stale: each equals its cell's mean in its sweep's committed summary.parquet, to
    the digits shown (the first number of the quoted text)."""
    import pyarrow.parquet as pq

    assert quote in " ".join(page("incumbents.md").split()), quote
    shown = re.findall(r"\d[\d,]*(?:\.\d+)?", quote)[0]
    rows = [r for r in pq.read_table(ROOT / "published" / folder / "summary.parquet").to_pylist()
            if (r["workload"], r["policy"], r["metric"]) == (workload, memory, metric)
            and json.loads(r["params"]) == params]
    assert len(rows) == 1, (quote, len(rows))
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    assert f"{rows[0]['mean']:,.{decimals}f}" == shown, (quote, rows[0]["mean"])


def test_driver_scale_is_the_benchmarks() -> None:
    """Prevents a stale scale claim: the Cluster page's sentence on how far one driver goes
    is the one benchmarks/bench_driver.py makes from its last figures."""
    from benchmarks.bench_driver import readme_sentence

    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    assert readme_sentence(results["driver"]["result"]) in " ".join(page("cluster.md").split())


def outside_plain_fences(text: str) -> list[str]:
    """The lines of ``text`` but those inside a code fence without a language."""
    out, fence = [], None
    for line in text.splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
        elif fence != "":
            out.append(line)
    return out


def test_docs_name_no_old_result_folders() -> None:
    """Prevents prose or examples pointing at result folders that are no longer at the root
    (results/, incumbents/, frontier/, ...: they live under published/, a sweep's default
    output in runs/main/) or at a committed RESULTS.html. (Trees of the source, in plain
    fences, name runner's own subpackages.)"""
    old = re.compile(r"(?<![\w/.-])(results|incumbents|incumbents-bounded|frontier|"
                     r"outside-sweep|calibration|scaling)/")
    for name, text in PAGES.items():
        for line in outside_plain_fences(text):
            assert not old.search(line), (name, line)
        assert "[RESULTS.html]" not in text, name


def peak_rss(runs: dict[str, Any], label: str, command: str, layout: str, jobs: int) -> str:
    """A measured peak RSS of ``benchmarks/results.json``'s ``aggregate_memory`` runs, in
    MB as the docs print it."""
    return next(f"{r['peak_rss_mb']:,.0f}" for r in runs[label]["rows"]
                if (r["command"], r["layout"], r["jobs"]) == (command, layout, jobs))


def aggregate_memory_text() -> str:
    """docs/sweeps.md's sentences on aggregate's and the report's peak RSS, as
    benchmarks/results.json's ``aggregate_memory`` gives them."""
    entry = json.loads((ROOT / "benchmarks" / "results.json").read_text())["aggregate_memory"]
    runs, cells = entry["runs"], entry["cell_table"]

    def peaks(label: str, command: str, layout: str) -> str:
        first, second, third = (peak_rss(runs, label, command, layout, n)
                                for n in (10_000, 100_000, 300_000))
        return f"{first}, {second} and {third}"

    fit = {layout: runs["after"]["fits"][f"aggregate {layout}"]["peak_rss_mb"]
           for layout in ("raw", "compacted")}
    per_row = cells["300000"]
    return (f"{peaks('after', 'aggregate', 'raw')} MB raw, "
            f"{peaks('after', 'aggregate', 'compacted')} MB compacted, on paper "
            f"{fit['raw']['projected'] / 1000:.2f} GB and "
            f"{fit['compacted']['projected'] / 1000:.2f} GB at 1,000,000 jobs "
            f"({fit['raw']['per_1000_jobs']:.2f} and {fit['compacted']['per_1000_jobs']:.2f} "
            f"MB per 1,000 jobs, against {per_row['arrow_bytes_per_row'] / 1000:.2f} for the "
            f"final rows' Arrow table and {per_row['values_mb'] / per_row['jobs'] * 1000:.2f} "
            "for the per-seed matrix made from it, column by column). "
            "On Linux, Arrow allocates from jemalloc, its freed pages returned to the system "
            "at once "
            "(`ARROW_DEFAULT_MEMORY_POOL` names another pool); under pyarrow's default, "
            "mimalloc, the same compacted runs peaked at "
            f"{peaks('after-mimalloc', 'aggregate', 'compacted')} MB. With `--report` it "
            "measures `fbench report` too, which besides each job's final row keeps eight "
            "columns of every checkpoint for the memory-growth plots: "
            f"{peaks('after', 'report', 'compacted')} MB at 10,000, 100,000 and 300,000 "
            "compacted jobs.")


def test_aggregate_memory_figures_in_the_docs_are_the_benchmarks() -> None:
    """Prevents docs/sweeps.md from quoting aggregate's or the report's peak RSS (measured,
    per 1,000 jobs and projected to 1,000,000 jobs) other than benchmarks/results.json
    holds."""
    text = " ".join((DOCS / "sweeps.md").read_text().split())
    assert aggregate_memory_text() in text


def test_library_choices_quote_the_benchmarks() -> None:
    """Prevents docs/architecture.md from justifying the results side's libraries with
    figures other than benchmarks/results.json holds: the readers' seconds and peak RSS,
    and aggregate's peak at 300,000 compacted jobs under each Arrow memory pool."""
    text = " ".join((DOCS / "architecture.md").read_text().split())
    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    readers = results["readers"]
    duck, ours = readers["result"]["duckdb"], readers["result"]["fbench"]
    quoted = (f"the committed sweeps' {readers['files']:,} files in "
              f"{duck['median_seconds']:.1f} s at {duck['median_peak_rss_mb']:,.0f} MB peak "
              f"RSS; the pyarrow reader took {ours['median_seconds']:.1f} s at "
              f"{ours['median_peak_rss_mb']:,.0f} MB")
    assert quoted in text
    runs = results["aggregate_memory"]["runs"]
    peak = {label: peak_rss(runs, label, "aggregate", "compacted", 300_000)
            for label in ("after-mimalloc", "after")}
    assert (f"{peak['after-mimalloc']} MB with pyarrow's default (mimalloc), "
            f"{peak['after']} MB with jemalloc") in text


def coverage_figures() -> dict[str, Any]:
    """benchmarks/results.json's coverage study: each method's figures per case."""
    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    return results["coverage"]["methods"]


def coverage_table() -> str:
    """docs/statistics.md's coverage table, as the coverage study gives it."""
    from runner.analysis import stats

    methods = coverage_figures()
    t, bet = methods["t"], methods[f"betting c={stats.BET_CAP}"]

    def cov(f: dict[str, Any], kind: str, unit: str = "rate") -> str:
        return " / ".join(f"{100 * f[f'{unit} {kind} n={n}']['min_coverage']:.1f}%"
                          for n in (5, 10, 20))

    def width(f: dict[str, Any]) -> str:
        return " / ".join(f"{f[f'rate cell n={n}']['mean_width']:.3f}" for n in (5, 10, 20))

    return "\n".join([
        "| 95% interval | rates at 5 / 10 / 20 seeds: lowest coverage | a rate's mean width "
        "| sizes: lowest coverage |",
        "|---|---|---|---|",
        f"| Student t | {cov(t, 'cell')} (cells), {cov(t, 'delta')} (Δ) | {width(t)} | "
        f"{cov(t, 'cell', 'size')} (cells), {cov(t, 'delta', 'size')} (Δ) |",
        f"| betting, c = {stats.BET_CAP} | {cov(bet, 'cell')} (cells), {cov(bet, 'delta')} "
        f"(Δ) | {width(bet)} | — |",
    ])


def test_statistics_page_quotes_the_coverage_study() -> None:
    """Prevents docs/statistics.md and the report's Method from quoting coverage or width
    figures the committed coverage study does not give: the table, the width ratio, the
    caps' comparison, and the Method's lowest coverages."""
    from runner.analysis import stats
    from runner.report import method

    text = (ROOT / "docs" / "statistics.md").read_text()
    assert coverage_table() in text
    methods = coverage_figures()
    chosen = methods[f"betting c={stats.BET_CAP}"]
    ratios = [chosen[f"rate cell n={n}"]["mean_width"] / methods["t"][f"rate cell n={n}"][
        "mean_width"] for n in (5, 10, 20)]
    assert f"It is {min(ratios):.0f}–{max(ratios):.0f}× wider than the t interval" in text
    widths = {k: v["all"]["mean_width"] for k, v in methods.items() if k.startswith("betting")}
    assert min(widths, key=widths.__getitem__) == "betting c=0.99"
    above = widths[f"betting c={stats.BET_CAP}"] / widths["betting c=0.99"] - 1
    assert f"mean width is {100 * above:.0f}% above the narrowest (c = 0.99)" in text
    assert all(v["all"]["below_floor"] == 0 for k, v in methods.items() if k != "t")
    control = json.loads((ROOT / "benchmarks" / "results.json").read_text())["coverage"][
        "control"]
    sizes = [methods["t"][f"size cell n={n}"]["below_floor"]
             + methods["t"][f"size delta n={n}"]["below_floor"] for n in (5, 10, 20)]
    cases = methods["t"]["size cell n=5"]["cases"] + methods["t"]["size delta n=5"]["cases"]
    assert control["n=5"]["cases"] == cases
    assert (f"{cases} populations of 50 values drawn from a Normal" in text.replace("\n  ", " "))
    assert ("gives a lowest coverage of " + " / ".join(
        f"{100 * control[f'n={n}']['min_coverage']:.1f}%" for n in (5, 10, 20))
        + " at 5 / 10 / 20 seeds, with " + " / ".join(
        str(control[f"n={n}"]["below_floor"]) for n in (5, 10, 20))
        + " cases below 93.5% (sizes: " + " / ".join(map(str, sizes)) + f" of {cases})"
        ) in text.replace("\n  ", " ")
    source = Path(method.__file__).read_text()
    assert (f"finds it at {100 * chosen['all']['min_coverage']:.1f}% or more everywhere, "
            f"where the \"\n        \"t interval fell to "
            f"{100 * methods['t']['all']['min_coverage']:.0f}% on zero-heavy rates") in source


def decidable_table() -> str:
    """docs/statistics.md's table of what n seeds can decide, as ``stats`` gives it."""
    from runner.analysis import stats

    steps = np.round(np.arange(0.005, 1.0001, 0.005), 3)
    rows = ["| seeds | no valid interval below | ends splitting α: none below "
            "| betting excludes 0 from |", "|---|---|---|---|"]
    for n in (5, 10, 20, 50):
        lo, _ = stats.betting_ci(np.repeat(steps[:, None], n, axis=1), (-1.0, 1.0))
        first = f"{steps[np.argmax(lo > 0)]:.2f}" if (lo > 0).any() else "never"
        rows.append(f"| {n} | {stats.decidable_delta(n):.2f} | "
                    f"{stats.decidable_delta(n, sides=2):.2f} | {first} |")
    return "\n".join(rows)


def test_statistics_page_quotes_what_seeds_can_decide() -> None:
    """Prevents docs/statistics.md from quoting limits on what n seeds can decide, or
    where the betting interval first excludes 0, that the code does not give, and the
    report's Method from dropping the limit at its own seed count."""
    from runner.analysis import stats
    from runner.report.method import decidable_note

    text = (ROOT / "docs" / "statistics.md").read_text()
    assert decidable_table() in text
    need = next(m for m in range(2, 1000) if stats.decidable_delta(m, sides=2) <= 0.1)
    assert f"a Δ of 0.1 needs at least {need} seeds" in text
    assert decidable_note(20).startswith(
        f"No interval that holds 95% for every distribution within the bounds can show a "
        f"rate's Δ below {stats.decidable_delta(20):.2f} to be nonzero from 20 seeds")
