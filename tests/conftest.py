"""Shared fixtures. ``ray_local``: one embedded Ray per test session (started through
the executor's own code path; ~5 s and ~0.5 GB), shut down when the session ends.
Tests that do not ask for it never import ray."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    import ray

    from cluster.ray_connect import start_local_ray

    started = start_local_ray()
    yield
    if started:
        ray.shutdown()
