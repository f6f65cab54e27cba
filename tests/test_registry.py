"""The one generic registry (fbench/registry.py): duplicates, unknown names, lazy
derived entries, `module:attr` plugins and their identity, and entry points passed to a
cluster node that lacks the distribution."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fbench.registry import PLUGIN_TARGETS, Registry, RegistryError
from memcore import POLICIES, Policy, register_policy
from runner.adapters import MEMORIES


def test_a_name_registered_twice_raises() -> None:
    """Prevents a second registration silently replacing the first."""
    reg: Registry[int] = Registry("thing")
    reg.add("a", 1)
    with pytest.raises(ValueError, match="thing 'a' is registered twice"):
        reg.add("a", 2)
    assert reg["a"] == 1


def test_an_unknown_name_suggests_the_closest_and_lists_all() -> None:
    """Prevents a typo from failing without the fix."""
    reg: Registry[int] = Registry("thing")
    reg.add("ebbinghaus", 1)
    reg.add("fifo", 2)
    with pytest.raises(RegistryError) as err:
        reg.lookup("ebbinhaus")
    assert str(err.value) == ("unknown thing 'ebbinhaus' (did you mean 'ebbinghaus'?); "
                              "known: ebbinghaus, fifo")
    assert "ebbinhaus" not in reg


def test_a_late_policy_is_seen_whole() -> None:
    """Prevents derived tables frozen at import: a policy registered after everything
    was imported gets its reference memory and its pinned wrapper at lookup."""

    @register_policy("zz_late_policy")
    class Late(Policy):
        description = "registered late, by a test"

    try:
        assert MEMORIES["zz_late_policy"].family == "reference"
        assert "pinned.zz_late_policy" in POLICIES.names()
        wrapper = POLICIES["pinned.zz_late_policy"]
        assert wrapper.wrapper and wrapper.inner_cls is Late  # type: ignore[attr-defined]
        assert MEMORIES["pinned.zz_late_policy"].family == "reference"
    finally:
        for reg in (POLICIES, MEMORIES):
            for name in ("zz_late_policy", "pinned.zz_late_policy"):
                reg._entries.pop(name, None)


def test_a_file_plugin_carries_its_source_digest(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents results that do not follow code: a module:attr memory's identity is its
    module and the SHA-256 of its file, and another file gives another identity."""
    monkeypatch.syspath_prepend(str(tmp_path))
    code = (Path(__file__).parent / "broken_adapters.py").read_text()
    (tmp_path / "zz_plugin_a.py").write_text(code)
    (tmp_path / "zz_plugin_b.py").write_text(code + "\n# changed\n")
    a = MEMORIES.origin("zz_plugin_a:Good")
    b = MEMORIES.origin("zz_plugin_b:Good")
    assert a.identity.startswith("zz_plugin_a@sha256:") and a.path.endswith("zz_plugin_a.py")
    assert a.version != b.version
    assert MEMORIES["zz_plugin_a:Good"].family == "plugin"
    for name in ("zz_plugin_a", "zz_plugin_b"):
        sys.modules.pop(name, None)


def test_entry_points_passed_by_the_driver_resolve_without_metadata(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a cluster node without the plugin's distribution from failing to
    resolve its names: the driver's entry points, passed in PLUGIN_TARGETS, resolve to
    the same code and the same identity."""
    monkeypatch.setenv(PLUGIN_TARGETS, json.dumps({"fbench.test": {
        "good": ["tests.broken_adapters:Good", "some-dist", "1.2"]}}))
    reg: Registry[object] = Registry("thing", group="fbench.test")
    from tests.broken_adapters import Good

    assert reg["good"] is Good
    assert reg.origin("good").identity == "some-dist==1.2"


def test_installed_entry_points_are_read_once_for_every_group(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents each registry re-reading every installed distribution's metadata (about
    10 ms a scan with a few hundred installed): the scan is made once a process, each
    group selected from it, and a changed sys.path scans again."""
    from importlib import metadata

    import fbench.plugins as plugins

    calls: list[int] = []
    real = metadata.entry_points

    def counting() -> metadata.EntryPoints:
        calls.append(1)
        return real()

    monkeypatch.setattr(plugins, "_INSTALLED", {})
    monkeypatch.setattr(plugins.metadata, "entry_points", counting)
    memories = Registry[object]("memory", group="fbench.memories")
    workloads = Registry[object]("workload", group="fbench.workloads")
    assert "oracle" in memories.entry_names() and "statebench" in workloads.entry_names()
    assert len(calls) == 1
    monkeypatch.syspath_prepend("/nonexistent-fbench-test-path")
    assert [ep.name for ep in plugins.installed_entry_points("fbench.memories")] == [
        ep.name for ep in real(group="fbench.memories")]
    assert len(calls) == 2


def test_a_metric_plugin_is_averaged_over_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a metric plugin (an entry point in fbench.metrics) that is listed but never
    computed: a per-query Metric is adapted under its entry-point name, and a job reports
    the mean of its per-query values (here: recall_at_k's, so the two must agree)."""
    from fbench.plugins import Origin
    from fbench.registry import _Entry
    from runner.job.run import run_job
    from runner.metrics import METRICS, Metric
    from runner.metrics.declare import as_metric
    from runner.spec.resolve import make_spec

    with pytest.raises(TypeError, match="per_query"):
        as_metric(Metric("x", "higher", "no function"), "x")
    plugin = as_metric(Metric("ignored", "higher", "recall again",
                              per_query=lambda s: float(s.correct > 0)), "zz_recall_again")
    assert plugin.name == "zz_recall_again"
    monkeypatch.setitem(METRICS._entries, "zz_recall_again",
                        _Entry(Origin("distribution", "some-dist", "1", "m:x"), plugin))
    metrics = run_job(make_spec("contradiction", "keep_all", 0, horizon=300)).metrics()
    assert metrics["zz_recall_again"] == metrics["recall_at_k"]
