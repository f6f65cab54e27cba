"""The one-way import rules of the architecture (docs/architecture.md), checked on the
source: ``runner -> workloads``, ``runner -> memcore``, ``runner -> cluster``; memcore and
workloads import nothing of ours but the leaf ``fbench`` (the registry); cluster gets the
task function by reference and imports nothing of ours either; reading results never
imports the memory stack."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "fbench": {"workloads", "memcore", "runner", "cluster"},
    "memcore": {"workloads", "runner", "cluster"},
    "workloads": {"memcore", "runner", "cluster"},
    "cluster": {"workloads", "memcore", "runner"},
}
# runner's steps that read or render results: never the memory stack (what runs a job).
MEMORY_STACK = {"memcore", "torch", "runner.job", "runner.adapters", "runner.train"}
RESULTS_SIDE = ("runner/results", "runner/analysis", "runner/report")


def imported_modules(path: Path) -> set[str]:
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.add(node.module)
    return mods


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
    """Prevents the memory from seeing ground truth (memcore -> workloads), workloads
    from depending on anything of ours, and cluster from reaching into runner (it gets
    the task function by reference)."""
    for path in (ROOT / package).rglob("*.py"):
        bad = imported_roots(path) & FORBIDDEN[package]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_ray_is_only_imported_inside_cluster() -> None:
    """Prevents a module-level ray import outside cluster/ (slow start, hard dependency)."""
    for package in ("memcore", "workloads", "runner"):
        for path in (ROOT / package).rglob("*.py"):
            assert "ray" not in imported_roots(path), path


def test_running_a_job_does_not_import_ray_torch_or_matplotlib() -> None:
    """Prevents the CLI and a job from paying Ray's, torch's (about a second) or
    matplotlib's import cost when nothing they do needs it: a contradiction job's slot
    tagger answers with numpy."""
    code = (
        "import sys;from runner.cli import app;from runner.job.run import run_job;"
        "from runner.spec.resolve import make_spec;"
        "run_job(make_spec('contradiction','keep_all',0,horizon=50));"
        "print([m for m in ('ray', 'torch', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_listing_policies_does_not_import_the_workloads() -> None:
    """Prevents `fbench list policies` (its start-up target is 0.5 s) from paying for
    modules listing does not use: the workloads (about 30 ms, reached through an
    adapter's type annotation), rich's progress bars, Ray, torch, matplotlib."""
    code = ("import sys; from runner.cli import main; sys.argv = ['fbench', 'list', 'policies']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('workloads', 'rich.progress', 'ray', 'torch', "
            "'matplotlib') if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "oracle" in out.stdout
    assert out.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("folder", RESULTS_SIDE)
def test_reading_results_imports_no_memory_stack_in_source(folder: str) -> None:
    """Prevents the results side (shards, aggregation, statistics, the report) from
    importing what runs a job: memcore, torch, the job, the adapters, training."""
    for path in (ROOT / folder).rglob("*.py"):
        bad = {m for m in imported_modules(path)
               if any(m == s or m.startswith(s + ".") for s in MEMORY_STACK)}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_aggregating_and_reporting_load_no_memory_stack() -> None:
    """Prevents a transitive import of the memory stack (torch's seconds of import, the
    model weights) when a sweep's shards are only read, aggregated and reported."""
    code = ("import sys;import runner.results.aggregate, runner.results.compact, "
            "runner.results.validate, runner.report.markdown, runner.report.plots, "
            "runner.analysis.scaling;"
            "print(sorted(m for m in ('memcore','torch','runner.job','runner.adapters') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


_MUTATORS = {"append", "extend", "update", "clear", "setdefault", "pop", "popitem", "add",
             "insert", "remove", "discard", "__setitem__"}
# A process's state that is not a cache of what it read: a plot helper process's inputs,
# set once by the pool's initializer (``runner.report.plots``).
_PROCESS_STATE = {("runner/report/plots.py", "_HELPER")}


def _module_state(path: Path) -> list[str]:
    """What in a module keeps values across calls: a functools cache, a ``global``
    rebinding, or a module-level container some code mutates."""
    tree = ast.parse(path.read_text())
    names = {t.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
             if isinstance(t, ast.Name)}
    where = str(path.relative_to(ROOT))
    return [found for node in ast.walk(tree) for found in _keeps(node, names, where)]


def _keeps(node: ast.AST, names: set[str], where: str) -> list[str]:
    """What ``node`` keeps across calls, of the module-level ``names``."""
    if isinstance(node, ast.FunctionDef):
        return [f"@{ast.unparse(d)} on {node.name}" for d in node.decorator_list
                if ast.unparse(d).split("(")[0].split(".")[-1] in ("cache", "lru_cache")]
    if isinstance(node, ast.Global):
        return [f"global {n}" for n in node.names if (where, n) not in _PROCESS_STATE]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        target = node.func.value
        if isinstance(target, ast.Name) and target.id in names and node.func.attr in _MUTATORS:
            return [f"{target.id}.{node.func.attr}()"]
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [f"{ast.unparse(t)} = ..." for t in targets if isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name) and t.value.id in names]
    return []


@pytest.mark.parametrize("folder", ["runner/results", "runner/report"])
def test_the_results_side_keeps_no_module_level_cache(folder: str) -> None:
    """Prevents a process-wide cache of what was read (kept tables, checked files, memos)
    on the results side: a report passes the tables it read down, and a second read of a
    changed file must see the change."""
    found = {str(p.relative_to(ROOT)): s for p in sorted((ROOT / folder).glob("*.py"))
             if (s := _module_state(p))}
    assert found == {}
