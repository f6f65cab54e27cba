"""README.md stays a true landing page: it fits in 12 KB, opens with the two commands,
its board is the committed summaries', its timing sentence the benchmarks', its links
resolve, and its plugin quick start works in an empty folder. (Its fbench examples run
with the docs': tests/test_docs_examples.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runner.errors import FbenchError
from runner.report.headline import BEGIN, END, SWEEPS, board, board_in, with_board

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
COMMANDS = ["make install && fbench sweep --seeds 50", "make install-dev && make test"]


def test_readme_is_a_landing_page() -> None:
    """Prevents README from growing back into the manual: at most 12,000 bytes (the rest
    lives in docs/)."""
    assert len((ROOT / "README.md").read_bytes()) <= 12_000


def test_readme_opens_with_the_two_commands() -> None:
    """Prevents the first thing a reader runs from drifting: README's first code block is
    exactly the install-and-sweep line and the install-and-test line."""
    first = re.search(r"```bash\n(.*?)```", README, flags=re.S)
    assert first is not None and first.group(1).splitlines() == COMMANDS
    assert "runs/main/RESULTS.md" in README
    assert "apt-get install chromium faketime" in README and "make test-fast" in README


def test_readme_names_the_test_command_ci_runs() -> None:
    """Prevents CI and README disagreeing on how the tests are run."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make install-dev && make test" in README
    assert "\nmake test\n" in ci


def test_readme_timing_is_the_benchmarks() -> None:
    """Prevents a stale timing claim: README's sentence on how long its first command
    takes is the one benchmarks/bench_sweep.py makes from its last figures."""
    from benchmarks.bench_sweep import readme_sentence

    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    assert readme_sentence(results["sweep"]["result"]) in " ".join(README.split())


def test_readme_job_count_is_the_default_grid() -> None:
    """Prevents a stale size of the first command's sweep: README's "N jobs (P policies ×
    W workloads × S seeds)" is what `fbench sweep --seeds 50` expands to."""
    from runner.sweep.config import build_spec, seeds_from_count
    from runner.sweep.expand import expand

    m = re.search(r"The sweep is ([\d,]+) jobs \((\d+)\s+policies × (\d+) workloads × (\d+) "
                  r"seeds\)", README)
    assert m is not None
    jobs = expand(build_spec({}, {"seeds": seeds_from_count(int(m.group(4)))}))
    assert m.group(4) == "50"
    assert (int(m.group(1).replace(",", "")), int(m.group(2)), int(m.group(3))) == (
        len(jobs), len({j.policy for j in jobs}), len({j.workload for j in jobs}))


def test_board_is_the_published_rows() -> None:
    """Prevents README's board from being typed in or going stale: the block between its
    markers is exactly what runner.report.headline renders from published/*/finals.parquet
    (`make readme-board` rewrites it)."""
    assert board_in(README) == board(ROOT / "published")


def test_board_is_a_few_numbers() -> None:
    """Prevents the board from growing back into a table of everything: it shows 5 to 8
    numbers (each a mean and its interval) in at most 4 columns; the rest is RESULTS.md's."""
    block = board_in(README)
    assert 5 <= len(re.findall(r"\d \[-?\d[.\d]*, -?\d[.\d]*\]", block)) <= 8, block
    header = next(line for line in block.splitlines() if line.startswith("| "))
    assert header.count(" | ") + 1 <= 4, header


def test_board_rewrite_keeps_the_rest_of_the_text() -> None:
    """Prevents `make readme-board` from eating README's text around the board, or writing
    into a file without the markers."""
    text = f"before\n{BEGIN}\nold\n{END}\nafter\n"
    assert with_board(text, "new") == f"before\n{BEGIN}\nnew\n{END}\nafter\n"
    assert board_in(with_board(text, "new")) == "new"
    with pytest.raises(FbenchError):
        with_board("no markers\n", "new")


def test_board_reads_the_sweeps_the_report_includes() -> None:
    """Prevents README's board from ranking other sweeps than RESULTS.md's board, or in
    another order (a cell two sweeps ran is shown from the first): its sweeps are the
    Makefile's SWEEPS, in order."""
    makefile = (ROOT / "Makefile").read_text()
    m = re.search(r"^SWEEPS = (.+)$", makefile, re.M)
    assert m is not None
    assert tuple(m.group(1).split()) == SWEEPS


def test_readme_links_resolve() -> None:
    """Prevents a README link to a page or file that does not exist (the docs pages moved
    out of README are reached through these links)."""
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def own_memory_section() -> tuple[str, str]:
    """The "Benchmark your own memory" section, and the shell script of its code block."""
    section = README.split("## Benchmark your own memory", 1)[1].split("\n## ", 1)[0]
    script = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(script) == 1
    return section, script[0]


def test_own_memory_section_is_short() -> None:
    """Prevents the plugin quick start from growing past what a reader takes in at once
    (at most 25 lines, heading included)."""
    section, _ = own_memory_section()
    assert len(("## Benchmark your own memory" + section).strip().splitlines()) <= 25


@pytest.mark.slow
def test_own_memory_section_works_in_a_fresh_folder(tmp_path: Path) -> None:
    """Prevents the README's plugin quick start from rotting: pasted into an empty folder,
    it checks the memory (every rule holds) and sweeps it next to keep_all; editing the
    file and rerunning reruns only its jobs."""
    _, script = own_memory_section()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "mymem:RecencyMem: 9 of 9 rules hold" in res.stdout
    assert "10 jobs: 10 run" in res.stderr
    assert (tmp_path / "mine" / "RESULTS.md").is_file()
    with (tmp_path / "mymem.py").open("a") as f:
        f.write("# edited\n")
    sweep = next(line for line in script.splitlines() if line.startswith("fbench sweep"))
    again = subprocess.run(["bash", "-c", sweep], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
    assert "10 jobs: 5 run, 5 skipped" in again.stderr, again.stderr
