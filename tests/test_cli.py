"""The `fbench` command line: run, list, train; bad input is one line on stderr, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.metrics import METRICS
from runner.spec.resolve import make_spec

runner = CliRunner()

RUN = ["run", "--workload", "contradiction", "--policy", "ebbinghaus", "--seed", "0"]


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def strict_json(text: str) -> dict:
    """Parse JSON rejecting NaN/Infinity (not JSON; pyarrow/jq/browsers refuse them)."""

    def refuse(token: str) -> None:
        raise ValueError(f"non-JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


def assert_user_error(result, *needles: str) -> str:  # type: ignore[no-untyped-def]
    """Exit 2, exactly one non-empty 'error:' line on stderr, nothing on stdout, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("error: ")
    assert line[len("error: "):].strip()
    for needle in needles:
        assert needle in line
    return line


# ---------------------------------------------------------------- run


def test_run_json() -> None:
    """Guards against `run --json` printing anything but one JSON object holding the spec
    (with its job id) and every declared metric."""
    result = invoke(*RUN, "--horizon", "300", "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.count("\n") == 1
    doc = strict_json(result.stdout)
    assert set(doc) == {"spec", "metrics"}
    want = make_spec("contradiction", "ebbinghaus", 0, 300)
    assert doc["spec"] == {"workload": "contradiction", "policy": "ebbinghaus", "seed": 0,
                           "horizon": 300, "params": {}, "k": 5, "workload_version": "2",
                           "job_id": want.job_id}
    assert set(doc["metrics"]) == set(METRICS)
    assert doc["metrics"]["n_queries"] > 0


def test_run_json_nan_becomes_null() -> None:
    """Guards against NaN (no queries yet) reaching the JSON output as the invalid token NaN."""
    result = invoke(*RUN, "--horizon", "30", "--json")
    assert result.exit_code == 0, result.output
    metrics = strict_json(result.stdout)["metrics"]
    assert metrics["n_queries"] == 0
    assert metrics["recall_at_k"] is None
    assert metrics["precision_hard"] is None


def test_run_table_lists_metrics() -> None:
    """Guards against the human table dropping metrics or the job id."""
    result = invoke(*RUN, "--horizon", "300")
    assert result.exit_code == 0, result.output
    first_cells = {line.split("│")[1].strip() for line in result.stdout.splitlines()
                   if line.startswith("│")}
    assert set(METRICS) <= first_cells
    assert make_spec("contradiction", "ebbinghaus", 0, 300).job_id in result.stdout


def _job_id(*params: str) -> dict:
    args = [*RUN, "--horizon", "300", "--json"]
    for p in params:
        args += ["--param", p]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return strict_json(result.stdout)["spec"]


def test_bare_and_namespaced_param_same_job() -> None:
    """Guards against `tau=30` and `policy.tau=30` becoming two different jobs."""
    bare, full = _job_id("tau=30"), _job_id("policy.tau=30")
    assert bare["params"] == full["params"] == {"policy.tau": 30.0}
    assert bare["job_id"] == full["job_id"]
    assert bare["job_id"] != _job_id()["job_id"]


def test_bare_keys_resolve_to_their_namespace() -> None:
    """Guards against bare keys of the workload and store namespaces not being found."""
    spec = _job_id("p_hard=0.5", "extractor=teacher", "gain=2")
    assert spec["params"] == {"policy.gain": 2.0, "store.extractor": "teacher",
                              "workload.p_hard": 0.5}


# ---------------------------------------------------------------- list


def test_list_policies() -> None:
    """Guards against a registered policy missing from `fbench list policies`."""
    result = invoke("list", "policies")
    assert result.exit_code == 0, result.output
    for name in ("keep_all", "last_write_wins", "ebbinghaus", "learned_forget"):
        assert name in result.stdout


def test_list_workloads() -> None:
    """Guards against `list workloads` omitting a workload's horizon unit or default."""
    result = invoke("list", "workloads")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "│ contradiction " in line]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].split("│")]
    assert "turns" in cells
    assert "3000" in cells


def test_list_metrics() -> None:
    """Guards against a declared metric missing from `list metrics`."""
    result = invoke("list", "metrics")
    assert result.exit_code == 0, result.output
    first_cells = {line.split("│")[1].strip() for line in result.stdout.splitlines()
                   if line.startswith("│")}
    assert set(METRICS) <= first_cells


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["run", "--workload", "nosuch", "--policy", "keep_all"],
         ["unknown workload 'nosuch'", "contradiction"]),
        (["run", "--workload", "contradiction", "--policy", "nosuch"],
         ["unknown policy 'nosuch'", "keep_all"]),
        (["run", "--workload", "contradiction", "--policy", "ebbinghau"],
         ["unknown policy 'ebbinghau'", "did you mean 'ebbinghaus'"]),
        ([*RUN, "--param", "nosuch=1"], ["unknown parameter 'nosuch'", "policy.tau"]),
        ([*RUN, "--param", "tau"], ["'tau' is not key=value"]),
        ([*RUN, "--param", "tau=abc"], ["policy.tau='abc' is not a valid float"]),
        ([*RUN, "--param", "tau=-1"], ["ebbinghaus", "tau must be positive"]),
        ([*RUN, "--horizon", "0"], ["horizon must be a positive number of turns, got 0"]),
        ([*RUN, "--horizon", "-5"], ["horizon must be a positive number of turns, got -5"]),
        ([*RUN, "--k", "0"], ["k must be a positive", "got 0"]),
        (["run", "--workload", "contradiction", "--policy", "keep_all", "--seed", "-1"],
         ["seed must be non-negative"]),
        (["list", "foo"], ["unknown listing 'foo'", "policies"]),
    ],
    ids=["workload", "policy", "policy-near-miss", "param-unknown", "param-no-equals",
         "param-not-number", "param-invalid", "horizon-0", "horizon-negative", "k-0",
         "seed-negative", "list-foo"],
)
def test_bad_input_is_one_line_exit_2(args: list[str], needles: list[str]) -> None:
    """Guards against bad input producing a traceback, several lines, output on stdout or
    an exit code other than 2, and against messages that do not name the problem."""
    assert_user_error(runner.invoke(app, args), *needles)


def test_near_miss_suggestion_absent_for_far_names() -> None:
    """Guards against a 'did you mean' hint for a name that resembles nothing."""
    line = assert_user_error(invoke("run", "--workload", "contradiction", "--policy", "zzzz"))
    assert "did you mean" not in line


def test_train_unknown_model() -> None:
    """Guards against `train nosuchmodel` crashing or writing weights instead of a one-line
    error listing the known models."""
    assert_user_error(invoke("train", "nosuchmodel"), "unknown model 'nosuchmodel'")


@pytest.mark.skipif(sys.platform != "linux", reason="fbench picks jemalloc on Linux only")
@pytest.mark.parametrize(("user", "pool"), [(None, "jemalloc"), ("system", "system")])
def test_the_command_line_picks_arrow_pool(user: str | None, pool: str) -> None:
    """Prevents the aggregate's peak RSS growing with the pages Arrow's default pool keeps
    (mimalloc): a process that loads ``runner.cli`` allocates Arrow memory from jemalloc,
    and a pool the user names in ``ARROW_DEFAULT_MEMORY_POOL`` is kept."""
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if user is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = user
    code = "import runner.cli, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == pool
    assert proc.stderr == ""
