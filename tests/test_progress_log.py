"""A sweep's progress in a log: off a terminal, a plain line every FBENCH_PROGRESS_SECONDS
(done/total, skipped, failed, jobs/s, elapsed, ETA) while the sweep runs, and none with
--quiet."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from runner.cli.progress import (
    DEFAULT_SECONDS,
    SECONDS_VARIABLE,
    Lines,
    Pace,
    Tally,
    clock,
    interval,
    progress_line,
)
from runner.errors import FbenchError

ROOT = Path(__file__).resolve().parent.parent
SWEEP = [sys.executable, "-m", "runner.cli", "sweep", "--policies", "keep_all",
         "--workloads", "contradiction", "--executor", "inline", "--no-report"]
LINE = re.compile(r"sweep: (\d+)/(\d+) done, (\d+) skipped, (\d+) failed, "
                  r"(-|\d+\.\d\d) jobs/s, \w+ elapsed, ETA [\w?]+")


def _env(seconds: str) -> dict[str, str]:
    """The environment with the line interval set and nothing that makes rich treat a
    file as a terminal."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    return env | {SECONDS_VARIABLE: seconds}


def test_lines_state_counts_rate_and_eta_exactly() -> None:
    """Prevents a progress line that drops a count, miscomputes the ETA (jobs without an
    outcome over the rate) or prints a rate before any job has finished."""
    mid = Tally(120, 480, ran=20, skipped=100, failed=2)
    assert progress_line("sweep", mid, 85.0, 0.26) == (
        "sweep: 120/480 done, 100 skipped, 2 failed, 0.26 jobs/s, 1m25s elapsed, ETA 22m57s")
    assert progress_line("sweep", Tally(0, 6, skipped=0, failed=0), 3.2, None) == (
        "sweep: 0/6 done, 0 skipped, 0 failed, - jobs/s, 3s elapsed, ETA ?")
    end = Tally(478, 480, ran=380, skipped=100, failed=2)
    assert progress_line("sweep", end, 3729.0, 0.1019) == (
        "sweep: 478/480 done, 100 skipped, 2 failed, 0.10 jobs/s, 1h02m09s elapsed, ETA 0s")
    assert progress_line("calibrate", Tally(0, None), 0.0, None) == (
        "calibrate: 0/? done, - jobs/s, 0s elapsed, ETA ?")
    assert [clock(s) for s in (0.4, 59.4, 60.0, 3600.0)] == ["0s", "59s", "1m00s", "1h00m00s"]


def test_the_rate_counts_from_the_first_tally() -> None:
    """Prevents a jobs/s that counts the executor's start-up, or the jobs finished before
    the first tally, or divides by zero."""
    pace = Pace()
    assert pace.rate(Tally(0, 10, ran=0), 5.0) is None
    pace.note(Tally(1, 10, ran=1), 100.0)
    pace.note(Tally(9, 10, ran=9), 200.0)  # (only the first tally starts the clock)
    assert pace.rate(Tally(1, 10, ran=1), 100.0) is None
    assert pace.rate(Tally(15, 20, ran=15), 110.0) == 1.4


def test_the_interval_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a default other than 30 s, and a nonsense interval (which would spin or
    never print) from being used instead of named as an error."""
    monkeypatch.delenv(SECONDS_VARIABLE, raising=False)
    assert interval() == DEFAULT_SECONDS == 30.0
    monkeypatch.setenv(SECONDS_VARIABLE, "0.25")
    assert interval() == 0.25
    for bad in ("0", "-1", "soon", "inf", "nan"):
        monkeypatch.setenv(SECONDS_VARIABLE, bad)
        with pytest.raises(FbenchError, match=f"{SECONDS_VARIABLE}="):
            interval()


def test_the_last_line_comes_only_when_the_run_ends_well() -> None:
    """Prevents a progress line after an error, which would make a one-line error two
    lines; and a run that ends well without its final line."""
    good, bad = io.StringIO(), io.StringIO()
    with Lines("x", Console(file=good, width=200), Tally(0, 2), 3600.0):
        pass
    with pytest.raises(RuntimeError), Lines("x", Console(file=bad), Tally(0, 2), 3600.0):
        raise RuntimeError
    assert good.getvalue() == "x: 0/2 done, - jobs/s, 0s elapsed, ETA ?\n"
    assert bad.getvalue() == ""


def test_a_piped_sweep_logs_progress_while_it_runs(tmp_path: Path) -> None:
    """Prevents a sweep whose stderr is a file from printing one line at the end: lines
    come every interval even while no job finishes (the same count again), each is
    flushed (read from the file while the sweep still runs), the counts only grow, and
    the last progress line and the summary close the log."""
    log, out = tmp_path / "sweep.log", tmp_path / "out"
    live: list[str] = []  # progress lines read while the process ran
    with log.open("w") as stderr:
        proc = subprocess.Popen([*SWEEP, "--seeds", "3", "--horizons", "40000", "--out",
                                 str(out)], stdout=subprocess.DEVNULL, stderr=stderr,
                                cwd=ROOT, env=_env("0.1"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            seen = LINE.findall(log.read_text())
            if proc.poll() is not None:
                break
            live = [done for done, *_ in seen]
            time.sleep(0.05)
        assert proc.wait(timeout=60) == 0, log.read_text()
    *lines, summary = log.read_text().splitlines()
    assert summary == f"3 jobs: 3 run, 0 skipped (done before), 0 failed (inline executor) -> {out}"
    assert all(LINE.fullmatch(line) for line in lines), lines
    done = [int(m[0]) for m in LINE.findall("\n".join(lines))]
    assert done == sorted(done) and done[-1] == 3, done
    assert len(done) > len(set(done)), done  # a line while no job finished: the timer's
    assert {"1", "2"} & set(live), live  # lines mid-sweep were in the file as it ran
    assert lines[-1].startswith("sweep: 3/3 done, 0 skipped, 0 failed, ")
    assert lines[-1].endswith(", ETA 0s")


def test_quiet_prints_no_progress(tmp_path: Path) -> None:
    """Prevents --quiet from still printing progress lines, or from also silencing the
    summary."""
    out = tmp_path / "out"
    res = subprocess.run([*SWEEP, "--seeds", "1", "--horizons", "20000", "--out", str(out),
                          "--quiet"], capture_output=True, text=True, cwd=ROOT,
                         env=_env("0.05"), timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        f"1 jobs: 1 run, 0 skipped (done before), 0 failed (inline executor) -> {out}"]
