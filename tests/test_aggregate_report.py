"""Shards -> summary.parquet -> RESULTS.md and plots: counts, means, pairing, schema handling,
errors and byte-for-byte determinism. Shards come from real (tiny) inline jobs."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from runner.analysis.stats import CI_METHOD
from runner.errors import FbenchError
from runner.job.execute import execute
from runner.metrics import METRICS
from runner.report.blocks import seed_ranges
from runner.report.markdown import write_report
from runner.results.aggregate import SUMMARY, aggregate, baseline_params, read_summary
from runner.results.load import load_shards, shard_files
from runner.results.shard import shard_path, write_shard
from runner.results.tables import main_table
from runner.spec.resolve import make_spec

SEEDS = (0, 1, 2)
TAU60 = [("policy.tau", "60")]


def _run(out: Path, policy: str, seed: int, horizon: int, params: list[tuple[str, str]]) -> None:
    spec = make_spec("contradiction", policy, seed, horizon=horizon, params=params)
    o = execute(spec.canonical_json(), "inline")
    assert o.table is not None, o.error
    write_shard(shard_path(out, spec), o.table)


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """'two': keep_all and ebbinghaus tau=60 x 3 seeds at horizon 300. 'grid': that, plus
    default ebbinghaus at 300 (a tau sweep) and both policies at horizon 150 (scaling)."""
    root = tmp_path_factory.mktemp("sweeps")
    two, grid = root / "two", root / "grid"
    for seed in SEEDS:
        for policy, params in (("keep_all", []), ("ebbinghaus", TAU60)):
            _run(two, policy, seed, 300, params)
            _run(grid, policy, seed, 150, params)
        _run(grid, "ebbinghaus", seed, 300, [])
    shutil.copytree(two / "shards", grid / "shards", dirs_exist_ok=True)
    return {"two": two, "grid": grid}


@pytest.fixture(scope="module")
def reported(sweeps: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of 'grid' with its report written once (for the tests that only read it)."""
    out = tmp_path_factory.mktemp("reported") / "grid"
    shutil.copytree(sweeps["grid"], out)
    write_report(out)
    return out


@pytest.fixture
def two(sweeps: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "two"
    shutil.copytree(sweeps["two"], out)
    return out


@pytest.fixture
def grid(sweeps: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "grid"
    shutil.copytree(sweeps["grid"], out)
    return out


def _final_rows(out: Path) -> dict[tuple[str, str], list[dict]]:
    """Final rows per (policy, params), sorted by seed, read file by file (no dataset)."""
    rows: dict[tuple[str, str], list[dict]] = {}
    for f in shard_files(out):
        last = pq.read_table(f).to_pylist()[-1]
        assert last["is_final"]
        rows.setdefault((last["policy"], last["params"]), []).append(last)
    return {k: sorted(v, key=lambda r: r["seed"]) for k, v in rows.items()}


def _row(summary: pa.Table, policy: str, params: str, metric: str) -> dict:
    mask = pc.and_(pc.and_(pc.equal(summary["policy"], policy),
                           pc.equal(summary["params"], params)),
                   pc.equal(summary["metric"], metric))
    rows = summary.filter(mask).to_pylist()
    assert len(rows) == 1, (policy, params, metric, len(rows))
    return rows[0]


TAU = json.dumps({"policy.tau": 60.0}, sort_keys=True)


def _nan_safe(table: pa.Table) -> list[dict]:
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in table.to_pylist()]


# ------------------------------------------------------------------------ aggregate


def test_cells_have_n_seeds_and_the_numpy_mean_of_final_rows(two: Path) -> None:
    """Prevents grouping or reduction bugs: each (policy, params) cell has n=3 and its mean is
    numpy's mean over the shards' final rows (not over every checkpoint)."""
    summary = aggregate(two)
    finals = _final_rows(two)
    assert set(finals) == {("keep_all", "{}"), ("ebbinghaus", TAU)}
    for (policy, params), rows in finals.items():
        for metric in ("contradiction_rate", "recall_at_k", "final_size", "final_tokens"):
            r = _row(summary, policy, params, metric)
            assert (r["n_jobs"], r["n"], r["n_missing"]) == (3, 3, 0)
            assert r["mean"] == pytest.approx(np.mean([x[metric] for x in rows]), rel=1e-15)
            assert r["std"] == np.std([x[metric] for x in rows], ddof=1)
            assert r["ci_low"] <= r["mean"] <= r["ci_high"]
    assert summary.num_rows == 2 * sum(1 for m in METRICS.values() if not m.timing)
    assert "wall_s" not in set(summary["metric"].to_pylist())


def test_paired_deltas_against_keep_all(two: Path) -> None:
    """Prevents unpaired or mis-signed comparisons: delta = policy - keep_all for the same seed,
    'better' follows the metric's direction, and the baseline cell has no comparison."""
    summary = aggregate(two)
    finals = _final_rows(two)
    pol, base = finals[("ebbinghaus", TAU)], finals[("keep_all", "{}")]
    for metric in ("final_size", "contradiction_rate"):
        r = _row(summary, "ebbinghaus", TAU, metric)
        delta = np.array([p[metric] - b[metric] for p, b in zip(pol, base, strict=True)])
        assert (r["baseline"], r["baseline_params"], r["n_pairs"]) == ("keep_all", "{}", 3)
        assert r["delta_mean"] == np.mean(delta)
        assert (r["n_better"], r["n_ties"], r["n_worse"]) == (
            int((delta < 0).sum()), int((delta == 0).sum()), int((delta > 0).sum()))
        assert r["share_better"] == (r["n_better"] + r["n_ties"] / 2) / 3
    # tau=60 prunes at horizon 300: strictly smaller in every seed.
    assert _row(summary, "ebbinghaus", TAU, "final_size")["n_better"] == 3
    b = _row(summary, "keep_all", "{}", "final_size")
    assert b["baseline"] is None and b["delta_mean"] is None and b["n_pairs"] is None


def test_summary_is_byte_identical_across_runs(two: Path) -> None:
    """Prevents non-determinism (unseeded Monte Carlo p-values, dict or file order) in
    summary.parquet."""
    first = aggregate(two)
    data = (two / SUMMARY).read_bytes()
    second = aggregate(two)
    assert (two / SUMMARY).read_bytes() == data
    assert _nan_safe(first) == _nan_safe(second)
    assert not [p for p in two.iterdir() if p.name.startswith(".")]  # no temp file left


def test_a_shard_lacking_a_metric_column_does_not_drop_it_for_all(two: Path) -> None:
    """Prevents pyarrow's default (schema of the first file) from silently dropping a column
    the first shard lacks: it reads as null for that shard only and is counted in n_missing."""
    files = shard_files(two)
    first = files[0]
    pq.write_table(pq.read_table(first).drop_columns(["recall_at_k"]), first)
    assert "recall_at_k" not in ds.dataset([str(f) for f in files]).schema.names  # the trap
    table = load_shards(two)
    assert table.column("recall_at_k").null_count == 20  # one shard's 20 checkpoints
    summary = aggregate(two)
    lacking = pq.read_table(first).to_pylist()[-1]
    r = _row(summary, lacking["policy"], lacking["params"], "recall_at_k")
    assert (r["n_jobs"], r["n"], r["n_missing"]) == (3, 2, 1)
    rest = [x["recall_at_k"] for x in _final_rows(two)[(lacking["policy"], lacking["params"])]
            if x["seed"] != lacking["seed"]]
    assert r["mean"] == np.mean(rest)
    other = "keep_all" if lacking["policy"] != "keep_all" else "ebbinghaus"
    assert next(x for x in summary.to_pylist()
                if x["policy"] == other and x["metric"] == "recall_at_k")["n"] == 3


def test_a_shard_lacking_a_coordinate_is_an_error_naming_it(two: Path) -> None:
    """Prevents a shard without its coordinates from becoming a silent null cell."""
    victim = shard_files(two)[-1]
    pq.write_table(pq.read_table(victim).drop_columns(["seed"]), victim)
    with pytest.raises(FbenchError, match=rf"{victim.name} lacks seed"):
        aggregate(two)


def test_nan_metric_values_are_left_out_of_n(two: Path) -> None:
    """Prevents nan (a query category with no queries) from making a cell's mean nan."""
    f = shard_files(two)[0]
    t = pq.read_table(f)
    col = t.column("recall_at_k_hard").to_pylist()
    col[-1] = float("nan")
    t = t.set_column(t.schema.get_field_index("recall_at_k_hard"),
                     t.schema.field("recall_at_k_hard"), pa.array(col, pa.float64()))
    pq.write_table(t, f)
    last = t.to_pylist()[-1]
    r = _row(aggregate(two), last["policy"], last["params"], "recall_at_k_hard")
    assert (r["n_jobs"], r["n"], r["n_missing"]) == (3, 2, 0)
    assert not math.isnan(r["mean"])


def test_missing_baseline_policy_is_an_error_listing_the_present_ones(two: Path) -> None:
    """Prevents a summary without comparisons when --baseline names an absent policy."""
    with pytest.raises(FbenchError, match=r"'last_write_wins'.*present: ebbinghaus, keep_all"):
        aggregate(two, baseline="last_write_wins")


def test_no_shards_is_an_error_and_dot_files_are_ignored(tmp_path: Path) -> None:
    """Prevents an empty summary (or a crash reading a half-written temporary) for an OUT
    without shards."""
    with pytest.raises(FbenchError, match="no shards"):
        aggregate(tmp_path)
    tmp = tmp_path / "shards" / "workload=x" / ".partial.parquet"
    tmp.parent.mkdir(parents=True)
    tmp.write_bytes(b"not parquet")
    with pytest.raises(FbenchError, match="no shards"):
        aggregate(tmp_path)


def test_another_baseline_pairs_with_its_default_params(two: Path) -> None:
    """Prevents --baseline from being ignored: with ebbinghaus as the baseline (absent at default
    params here) nothing is paired, and the summary records the baseline."""
    summary = aggregate(two, baseline="ebbinghaus")
    assert summary.schema.metadata[b"fbench.baseline"] == b"ebbinghaus"
    assert summary.column("n_pairs").null_count == summary.num_rows


def test_baseline_params_keep_only_non_policy_overrides() -> None:
    """Prevents pairing a policy with a baseline run on another stream (workload params differ)."""
    p = json.dumps({"policy.tau": 60.0, "workload.p_hard": 0.5}, sort_keys=True)
    assert baseline_params(p) == '{"workload.p_hard": 0.5}'
    assert baseline_params(TAU) == "{}"


def test_main_table_shows_every_policy_with_ci(two: Path) -> None:
    """Prevents the CLI's table from losing a cell or the interval's two ends."""
    console = Console(record=True, width=200)
    console.print(main_table(aggregate(two)))
    text = console.export_text()
    assert "keep_all" in text and "ebbinghaus tau=60" in text
    assert "contradiction_rate ↓" in text and "recall_at_k ↑" in text
    assert re.search(r"\d\.\d+ \[\d\.\d+, \d\.\d+\]", text)


def test_report_aggregation_without_keep_all_pairs_nothing(two: Path) -> None:
    """Prevents `fbench sweep` (which reports at the end) from failing after all its jobs when
    the sweep did not run keep_all: the report's implicit aggregation just pairs nothing."""
    shutil.rmtree(two / "shards" / "workload=contradiction" / "policy=keep_all")
    summary = read_summary(two)
    assert set(summary["policy"].to_pylist()) == {"ebbinghaus"}
    assert summary.column("n_pairs").null_count == summary.num_rows


def test_a_report_reads_each_file_once(two: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a report from reading a sweep's shards twice (its aggregation, its plots'
    columns and its evidence all come from one read), and a second report from taking
    anything from the first but the files (a shard rewritten since is read as it is)."""
    import runner.results.load as load

    checked: list[str] = []
    check = load._check_files
    monkeypatch.setattr(load, "_check_files", lambda d, s, n: checked.extend(
        f.path for f in d.get_fragments()) or check(d, s, n))
    write_report(two)
    files = sorted(str(f) for f in shard_files(two))
    assert sorted(checked) == files
    before = _row(read_summary(two), "keep_all", "{}", "final_size")["mean"]
    shard = next(f for f in sorted((two / "shards").rglob("*.parquet"))
                 if "policy=keep_all" in str(f))
    table = pq.read_table(shard)
    i = table.schema.get_field_index("final_size")
    field = table.schema.field(i)
    write_shard(shard, table.set_column(i, field, pa.array([7.0] * table.num_rows, field.type)))
    checked.clear()
    write_report(two)
    assert sorted(checked) == files
    after = _row(read_summary(two), "keep_all", "{}", "final_size")["mean"]
    assert after != before


def _same(a: pa.Table, b: pa.Table) -> bool:
    """The same schema and values, a nan equal to a nan (``Table.equals`` has them differ)."""
    def values(t: pa.Table) -> dict[str, list[object]]:
        return {n: ["nan" if isinstance(v, float) and math.isnan(v) else v
                    for v in t.column(n).to_pylist()] for n in t.column_names}
    return a.schema.equals(b.schema) and values(a) == values(b)


def test_one_read_gives_the_tables_separate_reads_give(
        two: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the one read a report makes (final rows and every row at once, files a
    batch at a time) from differing from reading each table alone, file by file: a column
    out of order, a category missing from one workload's shards not null, a row out of
    place."""
    import runner.results.load as load

    spec = make_spec("lifecycle", "keep_all", 1, horizon=20)  # (categories of its own)
    o = execute(spec.canonical_json(), "inline")
    assert o.table is not None, o.error
    write_shard(shard_path(two, spec), o.table)
    every = ["job_id", "t", "final_size", "recall_at_k_durable"]
    both = load.read_rows(two, final=None, every=every)
    alone = load_shards(two, final_only=True)
    assert _same(both.final, alone)
    assert _same(both.every, load_shards(two, columns=every))
    by_file = pa.concat_tables([pq.read_table(f) for f in shard_files(two)],
                               promote_options="default")
    assert both.every.num_rows == by_file.num_rows
    assert both.final.num_rows == pc.sum(by_file["is_final"]).as_py()
    monkeypatch.setattr(load, "FILES_PER_SCAN", 2)  # (a batch of no lifecycle shard: nulls)
    batched = load.read_rows(two, final=None, every=every)
    assert _same(batched.final, both.final) and _same(batched.every, both.every)


def test_a_stale_summary_is_recomputed(two: Path) -> None:
    """Prevents a report from a summary that predates new shards."""
    aggregate(two)
    _run(two, "keep_all", 3, 300, [])
    r = _row(read_summary(two), "keep_all", "{}", "final_size")
    assert r["n"] == 4


# ------------------------------------------------------------------------ report


def _pngs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "plots").glob("*.png"))}


def test_report_and_plots_are_byte_identical_across_runs(reported: Path, tmp_path: Path) -> None:
    """Prevents dates, paths, versions, unseeded intervals or PNG metadata from changing
    RESULTS.md or the plots when nothing else changed (here: another OUT folder, with the
    summary recomputed)."""
    again = tmp_path / "again"
    shutil.copytree(reported, again)
    (again / SUMMARY).unlink()
    for png in (again / "plots").glob("*.png"):
        png.unlink()
    assert write_report(again) == again / "RESULTS.md"
    assert (again / "RESULTS.md").read_bytes() == (reported / "RESULTS.md").read_bytes()
    pngs = _pngs(again)
    assert pngs == _pngs(reported)
    assert set(pngs) == {
        f"{kind}-contradiction-h{h}-k5.png"
        for kind in ("bloat", "frontier", "budget", "false_forget") for h in (150, 300)
    } | {"scaling-contradiction-k5.png"}
    assert all(b.startswith(b"\x89PNG\r\n\x1a\n") for b in pngs.values())
    assert b"Software" not in b"".join(pngs.values())


def test_plots_drawn_by_a_helper_process_are_the_same_bytes(reported: Path,
                                                            tmp_path: Path) -> None:
    """Prevents the figures a spawned helper draws (``runner.report.pool``, what the CLI
    does on several cores) from differing from those drawn in one process: a style, a
    note or a file lost or changed on the way."""
    again = tmp_path / "again"
    shutil.copytree(reported, again)
    for png in (again / "plots").glob("*.png"):
        png.unlink()
    write_report(again, helpers=1)
    assert _pngs(again) == _pngs(reported)
    assert (again / "RESULTS.md").read_bytes() == (reported / "RESULTS.md").read_bytes()


def test_a_helper_that_dies_leaves_its_figures_to_the_report() -> None:
    """Prevents a report that hangs or fails when a helper process cannot start (a
    script that does not guard its main, a broken import there): its tasks are done in
    the report's own process."""
    from runner.report import pool

    tasks = list(range(20))
    assert pool.share(tasks, lambda x: -x, abs, os._exit, (3,), 1) == [-x for x in tasks]


def test_helpers_start_only_for_enough_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a small report (a test's, a user's one workload) from paying a helper
    process's start-up for a few figures, and a large one from drawing on one core."""
    from runner.report import pool

    monkeypatch.setattr(pool, "cores", lambda: 2)
    assert [pool.helpers_for(n) for n in (1, 9, 11, 12, 28)] == [0, 0, 0, 1, 1]
    monkeypatch.setattr(pool, "cores", lambda: 8)
    assert [pool.helpers_for(n) for n in (11, 12, 28, 100)] == [0, 1, 3, 7]
    monkeypatch.setattr(pool, "cores", lambda: 1)
    assert pool.helpers_for(28) == 0


def test_report_states_n_method_grid_and_directions(reported: Path) -> None:
    """Prevents a report that omits what a reader needs to judge it."""
    text = (reported / "RESULTS.md").read_text()
    assert "n = 3 seeds per cell" in text
    assert CI_METHOD in text
    assert "the t-test's, from the noncentral t): at n = 3 the MDD is" in text
    for name in ("contradiction", "keep_all", "ebbinghaus tau=60", "| ebbinghaus |"):
        assert name in text
    assert "contradiction_rate ↓" in text and "recall_current_at_k ↑" in text
    assert "## contradiction, horizon 150 turns, k = 5" in text
    assert "## contradiction, horizon 300 turns, k = 5" in text
    assert "wall_s |" not in text and "wall_s ↓" not in text
    assert "Seeds 0–2;" in text


def test_report_numbers_equal_the_summary(reported: Path) -> None:
    """Prevents typed or stale numbers: a main-table cell parses back to the summary's mean and
    interval."""
    text = (reported / "RESULTS.md").read_text()
    summary = pq.read_table(reported / SUMMARY)
    section = text.split("## contradiction, horizon 300 turns, k = 5")[1]
    header = next(line for line in section.splitlines() if line.startswith("| policy | n |"))
    col = [c.strip() for c in header.strip("|").split("|")].index("contradiction_rate ↓")
    row = next(line for line in section.splitlines() if line.startswith("| ebbinghaus tau=60 |"))
    cell = [c.strip() for c in row.strip("|").split("|")][col]
    m = re.fullmatch(r"(-?\d+\.\d+) \[(-?\d+\.\d+), (-?\d+\.\d+)\]( †)?", cell)
    assert m, cell
    r = next(x for x in summary.to_pylist() if x["policy"] == "ebbinghaus" and x["params"] == TAU
             and x["horizon"] == 300 and x["metric"] == "contradiction_rate")
    assert float(m.group(1)) == round(r["mean"], 3)
    assert (float(m.group(2)), float(m.group(3))) == (round(r["ci_low"], 3),
                                                      round(r["ci_high"], 3))


def test_report_elsewhere_links_plots_relative_to_its_folder(grid: Path, tmp_path: Path) -> None:
    """Prevents broken image links when --output puts RESULTS.md outside OUT."""
    output = tmp_path / "docs" / "R.md"
    (grid / "plots").mkdir()
    (grid / "plots" / "old.png").write_bytes(b"stale")
    text = write_report(grid, output).read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == 10  # the headline figure, 4 kinds × 2 horizons, scaling
    for link in links:
        assert not os.path.isabs(link) and link.startswith("../grid/plots/")
        assert (output.parent / link).is_file()
    assert not (grid / "plots" / "old.png").exists()  # plots/ holds only this report's figures


def test_one_horizon_skips_the_scaling_plot(two: Path) -> None:
    """Prevents a crash or an empty figure when there is nothing to scale over."""
    text = write_report(two).read_text()
    assert "scaling plot for contradiction (k=5) skipped: it ran at one horizon (300)" in text
    assert not list((two / "plots").glob("scaling-*.png"))


def test_seed_ranges() -> None:
    """Prevents a misleading seed list in the grid."""
    assert seed_ranges([4, 0, 1, 2, 7, 9, 10]) == "0–2, 4, 7, 9–10"
    assert seed_ranges([5]) == "5"


def test_include_appends_another_sweep_as_one_section(sweeps: dict[str, Path],
                                                      tmp_path: Path) -> None:
    """Prevents an included sweep (the incumbents') whose section is not that sweep's own
    report, whose headings collide with the main report's, whose plots are unlinked, or
    whose tables per setting swell the combined report: they stay in its own report, and
    each setting says where, with a link. (The seeds' claims and the reproduction table
    come once, at the top, tested on the first sweep that ran their cells: compared from
    the first setting's table on.)"""
    main, other = tmp_path / "main", tmp_path / "extra"
    shutil.copytree(sweeps["two"], main)
    shutil.copytree(sweeps["grid"], other)
    output = tmp_path / "R.md"
    text = write_report(main, output, include=[other]).read_text()
    own = write_report(other, tmp_path / "own.md").read_text()
    head, sep, section = text.partition("## Included sweep: `extra/`")
    alone = write_report(main, tmp_path / "alone.md").read_text()

    def tables(text: str, level: str) -> str:
        return text[text.index(f"\n{level} contradiction, "):]

    assert sep and tables(head, "##") == tables(alone, "##") + "\n"
    assert section.count("\n# ") == 0 and "\n### What ran\n" in section
    settings = re.findall(r"^## (.+, horizon .+)$", own, re.M)
    assert settings and all(f"\n### {s}\n" in section for s in settings)
    pointer = ("in [`extra/RESULTS.md`](extra/RESULTS.md), the sweep's own report "
               "(`fbench report` on its folder)")
    assert section.count(pointer) == len(settings)
    assert "| policy | n |" in own and "| policy | n |" not in section
    assert "#### At equal memory" not in section and "### Primary metrics" not in section
    assert "As in the report this sweep is included in" in section
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", section):
        assert link.startswith("extra/plots/") and (tmp_path / link).is_file()
