"""Shared fixtures and the install markers.

``ray_local``: one embedded Ray per test session (started through the executor's own
code path; ~5 s and ~0.5 GB), shut down when the session ends. Tests that do not ask
for it never import ray.

A test that needs what ``pip install -e ".[dev]"`` lacks carries a marker
(tests/needs.py): an extra (``incumbents``, ``minilm``, ``statebench``,
``cluster_extra``, ``docs``), the example plugin package (``example``), Chromium
(``browser``) or libfaketime (``faketime``). Where that is missing the test skips, its
reason naming the install; with ``FBENCH_REQUIRE_ALL=1`` (CI, which installs
everything) it fails instead. A test using ``ray_local`` is marked ``ray`` and one using
``browser`` ``browser``; a parametrized case gets the markers its ``policy``,
``workload`` and ``embedder`` need (``needs.marks_for``), and ``ray`` when its
``executor`` is ``ray``, without marks by hand."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.needs import NEEDS, marks_for, present

NAMED_BY = ("policy", "workload", "embedder")  # the parameters that name what a case runs


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test that starts the embedded Ray or a browser, and each parametrized
    case by what it names: the installs its policy, workload or embedder needs, ``ray``
    for the ray executor."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "ray_local" in fixtures:
            item.add_marker("ray")
        if "browser" in fixtures:
            item.add_marker("browser")
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("executor") == "ray":
            item.add_marker("ray")
        named = [v for k in NAMED_BY if isinstance(v := params.get(k), str)]
        for marker in sorted(marks_for(named)):
            item.add_marker(marker)


def require_all() -> bool:
    """Whether every install is required (``FBENCH_REQUIRE_ALL=1``: CI)."""
    return os.environ.get("FBENCH_REQUIRE_ALL") == "1"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or, under ``FBENCH_REQUIRE_ALL=1``, fail) a test whose install is missing."""
    lacking = [m for m in NEEDS if item.get_closest_marker(m) and not present(m)]
    if not lacking:
        return
    why = "; ".join(NEEDS[m].reason() for m in lacking)
    if require_all():
        pytest.fail(f"{why} (FBENCH_REQUIRE_ALL=1: everything must be installed)",
                    pytrace=False)
    pytest.skip(why)


SKIPPED: list[str] = []  # the tests (or files) that skipped, in the run's main process


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        SKIPPED.append(report.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under ``FBENCH_REQUIRE_ALL=1`` a run in which any test skipped fails: where
    everything is installed, a skip is a test that did not run (for any reason)."""
    if require_all() and SKIPPED and not hasattr(session.config, "workerinput"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if require_all() and SKIPPED:
        terminalreporter.write_line(
            f"FBENCH_REQUIRE_ALL=1: {len(SKIPPED)} skipped (listed below), so the run "
            "fails: everything is installed here, so nothing may skip", red=True)


_TERMINAL = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)  # (an xdist hook: the suite also runs without xdist)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist (``make test``): tell each worker the terminal size variables the
    run was started with."""
    node.workerinput["terminal_env"] = {k: os.environ.get(k) for k in _TERMINAL}


def pytest_configure(config: pytest.Config) -> None:
    """An xdist worker starts with COLUMNS=80 and LINES=24 set; the CLI tests read the
    environment the run was started with (a piped fbench lays out at natural width
    unless COLUMNS says otherwise), so a worker takes the starting values back."""
    worker: dict[str, Any] | None = getattr(config, "workerinput", None)
    if worker is None:
        return
    for key, value in worker.get("terminal_env", {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    import ray

    from cluster.ray_connect import start_local_ray

    started = start_local_ray()
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real headless Chromium driven over the DevTools protocol (tests/test_html_page.py's
    ``Browser``); a test using it is marked ``browser`` (skipped without chromium)."""
    from tests.test_html_page import Browser, _chromium

    exe = _chromium()
    assert exe is not None
    b = Browser(exe, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()
