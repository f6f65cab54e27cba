"""Shared fixtures. ``ray_local``: one embedded Ray per test session (started through
the executor's own code path; ~5 s and ~0.5 GB), shut down when the session ends.
Tests that do not ask for it never import ray."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


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
