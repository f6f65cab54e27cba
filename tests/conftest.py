"""Shared fixtures. ``ray_local``: one embedded Ray per test session (started through
the executor's own code path; ~5 s and ~0.5 GB), shut down when the session ends.
Tests that do not ask for it never import ray."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

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
    ``Browser``); skipped where no chromium is installed (.ci/run installs Debian's)."""
    from tests.test_html_page import Browser, _chromium

    exe = _chromium()
    if exe is None:
        pytest.skip("no chromium executable on PATH (.ci/run installs Debian's chromium)")
    b = Browser(exe, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()
