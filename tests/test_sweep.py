"""Sweep specs, expansion, resume planning and the sweep's bad-input errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from runner.errors import FbenchError
from runner.results.shard import NONDETERMINISTIC
from runner.sweep.config import build_spec, load_config, merge_params, parse_seed_list
from runner.sweep.expand import DEFAULT_SEEDS, SweepSpec, expand, horizon_of
from runner.sweep.plan import existing_shards, plan
from runner.sweep.run import choose_executor, prepare, run_sweep
from workloads import WORKLOADS

C = ("contradiction",)
TINY = SweepSpec(seeds=(0, 1), policies=("keep_all", "ebbinghaus"), workloads=C,
                 horizons=("120",))


def test_default_grid_is_every_reference_policy_and_workload() -> None:
    """Prevents a default sweep that silently leaves out one of fbench's policies or
    workloads (the pinned.* wrappers are opt-in: one per policy would double every
    sweep; installed plugins, a trace and StateBench are swept only by name)."""
    from memcore import POLICIES

    jobs = expand(SweepSpec())
    own = {n for n in POLICIES.names() if POLICIES.origin(n).source == "builtin"}
    assert {j.policy for j in jobs} == {n for n in own if not POLICIES[n].wrapper}
    assert {n for n in own if POLICIES[n].wrapper} == {
        f"pinned.{n}" for n in own if not POLICIES[n].wrapper}
    assert {j.workload for j in jobs} == {  # the current generators only: a workload that
        # reads data (a trace file, StateBench's generator, an extra) runs when named
        n for n in WORKLOADS.names() if WORKLOADS.origin(n).source == "builtin"
        and "@" not in n and n not in ("trace", "statebench")}
    assert DEFAULT_SEEDS == 20 and {j.seed for j in jobs} == set(range(DEFAULT_SEEDS))
    assert all(j.horizon == WORKLOADS[j.workload].default_horizon for j in jobs)
    assert len(jobs) == (DEFAULT_SEEDS * len({j.policy for j in jobs})
                         * len({j.workload for j in jobs}))


def test_a_generator_grid_holds_cells_not_jobs() -> None:
    """Prevents the driver holding one object per job again (a million-job sweep held
    ~760 bytes a job before the grid): a generator workload's jobs are one template per
    cell and the seed list, and a subset (the jobs to run) is positions."""
    from runner.sweep.grid import SeedCell, Subset

    spec = SweepSpec(seeds=(*range(1000), 3), policies=("fifo", "lru"),
                     workloads=("contradiction",), params=(("fifo.capacity", ("100", "7")),))
    grid = expand(spec)
    assert all(isinstance(c, SeedCell) for c in grid.cells)
    assert len(grid.cells) == 3 and len(grid) == 3000  # (seed 3 once)
    assert [c.seeds for c in grid.cells] == [tuple(range(1000))] * 3  # type: ignore[attr-defined]
    some = Subset(grid, [1, 999, 1000, 2999])
    assert [(j.policy, j.seed) for j in some] == [("fifo", 1), ("fifo", 999), ("fifo", 0),
                                                  ("lru", 999)]
    assert [(j.policy, n) for j, n in some.weighted()] == [("fifo", 2), ("fifo", 1),
                                                         ("lru", 1)]
    # membership without every job's id: by the cell's fields and its seeds
    job = grid[999]
    assert grid.has(job) and not grid.has(dataclasses.replace(job, seed=1000))
    moved = dataclasses.replace(job, code=(("memory", "elsewhere 1.0"),))
    assert not grid.has(moved) and grid.has(moved, any_code=True)
    scattered = expand(dataclasses.replace(spec, seeds=(9, 2, 5, 2)))
    assert [j.seed for j in scattered][:3] == [9, 2, 5]
    assert scattered.has(dataclasses.replace(job, seed=5))
    assert not scattered.has(dataclasses.replace(job, seed=3))


def test_expansion_is_pure_ordered_and_unique() -> None:
    """Prevents nondeterministic job order or duplicate jobs (a job must run once)."""
    spec = SweepSpec(seeds=(0, 1, 2), params=(("ebbinghaus.tau", ("30", "150")),))
    a, b = expand(spec), expand(spec)
    assert list(a) == list(b)
    assert len({j.job_id for j in a}) == len(a)
    # the grid makes each job when asked: by position, from either end, as it iterates
    assert [a[i] for i in range(len(a))] == list(a) == a[:] == [a[i - len(a)] for i in
                                                                range(len(a))]
    with pytest.raises(IndexError):
        a[len(a)]


def test_grid_axis_targets_only_its_policy_and_defaults_collapse() -> None:
    """Prevents a policy's grid leaking onto other policies, and tau=150 (the default)
    running twice under two ids."""
    spec = SweepSpec(seeds=(0,), policies=("keep_all", "ebbinghaus"), workloads=C,
                     params=(("ebbinghaus.tau", ("30", "60", "150")),))
    cells = sorted((j.policy, j.params) for j in expand(spec))
    assert cells == [
        ("ebbinghaus", ()),
        ("ebbinghaus", (("policy.tau", 30.0),)),
        ("ebbinghaus", (("policy.tau", 60.0),)),
        ("keep_all", ()),
    ]


def test_store_and_workload_axes_apply_to_every_matching_job() -> None:
    """Prevents store./workload-name axes from being dropped or misrouted."""
    spec = SweepSpec(seeds=(0,), policies=("keep_all",), workloads=C,
                     params=(("store.extractor", ("teacher", "auto")),
                             ("contradiction.p_hard", ("0.2",))))
    got = sorted(j.params for j in expand(spec))
    assert got == [
        (("store.extractor", "teacher"), ("workload.p_hard", 0.2)),
        (("workload.p_hard", 0.2),),
    ]


@pytest.mark.parametrize(
    ("raw", "want"), [("1x", 3000), ("4x", 12000), ("0.5x", 1500), ("777", 777), (" 2X ", 6000)]
)
def test_horizons_in_units_or_multiples(raw: str, want: int) -> None:
    """Prevents misreading Nx (a multiple of the default) or plain horizons."""
    assert horizon_of(raw, WORKLOADS["contradiction"]) == want


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "x", "0x"])
def test_bad_horizons(raw: str) -> None:
    """Prevents a bad horizon turning into a crash deep inside a job."""
    with pytest.raises(FbenchError):
        horizon_of(raw, WORKLOADS["contradiction"])


@pytest.mark.parametrize(
    "spec",
    [
        SweepSpec(policies=("nope",)),
        SweepSpec(workloads=("nope",)),
        SweepSpec(params=(("ebbinghaus.taux", ("1",)),)),
        SweepSpec(params=(("nope.tau", ("1",)),)),
        SweepSpec(params=(("ebbinghaus.tau", ("-1",)),)),
        SweepSpec(seeds=()),
    ],
)
def test_bad_specs_are_one_line_errors(spec: SweepSpec) -> None:
    """Prevents an invalid grid from starting (every problem named before any job runs)."""
    with pytest.raises(FbenchError) as exc:
        expand(spec)
    assert "\n" not in str(exc.value)


def test_seed_list_parsing() -> None:
    """Prevents duplicate or malformed seeds from being accepted."""
    assert parse_seed_list("0,3,7,3") == (0, 3, 7)
    for bad in ("a,b", "-1", ","):
        with pytest.raises(FbenchError):
            parse_seed_list(bad)


def test_config_file_fields_and_cli_overrides(tmp_path: Path) -> None:
    """Prevents a sweep.toml being read differently from the same CLI flags."""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text('seeds = 3\npolicies = ["ebbinghaus"]\nhorizons = ["1000"]\n'
                   'workloads = ["contradiction"]\n'
                   '[params]\n"ebbinghaus.tau" = [30, 60]\n')
    data = load_config(cfg)
    spec = build_spec(data, {"params": merge_params(
        tuple((k, tuple(v)) for k, v in data["params"].items()), [])})
    assert spec.seeds == (0, 1, 2)
    assert spec.policies == ("ebbinghaus",)
    assert len(expand(spec)) == 6
    spec2 = build_spec(data, {"seeds": (4,), "params": merge_params(spec.params,
                                                                     ["ebbinghaus.tau=90"])})
    assert [j.params for j in expand(spec2)] == [(("policy.tau", 90.0),)]


@pytest.mark.parametrize(
    "text", ["seedz = 3\n", "seeds = [\n", 'policies = 3\n[params]\nx = {a = 1}\n']
)
def test_bad_config_files(tmp_path: Path, text: str) -> None:
    """Prevents a typo'd or malformed sweep.toml from being silently half-read."""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(text)
    with pytest.raises(FbenchError):
        data = load_config(cfg)
        expand(build_spec(data, {}))


def test_auto_executor_rule() -> None:
    """Prevents starting Ray (~5 s) for a few seconds of work, or running a big sweep inline."""
    small = expand(TINY)
    big = expand(SweepSpec(seeds=tuple(range(30))))
    assert choose_executor("auto", None, small) == "inline"
    assert choose_executor("auto", None, big) == "ray"
    assert choose_executor("auto", "127.0.0.1:6379", small) == "ray"
    assert choose_executor("inline", None, big) == "inline"


def test_the_work_estimate_is_the_benchmarks() -> None:
    """Prevents ``--executor auto`` and Ray's batch sizes from working on stale job
    costs: each workload's estimate is within 25% of its median job seconds in the last
    ``benchmarks/bench_sweep.py`` run (benchmarks/results.json)."""
    import json

    from runner.sweep.run import JOB_SECONDS

    root = Path(__file__).resolve().parent.parent
    sweep = json.loads((root / "benchmarks" / "results.json").read_text())["sweep"]["result"]
    medians = sweep["runs"][-1]["median_job_s"]
    assert set(medians) == set(JOB_SECONDS)
    for workload, seconds in medians.items():
        assert abs(JOB_SECONDS[workload] - seconds) <= 0.25 * seconds, workload


def _run(tmp: Path, spec: SweepSpec = TINY, overwrite: str = "failed") -> None:
    run_sweep(prepare(spec, expand(spec), tmp, executor="inline", overwrite=overwrite))


def test_resume_skips_valid_shards_and_reruns_corrupt_ones(tmp_path: Path) -> None:
    """Prevents resume from rerunning finished jobs, or trusting a corrupt shard."""
    _run(tmp_path)
    shards = existing_shards(tmp_path)
    assert len(shards) == 4
    victim = sorted(shards.values())[0]
    victim.write_bytes(b"not parquet")
    p = plan(expand(TINY), tmp_path, "failed")
    assert (p.skipped, len(p.to_run), p.invalid) == (3, 1, [victim.stem])
    with pytest.raises(FbenchError, match="do not validate"):
        plan(expand(TINY), tmp_path, "never")
    _run(tmp_path)
    assert pq.read_table(victim).num_rows > 0
    assert len(plan(expand(TINY), tmp_path, "failed").to_run) == 0
    assert len(plan(expand(TINY), tmp_path, "always").to_run) == 4


def test_a_resume_sets_aside_what_lies_outside_a_partition_and_clears_temporaries(
        tmp_path: Path) -> None:
    """Prevents a resume scan read one partition folder at a time from missing a file
    elsewhere in shards/ (a stray file there is quarantined, never counted) or leaving a
    killed writer's temporary behind."""
    _run(tmp_path)
    folder = sorted(existing_shards(tmp_path).values())[0].parent
    tmp = folder / ".abc.parquet.tmp"
    tmp.write_bytes(b"half")
    (tmp_path / "shards" / "loose.parquet").write_bytes(b"not parquet")
    (folder.parent / "loose.parquet").write_bytes(b"not parquet")
    p = plan(expand(TINY), tmp_path, "failed")
    assert (p.skipped, [q.relative_to(tmp_path).as_posix() for q in p.quarantine]) == (4, [
        "shards/loose.parquet", f"shards/{folder.parent.name}/loose.parquet"])
    _run(tmp_path)
    assert not tmp.exists() and not (tmp_path / "shards" / "loose.parquet").exists()
    assert (tmp_path / "quarantine" / "shards" / "loose.parquet").is_file()


def test_shards_from_another_sweep_are_refused(tmp_path: Path) -> None:
    """Prevents mixing two sweeps' shards in one folder (the summary would blend them)."""
    _run(tmp_path)
    other = SweepSpec(seeds=(5,), policies=("keep_all",), workloads=C, horizons=("120",))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(FbenchError, match="another sweep"):
        prepare(other, expand(other), tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    _run(tmp_path, other, overwrite="always")
    assert len(existing_shards(tmp_path)) == 1


def test_bad_out_folder_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a half-written sweep when OUT is a file or unwritable."""
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(FbenchError, match="is a file"):
        prepare(TINY, expand(TINY), f)
    ro = tmp_path / "ro"
    ro.mkdir()
    # CI runs as root, for whom permission bits do not bite: deny through os.access.
    monkeypatch.setattr("runner.sweep.plan.os.access", lambda path, mode: Path(path) != ro)
    with pytest.raises(FbenchError, match="not writable"):
        prepare(TINY, expand(TINY), ro / "out" / "deeper")
    assert list(ro.iterdir()) == []


def test_manifest_and_sweep_json(tmp_path: Path) -> None:
    """Prevents a sweep folder without its expanded spec and provenance."""
    import json

    _run(tmp_path)
    sweep = json.loads((tmp_path / "sweep.json").read_text())
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert len(sweep["jobs"]) == 4
    assert manifest["counts"] == {"total": 4, "done": 4, "skipped": 0, "failed": 0}
    assert set(manifest["versions"]) >= {"fbench", "python", "ray", "torch", "pyarrow"}
    assert manifest["ended"] is not None


def test_failed_job_is_recorded_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents one exception from crashing a sweep: it is a failed job with its traceback,
    and a rerun retries it."""
    import json

    import runner.job.run as job_mod

    real = job_mod.run_job

    def flaky(spec):  # type: ignore[no-untyped-def]
        if spec.seed == 1 and spec.policy == "keep_all":
            raise RuntimeError("boom")
        return real(spec)

    monkeypatch.setattr("runner.job.execute.run_job", flaky)
    _run(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["counts"]["failed"] == 1
    assert "RuntimeError: boom" in manifest["failures"][0]["error"]
    assert len(existing_shards(tmp_path)) == 3
    monkeypatch.setattr("runner.job.execute.run_job", real)
    _run(tmp_path)
    assert len(existing_shards(tmp_path)) == 4


def test_nondeterministic_columns_are_only_timing_and_node() -> None:
    """Prevents the determinism comparisons from ignoring a real metric."""
    assert {"wall_s", "query_ms_mean", "query_ms_p95", "node"} == NONDETERMINISTIC


@pytest.mark.parametrize("layout", ["one job per line", "indented (an older fbench)"])
def test_the_recorded_spec_reads_from_either_sweep_json_layout(layout: str,
                                                               tmp_path: Path) -> None:
    """Prevents aggregate and report from misreading the sweep's config (baseline,
    declared comparisons) from a sweep.json written one job per line, which they read
    from its first line, or from an indented one an older fbench wrote."""
    import json

    from runner.results.sweep_config import recorded_spec, sweep_baseline, sweep_family
    from runner.sweep.run import sweep_record

    spec = SweepSpec(seeds=(0, 1), policies=("keep_all", "ebbinghaus"), workloads=C,
                     baseline="ebbinghaus", compare=(("ebbinghaus", "keep_all"),))
    text = "".join(sweep_record(spec, expand(spec)))
    if layout != "one job per line":
        text = json.dumps(json.loads(text), indent=1)
    (tmp_path / "sweep.json").write_text(text)
    assert json.loads(text)["spec"] == recorded_spec(tmp_path) == json.loads(
        json.dumps(spec.to_dict()))
    assert sweep_baseline(tmp_path) == "ebbinghaus"
    assert sweep_family(tmp_path)[0] == [("ebbinghaus", "keep_all")]
    assert len(json.loads(text)["jobs"]) == 4
