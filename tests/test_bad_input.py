"""Bad input, table-driven: every bad invocation prints one line naming the problem (and
the valid choices where there are some), exits 2, prints no traceback and leaves no
file behind. The files some cases need (a malformed config, a file where a folder
should be) are made before the snapshot of the working folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app

RUN = ["run", "--workload", "contradiction", "--policy", "ebbinghaus", "--seed", "0"]
SWEEP = ["sweep", "--no-report", "--out", "out"]

FIXTURES = {
    "bad.toml": "seeds = [1,\npolicies = 3",
    "unknown_key.toml": "seeds = 2\npolicy = ['keep_all']\n",
    "empty_grid.toml": "seeds = 2\n[params]\n\"ebbinghaus.tau\" = []\n",
    "a_file": "not a folder",
}

# Malformed traces (docs/trace-format.md): each named file holds a header and events.
_H = {"format": "fbench-trace", "version": 1, "horizon": 10, "horizon_unit": "turns",
      "categories": {"fact": "facts"}, "update_kinds": {},
      "vocabulary": {"entities": ["ann"], "phrases": [["home city", "home_city"]]},
      "distinct_facts": 1}
_O = {"type": "observe", "t": 0, "text": "Ann's home city is oslo.", "meta": {},
      "truth": {"slot": "ann.home_city", "value": "oslo", "kind": "fact"}}
_Q = {"type": "query", "t": 1, "text": "Where does Ann live?",
      "truth": {"slot": "ann.home_city", "value": "oslo", "stale": [], "category": "fact"}}


def _trace(*lines: object, header: object = _H) -> str:
    return "\n".join(json.dumps(x) if not isinstance(x, str) else x
                     for x in (header, *lines)) + "\n"


TRACES = {
    "t_json.jsonl": _trace(_O, "{oops"),
    "t_field.jsonl": _trace({k: v for k, v in _O.items() if k != "text"}),
    "t_back.jsonl": _trace({**_O, "t": 5}, {**_Q, "t": 4}),
    "t_category.jsonl": _trace(_O, {**_Q, "truth": {**_Q["truth"], "category": "gossip"}}),
    "t_early.jsonl": _trace(_Q),
    "t_version.jsonl": _trace(_O, header={**_H, "version": 7}),
    "t_horizon.jsonl": _trace({**_O, "t": 12}),
    "t_type.jsonl": _trace({**_O, "type": "remember"}),
}
FIXTURES.update(TRACES)
TRACE_RUN = ["run", "--workload", "trace", "--policy", "keep_all", "--param"]

# (id, argv, words the one line must contain)
CASES: list[tuple[str, list[str], list[str]]] = [
    # names
    ("unknown-policy", ["run", "--workload", "contradiction", "--policy", "nope"],
     ["unknown policy 'nope'", "keep_all"]),
    ("policy-typo", ["run", "--workload", "contradiction", "--policy", "ebinghaus"],
     ["did you mean 'ebbinghaus'"]),
    ("unknown-workload", ["run", "--workload", "nope", "--policy", "keep_all"],
     ["unknown workload 'nope'", "lifecycle"]),
    ("workload-typo", ["run", "--workload", "lifecycel", "--policy", "keep_all"],
     ["did you mean 'lifecycle'"]),
    ("unknown-embedder", [*RUN, "--param", "embedder=bert"], ["unknown embedder 'bert'", "minilm"]),
    ("unknown-extractor", [*RUN, "--param", "extractor=orcale"],
     ["unknown extractor 'orcale'", "did you mean 'oracle'"]),
    ("unknown-listing", ["list", "polices"], ["unknown listing 'polices'", "policies"]),
    ("sweep-unknown-policy", [*SWEEP, "--policies", "keep_all,nope"], ["unknown policy 'nope'"]),
    ("sweep-unknown-workload", [*SWEEP, "--workloads", "contradictio"],
     ["did you mean 'contradiction'"]),
    ("unknown-executor", [*SWEEP, "--executor", "spark"], ["unknown executor 'spark'"]),
    ("unknown-overwrite", [*SWEEP, "--overwrite", "sometimes"], ["--overwrite 'sometimes'"]),
    ("baseline-not-in-sweep", [*SWEEP, "--policies", "fifo", "--baseline", "oracle"],
     ["baseline 'oracle' is not a policy"]),
    ("incumbent-bad-retention", ["run", "--workload", "contradiction", "--policy",
                                 "lethe_agent", "--param", "retention=lru2"],
     ["retention 'lru2'", "score_decay"]),
    ("policy-path-escape", [*SWEEP, "--policies", "../../etc/passwd"],
     ["unknown policy '../../etc/passwd'"]),
    ("workload-path-escape", [*SWEEP, "--workloads", "../x"], ["unknown workload '../x'"]),
    # numbers
    ("seed-negative", [*RUN[:-1], "-1"], ["seed must be non-negative"]),
    ("horizon-zero", [*RUN, "--horizon", "0"], ["horizon must be a positive number of turns"]),
    ("horizon-negative", [*RUN, "--horizon", "-5"], ["horizon must be a positive"]),
    ("k-zero", [*RUN, "--k", "0"], ["k must be a positive"]),
    ("sweep-seeds-zero", [*SWEEP, "--seeds", "0"], ["--seeds must be positive"]),
    ("sweep-horizon-zero", [*SWEEP, "--horizons", "0"], ["horizon '0' must be positive"]),
    ("sweep-horizon-text", [*SWEEP, "--horizons", "12y"], ["neither a number nor Nx"]),
    ("sweep-k-zero", [*SWEEP, "--k", "0"], ["k must be a positive integer"]),
    ("max-in-flight-zero", [*SWEEP, "--max-in-flight", "0"], ["--max-in-flight must be positive"]),
    ("seeds-and-seed-list", [*SWEEP, "--seeds", "2", "--seed-list", "1"], ["not both"]),
    # --param syntax and ranges
    ("param-no-equals", [*RUN, "--param", "tau"], ["'tau' is not key=value"]),
    ("param-not-a-number", [*RUN, "--param", "tau=abc"], ["is not a valid float"]),
    ("param-unknown-key", [*RUN, "--param", "nosuch=1"], ["unknown parameter 'nosuch'"]),
    ("param-out-of-range", [*RUN, "--param", "tau=-1"], ["tau must be positive"]),
    ("probability-out-of-range", [*RUN, "--param", "p_hard=1.5"], ["p_hard must be in [0, 1]"]),
    ("rates-without-noisy", [*RUN, "--param", "extract_miss=0.2"], ["need extractor=noisy"]),
    ("negative-budget", [*RUN, "--param", "budget=-3"], ["budget"]),
    ("sweep-param-no-values", [*SWEEP, "--param", "ebbinghaus.tau"], ["not key=v1,v2"]),
    ("sweep-param-applies-to-nothing", [*SWEEP, "--policies", "fifo", "--param", "tau=1,2"],
     ["applies to no job"]),
    # configs and paths
    ("config-missing", [*SWEEP, "--config", "missing.toml"], ["does not exist"]),
    ("config-malformed", [*SWEEP, "--config", "bad.toml"], ["is not valid TOML"]),
    ("config-unknown-key", [*SWEEP, "--config", "unknown_key.toml"],
     ["unknown key 'policy'", "policies"]),
    ("config-empty-grid", [*SWEEP, "--config", "empty_grid.toml"], ["has no values"]),
    ("out-is-a-file", ["sweep", "--no-report", "--out", "a_file", "--seeds", "1"],
     ["a_file"]),
    ("out-not-writable", ["sweep", "--no-report", "--out", "/proc/fbench-out", "--seeds", "1"],
     ["/proc/fbench-out", "not writable"]),
    ("unreachable-address", [*SWEEP, "--seeds", "1", "--address", "127.0.0.1:1"],
     ["127.0.0.1:1"]),
    ("address-with-inline", [*SWEEP, "--seeds", "1", "--executor", "inline", "--address",
                             "127.0.0.1:6379"], ["--address 127.0.0.1:6379", "--executor inline"]),
    ("report-no-sweep", ["report", "nowhere"], ["no shards"]),
    ("aggregate-no-sweep", ["aggregate", "nowhere"], ["no shards"]),
    # traces: the file, the line and the field
    ("trace-no-path", ["run", "--workload", "trace", "--policy", "keep_all"],
     ["needs a file: --param workload.path=FILE"]),
    ("trace-missing-file", [*TRACE_RUN, "workload.path=nope.jsonl"], ["nope.jsonl: workload"]),
    ("trace-bad-json", [*TRACE_RUN, "workload.path=t_json.jsonl"],
     ["t_json.jsonl:3: line: is not JSON"]),
    ("trace-missing-field", [*TRACE_RUN, "workload.path=t_field.jsonl"],
     ["t_field.jsonl:2: text:"]),
    ("trace-time-backwards", [*TRACE_RUN, "workload.path=t_back.jsonl"],
     ["t_back.jsonl:3: t: 4 comes after 5"]),
    ("trace-unknown-category", [*TRACE_RUN, "workload.path=t_category.jsonl"],
     ["t_category.jsonl:3: truth.category: 'gossip'"]),
    ("trace-query-first", [*TRACE_RUN, "workload.path=t_early.jsonl"],
     ["t_early.jsonl:2: type: a query before any observation"]),
    ("trace-format-version", [*TRACE_RUN, "workload.path=t_version.jsonl"],
     ["t_version.jsonl:1: version: is 7"]),
    ("trace-past-horizon", [*TRACE_RUN, "workload.path=t_horizon.jsonl"],
     ["t_horizon.jsonl:2: t: 12 is not before the header's horizon 10"]),
    ("trace-unknown-type", [*TRACE_RUN, "workload.path=t_type.jsonl"],
     ["t_type.jsonl:2: type: 'remember'"]),
    ("trace-validate-bad", ["trace", "validate", "t_back.jsonl"], ["t_back.jsonl:3: t:"]),
    ("trace-sweep-bad", [*SWEEP, "--workloads", "trace", "--policies", "keep_all",
                         "--seeds", "1", "--param", "workload.path=t_field.jsonl"],
     ["t_field.jsonl:2: text:"]),
]


@pytest.mark.parametrize(("argv", "words"), [(a, w) for _, a, w in CASES],
                         ids=[i for i, _, _ in CASES])
def test_bad_invocation(argv: list[str], words: list[str], tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a bad invocation from printing a traceback or several lines, exiting
    with another code, failing to name the problem, or leaving files behind."""
    for name, text in FIXTURES.items():
        (tmp_path / name).write_text(text)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before, \
        "files were left behind"
    assert os.getcwd() == str(tmp_path)


def test_the_table_is_large_enough() -> None:
    """Prevents the table shrinking below the 30 invocations it promises."""
    assert len(CASES) >= 30


@pytest.mark.incumbents
def test_every_shard_path_stays_inside_the_output_folder(tmp_path: Path) -> None:
    """Prevents a registered name from steering a shard outside OUT (``..``, a slash)."""
    from runner.adapters import MEMORIES
    from runner.results.shard import shard_path
    from runner.spec.resolve import make_spec
    from workloads import WORKLOADS

    out = (tmp_path / "out").resolve()
    trace = tmp_path / "t.jsonl"  # a workload that reads data is given a file
    assert CliRunner().invoke(app, ["trace", "export", "contradiction", "--horizon", "20",
                                    "--output", str(trace)]).exit_code == 0
    for workload in WORKLOADS:
        params = [("workload.path", str(trace))] if workload == "trace" else []
        for policy in MEMORIES:
            path = shard_path(out, make_spec(workload, policy, 0, horizon=10,
                                             params=params)).resolve()
            assert path.is_relative_to(out / "shards"), path
            assert ".." not in path.relative_to(out).parts


def test_an_address_that_is_not_ray_fails_in_one_line_quickly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a port that accepts connections but is not Ray (here a server that reads
    and never answers) from reaching ``ray.init`` (its retries, Ray's log and a misleading
    auth hint): the probe before it answers with one line naming the address ("not a
    Ray cluster"), exit 2, and no file written."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            held.append(conn)  # read nothing, answer nothing

    threading.Thread(target=accept, daemon=True).start()
    monkeypatch.chdir(tmp_path)
    try:
        result = CliRunner().invoke(app, [*SWEEP, "--seeds", "1", "--policies", "keep_all",
                                          "--address", f"127.0.0.1:{port}"])
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert result.exit_code == 2, (result.output, result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "not a Ray" in lines[0], \
        result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_module_missing_on_the_workers_stops_the_sweep_in_one_line(tmp_path: Path) -> None:
    """Prevents a node that lacks a module a job needs (a plugin's dependency, or one of
    fbench's own) from costing retries and a traceback per job: the sweep stops with
    one line naming the module and the node it is missing on, exit 2, no shard written.
    The plugin imports a module that exists nowhere, only inside Ray's workers (the
    driver's checks pass, as on a cluster whose head has everything)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    (tmp_path / "needs_lib.py").write_text(
        "from pathlib import Path\n"
        "from tests.broken_adapters import Good, Params\n"
        "class NeedsLib(Good):\n"
        "    def __init__(self, params: Params) -> None:\n"
        "        if any(a.startswith('ray::') for a in "
        "Path('/proc/self/cmdline').read_text().split('\\0')):\n"
        "            import fbench_test_absent_dependency  # noqa: F401\n"
        "        super().__init__(params)\n")
    env = {**os.environ, "PYTHONPATH": str(root)}
    res = subprocess.run(
        [sys.executable, "-m", "runner.cli", *SWEEP, "--policies", "needs_lib:NeedsLib",
         "--workloads", "contradiction", "--seeds", "2", "--horizons", "200",
         "--executor", "ray"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600, check=False)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]  # (and progress)
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "module 'fbench_test_absent_dependency' is not installed" in lines[0], lines[0]
    assert "on node " in lines[0] and "install it there" in lines[0], lines[0]
    assert not list((tmp_path / "out").glob("shards/**/*.parquet"))
