"""The one-way import rules of DESIGN.md, checked on the source."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "memcore": {"workloads", "runner", "cluster"},
    "workloads": {"memcore", "runner", "cluster"},
}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_what_it_may(package: str) -> None:
    """Prevents the memory from seeing ground truth (memcore -> workloads) and workloads
    from depending on anything of ours."""
    for path in (ROOT / package).rglob("*.py"):
        bad = imported_roots(path) & FORBIDDEN[package]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_ray_is_only_imported_inside_cluster() -> None:
    """Prevents a module-level ray import outside cluster/ (slow start, hard dependency)."""
    for package in ("memcore", "workloads", "runner"):
        for path in (ROOT / package).rglob("*.py"):
            assert "ray" not in imported_roots(path), path


def test_running_a_job_does_not_import_ray() -> None:
    """Prevents the CLI and a job from paying Ray's import cost when no sweep needs it."""
    code = (
        "import sys;from runner.cli import app;from runner.job import run_job;"
        "from runner.resolve import make_spec;"
        "run_job(make_spec('contradiction','keep_all',0,horizon=50));"
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
