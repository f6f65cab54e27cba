"""The workload's clock for adapters (``runner.adapters.UsesClock``) and the public
helper that puts a wall-clock library on it (``fbench.clock.simulate``)."""

from __future__ import annotations

import json
import shutil
import time
import types
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fbench.clock import EPOCH, Clock, simulate
from tests.test_plugins import ROOT, fbench

PLUGIN = ROOT / "tests" / "clock_plugin"


def _library() -> types.ModuleType:
    """A module that took the time every way a library does."""
    lib = types.ModuleType("lib")
    exec("import time, datetime\nfrom time import time as now\n"
         "from datetime import datetime as dt, date\n", lib.__dict__)
    return lib


@pytest.mark.parametrize(("clock", "unit"), [(Clock("days"), 86_400.0),
                                             (Clock("turns", 4), 21_600.0),
                                             (Clock("turns"), 86_400.0)])
def test_simulate_sets_every_name_a_library_reads_the_time_by(clock: Clock,
                                                               unit: float) -> None:
    """Prevents a library seeing the real time through one of its names, or the stream's
    time scaled by the wrong day: at t the library reads EPOCH + t units (+ one second a
    call at the same t), and the module that asked for none of it keeps the real time."""
    lib = _library()
    sim = simulate(lib, clock)
    assert sim.at(10) == EPOCH.fromtimestamp(EPOCH.timestamp() + 10 * unit + 1, EPOCH.tzinfo)
    expected = EPOCH.timestamp() + 10 * unit + 1
    assert lib.time.time() == lib.now() == expected
    assert lib.time.time_ns() == round(expected * 1e9)
    assert lib.dt.now(EPOCH.tzinfo).timestamp() == expected
    assert lib.datetime.datetime.now(EPOCH.tzinfo).timestamp() == expected
    assert lib.date.today() == lib.datetime.date.today() == lib.dt.utcnow().date()
    assert lib.time.monotonic() > 0  # the rest of the module is the real one
    sim.at(10)
    assert lib.now() == expected + 1
    assert abs(time.time() - EPOCH.timestamp()) > 86_400  # this module: real time


def test_an_outside_adapter_on_the_simulated_clock_inline_and_on_ray(tmp_path: Path) -> None:
    """Prevents an outside adapter's library reading the real time (it would expire
    nothing in a run of seconds), or reading another time on Ray than inline: a
    time.time() TTL cache expires on the stream's days, with bit-identical metrics on
    both executors, on a day stream and a turn stream."""
    for name in ("ttlcache.py", "clockmem.py"):
        shutil.copy(PLUGIN / name, tmp_path / name)
    metrics = {}
    for executor in ("inline", "ray"):
        res = fbench("sweep", "--policies", "clockmem:ClockMem", "--workloads",
                     "lifecycle,contradiction", "--seeds", "2", "--horizons", "300",
                     "--executor", executor, "--out", executor, "--no-report", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        rows = [pq.read_table(p).to_pylist()[-1] for p in
                sorted((tmp_path / executor / "shards").rglob("*.parquet"))]
        metrics[executor] = {
            (r["workload"], r["seed"]): {k: v for k, v in r.items()
                                         if not k.startswith(("query_ms", "wall_s", "node"))}
            for r in rows}
    same = {key: json.dumps(row, sort_keys=True) for key, row in metrics["inline"].items()}
    assert same == {key: json.dumps(row, sort_keys=True)  # (nan as nan)
                    for key, row in metrics["ray"].items()}
    assert len(same) == 4
    for (workload, _), row in metrics["inline"].items():
        assert row["n_forgotten"] > 0, workload
        # three days: three turns on contradiction (a turn a day), at most 3 days' captures
        assert row["final_size"] <= (4 if workload == "contradiction" else 200), workload
    assert json.loads(metrics["inline"][("lifecycle", 0)]["params_full"])[
        "policy.ttl_days"] == 3.0


def test_the_plugins_page_example_runs_on_the_stream_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents docs/plugins.md's clock example rotting: it runs, and what it stores is
    stamped with the stream's time, on a day clock and on contradiction's turns."""
    import re
    import sys

    page = (ROOT / "docs" / "plugins.md").read_text()
    (block,) = re.findall(r"  ```python\n(.*?)  ```", page, flags=re.S)
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.delitem(sys.modules, "ttlcache", raising=False)
    scope: dict[str, object] = {}
    exec("\n".join(line[2:] for line in block.splitlines()), scope)
    for clock, seconds in ((Clock("days"), 5 * 86_400), (Clock("turns", 2), 5 * 43_200)):
        mem = scope["TtlMem"](None)  # type: ignore[operator]
        mem.use_clock(clock)
        mem.observe(1, 5, "the sky is blue", {})
        assert mem.cache.items[1][0] == EPOCH.timestamp() + seconds + 1
