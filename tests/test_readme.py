"""README.md stays true: its fbench examples run, and it defines every metric."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.metrics import CATEGORIES, METRICS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def fbench_examples() -> list[str]:
    out = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            cmd = line.split("#")[0].strip()
            for part in cmd.split("&&"):
                part = part.strip()
                if part.startswith("fbench ") and " train" not in part:
                    out.append(part)
    return out


ROOT = Path(__file__).resolve().parent.parent


def runnable(cmd: str) -> list[str]:
    """The example's argv; sweeps are checked end to end with --dry-run (no Ray needed),
    repository files named by absolute path."""
    argv = [str(ROOT / a) if (ROOT / a).is_file() else a for a in shlex.split(cmd)[1:]]
    return [*argv, "--dry-run"] if argv[0] == "sweep" else argv


# aggregate, report and compact need a sweep's folder (tests/test_compact.py runs the
# compact examples on one).
@pytest.mark.parametrize(
    "cmd",
    [c for c in fbench_examples()
     if not c.startswith(("fbench aggregate", "fbench report", "fbench compact"))
     and "--address" not in c],
)
def test_readme_example_runs(cmd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents README examples that no longer work (renamed flags, policies, params)."""
    monkeypatch.chdir(tmp_path)  # relative --out folders land here, not in the checkout
    result = CliRunner().invoke(app, runnable(cmd))
    assert result.exit_code == 0, result.output


def test_readme_defines_every_metric() -> None:
    """Prevents a metric that README does not define (or a README naming a dead metric)."""
    base = {n for n in METRICS if not any(n.endswith(f"_{c}") for c in CATEGORIES)
            or n.startswith("extract_link")}
    for name in base:
        assert f"`{name}`" in README, name
    section = README.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    for name in re.findall(r"^\| `([a-z0-9_]+)` \|", section, flags=re.M):
        assert name in METRICS, name


def test_readme_names_the_test_command_ci_runs() -> None:
    """Prevents CI and README disagreeing on how the tests are run."""
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "make install && make test" in README
    assert "\nmake test\n" in ci
