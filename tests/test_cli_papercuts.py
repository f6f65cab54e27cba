"""Papercuts a newcomer hit in the `fbench` command line: piped tables squeezed to 80
columns, rich markup eating bracketed text, extractors missing from `list store`,
`run --horizon 2x` refused, no "did you mean" for a mistyped parameter, a dry run
without a time estimate, and the README's 30-second tour."""

from __future__ import annotations

import os
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.errors import FbenchError
from runner.spec.resolve import make_spec
from tests.test_cli import assert_user_error, strict_json

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


# ---------------------------------------------------------------- 1. piped width


def test_piped_list_keeps_tables_at_natural_width() -> None:
    """Prevents `fbench list policies | cat` squeezing the table to 80 columns (a
    description wrapped over many lines, names cut with an ellipsis): through a real
    pipe, some line is wider than 80 columns and every description is on one line."""
    from runner.adapters import MEMORIES

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    res = subprocess.run([sys.executable, "-m", "runner.cli", "list", "policies"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) > 80
    assert "…" not in res.stdout  # nothing cut short
    for name in MEMORIES.builtin_names():
        description = MEMORIES[name].description
        assert any(description in line for line in lines), (name, description)


# ---------------------------------------------------------------- 2. markup


def test_bracketed_text_is_shown_verbatim() -> None:
    """Prevents rich reading `[age, importance, superseded, slotted]` in learned_forget's
    description (or any name or description) as a markup tag and dropping it."""
    from runner.adapters import MEMORIES

    result = invoke("list", "policies")
    assert result.exit_code == 0, result.output
    assert "MLP over [age, importance, superseded, slotted]" in result.stdout
    flat = " ".join(result.stdout.split())
    for name in MEMORIES.builtin_names():
        assert " ".join(MEMORIES[name].description.split()) in flat, name


def test_run_title_keeps_the_job_id() -> None:
    """Prevents the job id in `fbench run`'s table title, `[f9dc...]`, being eaten as a
    markup tag (the one id to look the job up by; an id starting with a letter reads as
    a tag)."""
    seed, job_id = next((s, j) for s in range(100)
                        if (j := make_spec("contradiction", "keep_all", s, 30).job_id)[0].isalpha())
    result = invoke("run", "--workload", "contradiction", "--policy", "keep_all",
                    "--seed", str(seed), "--horizon", "30")
    assert result.exit_code == 0, result.output
    assert f"[{job_id}]" in result.stdout


# ---------------------------------------------------------------- 3. extractors


def test_list_store_shows_every_extractor_and_where_it_comes_from() -> None:
    """Prevents `fbench list store` omitting extractors a user can pass as
    `store.extractor` (the harness's `oracle` and `noisy`, which docs/memory.md's numbers use)."""
    import runner.job.extractors  # noqa: F401  (registers oracle, noisy)
    from memcore import EXTRACTORS

    result = invoke("list", "store")
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].split()[0]: line for line in result.stdout.splitlines()
            if line.startswith("│") and len(line.split("│")) > 3}
    for name in ("oracle", "noisy"):
        assert name in rows, sorted(rows)
        assert "harness" in rows[name] and "runner.job.extractors" in rows[name]
    assert "memcore" in rows["keyword"]
    assert set(EXTRACTORS.names()) <= set(rows)


# ---------------------------------------------------------------- 4. run --horizon Nx


def test_run_horizon_takes_multiples_of_the_default() -> None:
    """Prevents `fbench run --horizon 2x` being refused while `sweep --horizons 2x` takes
    it: `2x` is the same job (same horizon, same id) as the explicit number."""
    docs = []
    for horizon in ("2x", "6000"):
        result = invoke("run", "--workload", "contradiction", "--policy", "keep_all",
                        "--horizon", horizon, "--json")
        assert result.exit_code == 0, result.output
        docs.append(strict_json(result.stdout)["spec"])
    assert docs[0]["horizon"] == docs[1]["horizon"] == 6000
    assert docs[0]["job_id"] == docs[1]["job_id"]


def test_run_and_sweep_read_horizons_alike() -> None:
    """Prevents `run --horizon` and `sweep --horizons` drifting apart (two parsers)."""
    from runner.cli.job import run_horizon
    from runner.sweep.expand import horizon_of
    from workloads import WORKLOADS

    for workload in ("contradiction", "lifecycle"):
        for form in ("300", "2x", "0.5x", "1.5X", " 4x "):
            assert run_horizon(form, workload) == horizon_of(form, WORKLOADS[workload])
    assert run_horizon(None, "contradiction") is None


@pytest.mark.parametrize("bad", ["2y", "x2", "0", "-5", "0x", "", "infx", "nanx"])
def test_run_bad_horizon_is_one_line(bad: str) -> None:
    """Prevents a bad `run --horizon` being a traceback, several lines or exit code other
    than 2, or a message that does not say how to write it."""
    line = assert_user_error(invoke("run", "--workload", "contradiction", "--policy",
                                    "keep_all", "--horizon", bad),
                             "horizon must be a positive number of turns", "--horizon 2x")
    assert f"got {bad}" in line


# ---------------------------------------------------------------- 5. did you mean


def test_unknown_param_suggests_the_closest_key() -> None:
    """Prevents `--param tua=150` failing without pointing at `tau` (the bare or the
    namespaced name)."""
    line = assert_user_error(invoke("run", "--workload", "contradiction", "--policy",
                                    "ebbinghaus", "--param", "tua=150"),
                             "unknown parameter 'tua'", "did you mean 'policy.tau'")
    assert "known: " in line


@pytest.mark.parametrize(("key", "first"), [
    ("tua", "policy.tau"), ("policy.tua", "policy.tau"), ("store.tau", "policy.tau"),
    ("extractr", "store.extractor"), ("store.extractr", "store.extractor"),
])
def test_did_you_mean_matches_bare_and_namespaced(key: str, first: str) -> None:
    """Prevents the hint missing a key typed bare, namespaced, or in the wrong namespace."""
    with pytest.raises(FbenchError) as exc:
        make_spec("contradiction", "ebbinghaus", 0, 30, 5, [(key, "1")])
    hint = str(exc.value).split("; known:")[0]
    assert f"did you mean {first!r}" in hint, hint


def test_no_hint_for_a_key_like_nothing() -> None:
    """Prevents a misleading "did you mean" for a key that resembles no parameter."""
    with pytest.raises(FbenchError) as exc:
        make_spec("contradiction", "ebbinghaus", 0, 30, 5, [("zzzz", "1")])
    assert "did you mean" not in str(exc.value)


# ---------------------------------------------------------------- 6. dry-run estimate

GRID = ["--workloads", "contradiction", "--horizons", "100", "--executor", "inline"]


def test_dry_run_without_measured_jobs_says_there_is_no_estimate(tmp_path: Path) -> None:
    """Prevents a dry run inventing a time (a made-up per-job cost) when no job of the
    grid has run: it says plainly there is no estimate and how to get one."""
    result = invoke("sweep", "--policies", "keep_all,fifo", "--seeds", "3", *GRID,
                    "--out", str(tmp_path / "o"), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "no estimate: no job of this grid has run yet" in result.stdout
    assert "--seeds 1" in result.stdout
    assert not (tmp_path / "o").exists()


def test_dry_run_estimates_from_the_jobs_done(tmp_path: Path) -> None:
    """Prevents a dry run giving no time estimate once jobs have run, or one not built
    from their measured seconds: the median wall_s per (workload, policy) for the jobs of
    measured cells, the overall median for the others, on the executor's workers."""
    from runner.results.load import load_shards
    from runner.sweep.estimate import estimate, sweep_workers
    from runner.sweep.expand import SweepSpec, expand
    from runner.sweep.plan import plan

    out = tmp_path / "o"
    first = invoke("sweep", "--policies", "keep_all,fifo", "--seeds", "2", *GRID,
                   "--out", str(out), "--no-report")
    assert first.exit_code == 0, first.output
    grown = ["--policies", "keep_all,fifo,last_write_wins", "--seeds", "4", *GRID]
    result = invoke("sweep", *grown, "--out", str(out), "--dry-run")
    assert result.exit_code == 0, result.output
    line = result.stdout.splitlines()[-1]
    assert line.startswith("estimate: ~") and "on 1 worker(s) of the inline executor" in line
    assert "4 job(s) of this grid measured" in line
    assert "4 job(s) of unmeasured cells" in line

    rows = load_shards(out, final_only=True, columns=["policy", "wall_s"]).to_pylist()
    walls = {p: [r["wall_s"] for r in rows if r["policy"] == p] for p in ("keep_all", "fifo")}
    overall = statistics.median(walls["keep_all"] + walls["fifo"])
    want = (2 * statistics.median(walls["keep_all"]) + 2 * statistics.median(walls["fifo"])
            + 4 * overall)
    spec = SweepSpec(seeds=(0, 1, 2, 3), policies=("keep_all", "fifo", "last_write_wins"),
                     workloads=("contradiction",), horizons=("100",))
    jobs = expand(spec)
    est = estimate(plan(jobs, out, "failed", spec), out, "inline", 1)
    assert (est.to_run, est.measured, est.fallback) == (8, 4, 4)
    assert est.job_seconds == pytest.approx(want)
    assert est.wall_seconds() == pytest.approx(want)  # one worker: one job after another
    assert sweep_workers("inline", None, None) == 1


def test_estimate_on_workers_and_on_a_cluster() -> None:
    """Prevents an estimate that ignores the worker count, or claims one it cannot know."""
    from runner.sweep.estimate import Estimate, sweep_workers

    est = Estimate("ray", to_run=10, measured=5, job_seconds=100.0, longest_s=10.0,
                   workers=4)
    assert est.wall_seconds() == pytest.approx(25.0)
    assert "on 4 worker(s)" in est.line() and "Ray's start-up" in est.line()
    long_one = Estimate("ray", to_run=2, measured=1, job_seconds=100.0, longest_s=90.0,
                        workers=8)
    assert long_one.wall_seconds() == pytest.approx(90.0)  # never before the longest job
    assert sweep_workers("ray", "ray://head:10001", None) is None
    remote = Estimate("ray", 10, 5, 100.0, 10.0, None)
    assert remote.wall_seconds() is None and "not known" in remote.line()
    assert sweep_workers("ray", None, 1) == 1
    assert Estimate("inline", 0, 5, 0.0, 0.0, 1).line() == "estimate: nothing to run"


# ---------------------------------------------------------------- 7. README tour


def tour_section() -> tuple[str, str]:
    """README's "30-second tour": its prose and the shell script of its code block."""
    section = README.split("## 30-second tour\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    return section, blocks[0]


def test_tour_follows_the_opening_commands() -> None:
    """Prevents the tour moving away from the top (after the install commands and the
    board) or growing past a 30-second read."""
    opening = README.index("make install-dev && make test")
    assert opening < README.index("## 30-second tour") < README.index("## Benchmark your own")
    section, script = tour_section()
    assert len(section.strip().splitlines()) <= 16
    commands = [c for c in script.splitlines() if c.strip()]
    assert any(c.startswith("fbench run ") for c in commands)
    sweep = next(c for c in commands if c.startswith("fbench sweep "))
    assert "--executor inline" in sweep and "--out" in sweep


@pytest.mark.slow
def test_tour_commands_work_in_a_fresh_folder(tmp_path: Path) -> None:
    """Prevents the README's 30-second tour rotting: its commands run in an empty folder
    and leave the outputs its prose names (shards/, summary.parquet, RESULTS.md, plots/);
    rerunning the sweep runs nothing."""
    section, script = tour_section()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "recall_at_k" in res.stdout  # the one job's metrics
    sweep = next(c for c in script.splitlines() if c.startswith("fbench sweep "))
    out = tmp_path / shlex.split(sweep)[shlex.split(sweep).index("--out") + 1]
    for name in ("shards", "summary.parquet", "RESULTS.md", "plots", "sweep.json",
                 "manifest.json"):
        assert f"`{name}" in section, name
        assert (out / name).exists(), name
    assert any((out / "shards").rglob("*.parquet"))
    assert any((out / "plots").iterdir())
    again = subprocess.run(["bash", "-c", sweep], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "0 run, 6 skipped" in again.stderr, again.stderr


def test_a_sweep_shows_it_is_planning_on_a_terminal(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a silent wait before the progress bar: on a terminal, a sweep says it is
    expanding the grid and reading OUT (at 100,000 jobs, seconds); piped, it prints no
    spinner at all (the tests' captured stderr stays exactly what it was)."""
    import importlib
    import io

    cli_app = importlib.import_module("runner.cli.app")  # (runner.cli.app: the Typer app)
    screen = io.StringIO()
    monkeypatch.setattr(cli_app, "err", cli_app.StreamConsole(file=screen, force_terminal=True))
    args = ("sweep", "--seeds", "2", "--policies", "keep_all", "--workloads", "contradiction",
            "--horizons", "120", "--executor", "inline", "--no-report", "--out",
            str(tmp_path / "out"))
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    shown = screen.getvalue()
    assert "planning 2 jobs: reading what" in shown, shown
    monkeypatch.undo()
    piped = invoke(*args)
    assert piped.exit_code == 0 and "planning" not in piped.output, piped.output
