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


@pytest.mark.example
def test_a_plugin_swept_alone_pairs_exactly_as_in_a_joint_sweep(published: Path,
                                                                tmp_path: Path) -> None:
    """Prevents the board's pairing from depending on what was swept beside a memory, or
    on the published copy: the example plugin's memory swept alone and placed on the
    board gets, against every published cell, the same Δ, interval and p, bit for bit, as
    when swept jointly with those memories, and its Δ against keep_all is the one the
    joint sweep's own rows give (oracle minus memory current recall, paired by seed)."""
    from runner.analysis import stats
    from runner.analysis.board import build
    from runner.results.finals import published_rows

    alone, joint = tmp_path / "alone", tmp_path / "joint"
    sweep(alone, "recency", 6)
    sweep(joint, "recency,keep_all,ebbinghaus,oracle", 6, "--param", "oracle.capacity=0,15")
    rows = published_rows(published)

    def versus(folder: Path) -> dict[tuple[str, str], tuple[float, ...]]:
        CliRunner().invoke(app, ["aggregate", str(folder), "--finals"])
        placed = build(rows, pq.read_table(folder / FINALS))
        mine = next(r for r in placed.rows if r.cell.source == YOURS
                    and r.cell.policy == "recency")
        return {(v.theirs.policy, v.theirs.params): (v.n, v.delta, v.ci_low, v.ci_high, v.p,
                                                     v.p_holm) for v in mine.versus}

    by_alone, by_joint = versus(alone), versus(joint)
    assert by_alone == by_joint and len(by_alone) == 2
    finals = pq.read_table(joint / FINALS).to_pylist()

    def recall(policy: str, params: str = "{}") -> list[float]:
        return [r["recall_current_at_k"] for r in sorted(finals, key=lambda r: r["seed"])
                if r["policy"] == policy and r["params"] == params]

    oracle = recall("oracle")  # unbounded: capacity 0 is its default
    assert len(oracle) == 6
    regret = {p: [o - x for o, x in zip(oracle, recall(p), strict=True)]
              for p in ("recency", "keep_all")}
    expected = stats.paired(regret["recency"], regret["keep_all"], "lower", "", (-1.0, 1.0))
    n, delta, low, high, p, _ = by_alone[("keep_all", "{}")]
    assert (n, delta, low, high, p) == (6, expected.mean, expected.ci_low, expected.ci_high,
                                        expected.p)


def test_html_puts_the_placed_board_at_the_head_of_the_report(published: Path,
                                                              tmp_path: Path) -> None:
    """Prevents --html writing a report that leads with the sweep's own board (or none)
    instead of the one its memories were placed on: RESULTS.md and RESULTS.html both open
    with the placed board, yours in bold among the published cells."""
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 3)
    code, output = board(mine, published, "--verify", "0", "--html")
    assert code == 0, output
    text = (mine / "RESULTS.md").read_text()
    head = text[:text.index("## What ran")]
    assert "## The board" in head and "| **ttl** | yours | hashing | 3 |" in head
    assert "ebbinghaus | reference" in head
    page = (mine / "RESULTS.html").read_text()
    assert "The board" in page and "<strong>ttl</strong>" in page


def test_a_job_two_published_sweeps_hold_is_one_cell(published: Path, tmp_path: Path
                                                     ) -> None:
    """Prevents a board listing keep_all once per published sweep that ran it: the same
    jobs published twice are one cell, from the first sweep in name order."""
    twice = tmp_path / "twice"
    shutil.copytree(published, twice)
    shutil.copytree(twice / "reference", twice / "another")
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 3)
    code, output = board(mine, twice, "--verify", "0")
    assert code == 0, output
    cells = [(r["source"], r["policy"]) for r in pq.read_table(mine / "board.parquet").to_pylist()]
    assert sorted(cells) == [("another", "ebbinghaus"), ("another", "keep_all"), (YOURS, "ttl")]


def test_a_sweep_published_in_part_is_left_out(published: Path, tmp_path: Path) -> None:
    """Prevents pairing with a published sweep that is only partly run (a long sweep is
    published part by part): it is left out, with a line saying how much of it is there."""
    import json

    part = tmp_path / "part"
    shutil.copytree(published, part)
    spec = json.loads((part / "reference" / "sweep.json").read_text())
    spec["jobs"] = spec["jobs"] * 2
    (part / "reference" / "sweep.json").write_text(json.dumps(spec))
    shutil.copytree(published / "reference", part / "whole")
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 3)
    code, output = board(mine, part, "--verify", "0")
    assert code == 0, output
    assert "not used: reference: 24 of its 48 jobs are published; it joins the board once " \
           "whole" in " ".join(output.split())
    sources = {r["source"] for r in pq.read_table(mine / "board.parquet").to_pylist()}
    assert sources == {"whole", YOURS}


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


def _altered(published: Path, tmp_path: Path, column: str, value: str) -> Path:
    """A copy of the published set with every row's ``column`` set to ``value``."""
    import pyarrow as pa

    moved = tmp_path / "altered"
    shutil.copytree(published, moved)
    path = moved / "reference" / FINALS
    finals = pq.read_table(path)
    kind = finals.schema.field(column).type
    finals = finals.set_column(finals.schema.get_field_index(column), column,
                               pa.array([value] * finals.num_rows, kind))
    pq.write_table(finals, path)
    return moved


@pytest.mark.parametrize("case", ["k", "workload version", "library version"])
def test_each_mismatch_is_one_line_exit_2_and_nothing_written(
        published: Path, tmp_path: Path, case: str) -> None:
    """Prevents pairing across k, across versions of a workload, or with a published
    library at another version: each is refused in its one line saying what differs,
    exit 2, and no board file is written."""
    mine = tmp_path / "mine"
    where = published
    if case == "k":
        sweep(mine, "ttl", 2, "--k", "3")
        expected = "k 3 vs published 5; run with --k 5"
    elif case == "workload version":
        sweep(mine, "ttl", 2)
        where = _altered(published, tmp_path, "workload_version", "0")
        expected = "version 2 vs published 0; the published results are of another version"
    else:
        sweep(mine, "keep_all", 2)
        where = _altered(published, tmp_path, "versions", '{"numpy": "0.1"}')
        expected = "numpy " + __import__("numpy").__version__ + " vs published 0.1"
    code, output = board(mine, where)
    assert code == 2 and "Traceback" not in output
    assert expected in output, output
    assert not [p.name for p in mine.iterdir() if p.name.startswith("board")]


def test_seeds_the_published_results_lack_are_refused(published: Path, tmp_path: Path
                                                       ) -> None:
    """Prevents a pairing over seeds that were never published."""
    mine = tmp_path / "mine"
    sweep(mine, "ttl", 8)
    code, output = board(mine, published)
    assert code == 2
    assert "seeds 6–7 are not published (published: 0–5); run with --seed-list " \
           "0,1,2,3,4,5" in output
    assert not (mine / "board.md").exists()


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
