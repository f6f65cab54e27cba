"""``fbench board``: a sweep's memories placed among published results, paired by seed,
ranked by regret against the oracle; mismatches refused in one line; published jobs
rerun here before anything is paired."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from runner.analysis.board import YOURS
from runner.cli import app
from runner.results.layout import FINALS

HORIZON = "150"


def sweep(out: Path, policies: str, seeds: int, *extra: str) -> None:
    res = CliRunner().invoke(app, [
        "sweep", "--workloads", "contradiction", "--policies", policies, "--horizons",
        HORIZON, "--seeds", str(seeds), "--executor", "inline", "--out", str(out),
        "--no-report", "--quiet", *extra])
    assert res.exit_code == 0, res.output


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A published set: keep_all, ebbinghaus and the oracle (unbounded and at 15
    entries) on contradiction at horizon 150, seeds 0-5, as `make results` publishes."""
    root = tmp_path_factory.mktemp("published")
    folder = root / "reference"
    sweep(folder, "keep_all,ebbinghaus,oracle", 6, "--param", "oracle.capacity=0,15")
    res = CliRunner().invoke(app, ["aggregate", str(folder), "--finals"])
    assert res.exit_code == 0, res.output
    return root


def board(out: Path, published: Path, *extra: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["board", str(out), "--published", str(published),
                                   *extra])
    return res.exit_code, res.output


def test_a_memory_is_placed_ranked_and_paired(published: Path, tmp_path: Path) -> None:
    """Prevents a board that loses a published cell, pairs across seeds or ranks a memory
    of three seeds on top by default: yours sits among every published cell of the
    setting, its rank range open, and the same memory run here pairs with its published
    self at Δ exactly 0."""
    mine = tmp_path / "mine"
    sweep(mine, "ttl,keep_all", 3)
    code, output = board(mine, published, "--verify", "1")
    assert code == 0, output
    table = pq.read_table(mine / "board.parquet").to_pylist()
    cells = {(r["source"], r["policy"], r["params"]) for r in table}
    assert cells == {("reference", "keep_all", "{}"), ("reference", "ebbinghaus", "{}"),
                     (YOURS, "ttl", "{}"), (YOURS, "keep_all", "{}")}
    for r in table:
        assert 1 <= r["rank"] <= r["rank_worst"] <= 4
        assert r["regret_low"] <= r["regret"] <= r["regret_high"]
    ttl = next(r for r in table if r["policy"] == "ttl")
    assert (ttl["n"], ttl["rank"], ttl["rank_worst"]) == (3, 1, 4)
    text = (mine / "board.md").read_text()
    assert "**ttl**" in text and "keep_all | reference | 3 | 0.000 [" in text
    assert (mine / "board.csv").is_file()


def test_a_setting_nothing_published_matches_is_refused_in_one_line(
        published: Path, tmp_path: Path) -> None:
    """Prevents pairing across horizons, or a traceback: the cell is refused with what
    differs and how to rerun, and with nothing placed the exit code is 2."""
    mine = tmp_path / "mine"
    res = CliRunner().invoke(app, [
        "sweep", "--workloads", "contradiction", "--policies", "ttl", "--horizons", "100",
        "--seeds", "2", "--executor", "inline", "--out", str(mine), "--no-report", "--quiet"])
    assert res.exit_code == 0
    code, output = board(mine, published)
    assert code == 2 and "Traceback" not in output
    assert "horizon 100 vs published 150; run with --horizons 150" in output
    assert not (mine / "board.md").exists()


def test_seeds_the_published_results_lack_are_refused(published: Path, tmp_path: Path
                                                       ) -> None:
    """Prevents a pairing over seeds that were never published."""
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 8)
    code, output = board(mine, published)
    assert code == 2
    assert "seeds 6–7 are not published (published: 0–5); run with --seed-list " \
           "0,1,2,3,4,5" in output


def test_a_published_set_from_other_floats_is_caught(published: Path, tmp_path: Path
                                                      ) -> None:
    """Prevents pairing with published results a rerun here does not reproduce: one
    published number moved in its last bits, the board refuses, naming the job."""
    moved = tmp_path / "moved"
    shutil.copytree(published, moved)
    path = moved / "reference" / FINALS
    finals = pq.read_table(path)
    is_oracle = pc.and_(pc.equal(finals["policy"], "oracle"), pc.equal(finals["seed"], 0))
    recall = pc.if_else(pc.and_(is_oracle, pc.equal(finals["params"], "{}")),
                        pc.add(finals["recall_current_at_k"], 1e-12),
                        finals["recall_current_at_k"])
    finals = finals.set_column(finals.schema.get_field_index("recall_current_at_k"),
                               "recall_current_at_k", recall)
    pq.write_table(finals, path)
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 2)
    code, output = board(mine, moved, "--verify", "0")
    assert code == 2
    assert "differs here: recall_current_at_k" in output and "oracle {} on contradiction " \
        "seed 0" in output


def test_no_published_results_is_one_line(tmp_path: Path) -> None:
    """Prevents a traceback when --published names a folder with no published sweep."""
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 1)
    code, output = board(mine, tmp_path / "mine")
    assert code == 2 and "no published results in" in output


def test_the_reports_board_ranks_each_memory_once(published: Path, tmp_path: Path) -> None:
    """Prevents the board that leads RESULTS.md listing a memory twice when two included
    sweeps ran the same jobs, or leaving out the reference policies: every memory at its
    defaults once, from the first sweep that ran it, and a parameter grid's other
    points left to the sweeps' own tables."""
    from runner.report.board import lead_cells, lead_section

    finals = pq.read_table(published / "reference" / FINALS)
    more = tmp_path / "more"
    sweep(more, "ebbinghaus", 6, "--param", "ebbinghaus.tau=60")
    CliRunner().invoke(app, ["aggregate", str(more), "--finals"])
    grid = pq.read_table(more / FINALS)
    rows = lead_cells([("first", finals, {}), ("second", finals, {}), ("grid", grid, {})])
    assert set(rows.column("source").to_pylist()) == {"first"}
    blocks = lead_section([("first", finals, {}), ("grid", grid, {})])
    table = next(b for b in blocks if hasattr(b, "rows"))
    assert sorted(r[1] for r in table.rows) == ["ebbinghaus", "keep_all"]
