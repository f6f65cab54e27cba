"""Pairing on what ran (the embedder first of all), the declared primary family, its
multiplicity control and verdicts, and the seeds' claims tested on shards."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runner.analysis import stats
from runner.report import claims
from runner.report.evidence import Evidence
from runner.report.reproduction import PUBLISHED
from runner.results.aggregate import aggregate, read_summary
from runner.results.comparisons import COMPARISONS, adjust, family, verdict
from runner.results.pairing import Baselines, is_default_variant
from runner.results.shard import compared_metrics
from runner.spec.params import OWN

ROOT = Path(__file__).resolve().parent.parent


def fbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join([str(cwd), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "runner.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def test_baseline_rule_never_crosses_embedders() -> None:
    """Prevents the pairing confound the plugins issue found (mem0 and lethe_agent at MiniLM
    paired with the hashing keep_all): a cell's baseline has its embedder or there is none,
    with a note; a memory with its own retrieval pairs with the default baseline."""
    base_h = ("w", 10, 5, "keep_all", "{}")
    base_m = ("w", 10, 5, "keep_all", '{"store.embedder": "minilm"}')
    mem0 = ("w", 10, 5, "mem0", "{}")
    agent = ("w", 10, 5, "lethe_agent", '{"policy.embedder": "minilm"}')
    own = ("w", 10, 5, "mine", "{}")
    both = Baselines("keep_all", {base_h: "hashing", base_m: "minilm", mem0: "minilm",
                                  agent: "minilm", own: OWN})
    assert both.of(mem0) == (base_m, None)
    assert both.of(agent) == (base_m, None)
    assert both.of(own) == (base_h, None)
    assert both.of(base_h) == (None, None)
    assert is_default_variant('{"policy.embedder": "minilm"}')  # the embedder is no identity
    assert not is_default_variant('{"policy.tau": 30}')
    hashing_only = Baselines("keep_all", {base_h: "hashing", mem0: "minilm"})
    cell, note = hashing_only.of(mem0)
    assert cell is None and note is not None and "not paired across embedders" in note


@pytest.fixture(scope="module")
def minimem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plugin memory declaring that it ranks with MiniLM, beside a keep_all at hashing
    only (sweep ``hash/``) and at both embedders (sweep ``both/``)."""
    folder = tmp_path_factory.mktemp("minimem")
    (folder / "minimem.py").write_text(
        "from tests.broken_adapters import Good\n\n"
        "class MiniMem(Good):\n    embedder = 'minilm'\n")
    grid = ["sweep", "--policies", "minimem:MiniMem,keep_all", "--workloads", "contradiction",
            "--seeds", "2", "--horizons", "120", "--executor", "inline", "--no-report"]
    for out, extra in (("hash", []), ("both", ["--param", "store.embedder=hashing,minilm"])):
        res = fbench(*grid, "--out", out, *extra, cwd=folder)
        assert res.returncode == 0, res.stderr
    return folder


@pytest.mark.slow  # (two sweeps encoding with MiniLM)
@pytest.mark.minilm
def test_a_memory_is_never_paired_with_another_embedders_baseline(minimem: Path) -> None:
    """Prevents pairing across embedders end to end: the shards record the embedder the
    memory declared; with keep_all at hashing only the MiniLM memory gets no Δ and a note;
    with keep_all at MiniLM too, it is paired with that cell and never the hashing one."""
    for out in ("hash", "both"):
        rows = [r for r in aggregate(minimem / out).to_pylist() if r["policy"] != "keep_all"]
        assert rows and {r["embedder"] for r in rows} == {"minilm"}
        if out == "hash":
            assert all(r["baseline"] is None and r["delta_mean"] is None for r in rows)
            assert "not paired across embedders" in rows[0]["baseline_note"]
        else:
            assert {r["baseline_params"] for r in rows} == {'{"store.embedder": "minilm"}'}
            assert all(r["n_pairs"] == 2 for r in rows if r["metric"] == "contradiction_rate")


def _row(**kw: Any) -> dict[str, Any]:
    base = {"identical": False, "bounded": False, "direction": "higher", "delta": 0.05,
            "ci_low": 0.02, "ci_high": 0.08, "margin": 0.01}
    return base | kw


def test_verdicts_follow_margin_adjusted_p_and_construction() -> None:
    """Prevents a verdict that ignores the practical margin, the multiplicity adjustment or
    a comparison fixed by construction, and equivalence silently winning over
    significance: a significant difference inside the margin is reported as both."""
    assert verdict(_row(), 0.01) == "better"
    assert verdict(_row(direction="lower"), 0.01) == "worse"
    assert verdict(_row(), 0.2) == "inconclusive"  # CI excludes 0, adjusted p does not
    assert verdict(_row(delta=0.002, ci_low=-0.004, ci_high=0.008), 0.01) == "equivalent"
    assert verdict(_row(delta=0.002, ci_low=0.001, ci_high=0.003), 0.001) == \
        "better, within margin"
    assert verdict(_row(delta=-0.002, ci_low=-0.003, ci_high=-0.001), 0.001) == \
        "worse, within margin"
    assert verdict(_row(delta=0.002, ci_low=0.001, ci_high=0.003), 0.2) == "equivalent"
    assert verdict(_row(delta=0.0, ci_low=0.0, ci_high=0.0, identical=True), 1.0) == "identical"
    assert verdict(_row(direction="lower", bounded=True), 0.01) == "worse"
    assert verdict(_row(direction="lower", bounded=True), 0.2) == "inconclusive"
    assert verdict(_row(direction="none"), 0.0) == "—"
    assert verdict(_row(ci_low=math.nan, ci_high=math.nan), 0.0) == "—"


def test_family_leaves_out_what_cannot_be_tested() -> None:
    """Prevents an undefined metric (no interval: n = 0), a descriptive metric or a
    bit-identical pair from counting in a family, and a bounded comparison from being
    left out of it."""
    assert family(_row(), True) == "primary" and family(_row(), False) == "exploratory"
    assert family(_row(bounded=True), True) == "primary"
    assert family(_row(ci_low=math.nan, ci_high=math.nan), True) == "not a test"
    assert family(_row(ci_low=None, ci_high=None), True) == "not a test"
    assert family(_row(direction="none"), True) == "not a test"
    assert family(_row(identical=True), True) == "not a test"


def _cmp(setting: str, family: str, p: float, digest: str = "", policy: str = "a",
         metric: str = "recall_at_k") -> dict[str, Any]:
    return _row(workload=setting, horizon=1, k=5, policy=policy, params="{}", other="b",
                other_params="{}", embedder="hashing", metric=metric, family=family,
                source="baseline", n=10, mean=0.5, other_mean=0.4, mdd=0.01, p=p,
                digest=digest or f"{setting}{family}{p}{policy}{metric}")


def test_holm_within_each_setting_and_bh_over_the_exploratory() -> None:
    """Prevents an uncorrected family: primary p-values are Holm-adjusted per setting
    (two settings: two families), exploratory ones BH-adjusted together, and a comparison
    that is not a test gets neither."""
    rows = [_cmp("s1", "primary", 0.01), _cmp("s1", "primary", 0.04),
            _cmp("s2", "primary", 0.04), _cmp("s1", "exploratory", 0.01),
            _cmp("s2", "exploratory", 0.03), _cmp("s1", "not a test", 0.5)]
    t = adjust(rows).to_pylist()
    assert [r["p_holm"] for r in t[:3]] == pytest.approx([0.02, 0.04, 0.04])
    assert [r["q_bh"] for r in t[3:5]] == pytest.approx(stats.bh([0.01, 0.03]).tolist())
    assert math.isnan(t[5]["p_holm"]) and math.isnan(t[5]["q_bh"])
    assert [r["verdict"] for r in t[:3]] == ["better", "better", "better"]


def test_a_test_with_the_same_deltas_counts_once() -> None:
    """Prevents a family that counts copies (window bit-identical to last_write_wins;
    recall_at_5 equal to recall_at_k at k = 5): tests with the same per-seed deltas in a
    family are adjusted as one, and the copy takes the first's adjusted p and verdict;
    the same deltas in another setting's family still count there."""
    rows = [_cmp("s1", "primary", 0.01, "d1"), _cmp("s1", "primary", 0.01, "d1", "window"),
            _cmp("s1", "primary", 0.04, "d2", "c"), _cmp("s2", "primary", 0.01, "d1"),
            _cmp("s1", "exploratory", 0.01, "d1", metric="recall_at_5"),
            _cmp("s1", "exploratory", 0.01, "d1", "window", "recall_at_5")]
    t = adjust(rows).to_pylist()
    assert [r["copy_of"] is None for r in t] == [True, False, True, True, True, False]
    assert json.loads(t[1]["copy_of"])[4] == "a"
    assert [r["p_holm"] for r in t[:4]] == pytest.approx([0.02, 0.02, 0.04, 0.01])
    assert t[5]["q_bh"] == t[4]["q_bh"] == pytest.approx(0.01)
    assert t[1]["verdict"] == t[0]["verdict"] == "better"


def test_declared_comparisons_join_the_primary_family(tmp_path: Path) -> None:
    """Prevents a sweep config's `compare` pairs from being ignored or mis-matched: each
    pair becomes primary comparisons on the declared metrics (Holm-adjusted), in every
    setting where both ran; anything else on those cells is exploratory."""
    (tmp_path / "s.toml").write_text(
        'seeds = 3\nworkloads = ["contradiction"]\nhorizons = ["150"]\n'
        'policies = ["keep_all", "last_write_wins", "ebbinghaus"]\n'
        'compare = [["ebbinghaus", "last_write_wins"]]\n'
        'primary_metrics = ["contradiction_rate", "final_size"]\nout = "o"\n')
    res = fbench("sweep", "--config", "s.toml", "--executor", "inline", "--no-report",
                 cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    aggregate(tmp_path / "o")
    rows = pq.read_table(tmp_path / "o" / COMPARISONS).to_pylist()
    declared = [r for r in rows if r["source"] == "declared"]
    assert {(r["policy"], r["other"]) for r in declared} == {("ebbinghaus", "last_write_wins")}
    primary = {(r["policy"], r["other"], r["metric"]) for r in rows if r["family"] == "primary"}
    assert ("ebbinghaus", "last_write_wins", "final_size") in primary
    assert ("last_write_wins", "keep_all", "final_size") in primary
    assert all(r["family"] != "primary" for r in rows
               if r["metric"] not in ("contradiction_rate", "final_size"))
    assert all(not math.isnan(r["p_holm"]) for r in rows if r["family"] == "primary")
    # a changed declaration makes the summary stale: read back, the family is the new one
    doc = json.loads((tmp_path / "o" / "sweep.json").read_text())
    doc["spec"]["compare"] = [["last_write_wins", "ebbinghaus"]]
    (tmp_path / "o" / "sweep.json").write_text(json.dumps(doc))
    read_summary(tmp_path / "o")
    rows = pq.read_table(tmp_path / "o" / COMPARISONS).to_pylist()
    assert {(r["policy"], r["other"]) for r in rows if r["source"] == "declared"} == {
        ("last_write_wins", "ebbinghaus")}
    bad = tmp_path / "bad.toml"
    bad.write_text('seeds = 1\npolicies = ["keep_all"]\ncompare = [["fifo", "keep_all"]]\n')
    res = fbench("sweep", "--config", "bad.toml", "--dry-run", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "compare names 'fifo'" in res.stderr


def _evidence(tmp_path: Path, cells: dict[tuple[str, str], dict[str, list[float]]]
              ) -> Evidence:
    """Evidence from synthetic final rows: (workload, label params JSON) -> metric values."""
    cols: dict[str, list[Any]] = {c: [] for c in ("job_id", "workload", "horizon", "k",
                                                  "policy", "params", "seed", "params_full",
                                                  "embedder")}
    metrics = sorted({m for v in cells.values() for m in v})
    for m in metrics:
        cols[m] = []
    for (w, label), values in cells.items():
        policy, *rest = label.split()
        params = {f"policy.{kv.split('=')[0]}": float(kv.split("=")[1]) for kv in rest}
        n = len(next(iter(values.values())))
        for s in range(n):
            cols["job_id"].append(f"{w} {label} {s}")
            cols["embedder"].append("hashing")
            cols["workload"].append(w)
            cols["horizon"].append(100)
            cols["k"].append(5)
            cols["policy"].append(policy)
            cols["params"].append(json.dumps(params, sort_keys=True))
            cols["seed"].append(s)
            cols["params_full"].append(json.dumps({"policy.tau": 150.0} | params))
            for m in metrics:
                cols[m].append(values.get(m, [math.nan] * n)[s])
    table = pa.table(cols)
    for m in compared_metrics():  # (every other metric: no value, as a shard lacking it)
        if m.name not in cols:
            table = table.append_column(m.name, pa.nulls(table.num_rows, pa.float64()))
    return Evidence(tmp_path, table)


def test_claim_verdicts_follow_the_shards(tmp_path: Path) -> None:
    """Prevents a claim whose verdict is typed in: the same declared test is held, not
    held or inconclusive depending on the per-seed numbers it reads."""
    rng = np.random.default_rng(0)
    n = 20

    def near(mu: float, sd: float = 0.002) -> list[float]:
        return (mu + rng.normal(0, sd, n)).tolist()

    ev = _evidence(tmp_path, {
        ("w", "a"): {"contradiction_rate": near(0.30), "final_size": near(50, 1)},
        ("w", "b"): {"contradiction_rate": near(0.301), "final_size": near(50.2, 1)},
        ("w", "c"): {"contradiction_rate": near(0.70), "final_size": near(58, 10)},
    })
    level = 0.95
    assert claims.Equivalent("w", "a", "b", "final_size").evaluate(
        ev, level).verdict == claims.HELD
    assert claims.Equivalent("w", "a", "c", "contradiction_rate").evaluate(
        ev, level).verdict == claims.NOT_HELD
    # a rate's Δ of 0.001 over 20 seeds: the betting interval cannot tell it from ± 0.01
    assert claims.Equivalent("w", "a", "b", "contradiction_rate").evaluate(
        ev, level).verdict == claims.INCONCLUSIVE
    assert claims.Ratio("w", "a", "b", "final_size", 1.2, True).evaluate(
        ev, level).verdict == claims.HELD
    assert claims.Ratio("w", "c", "b", "final_size", 1.15, True).evaluate(
        ev, level).verdict == claims.INCONCLUSIVE
    assert claims.Extreme("w", "c", ("a", "b"), "contradiction_rate", True).evaluate(
        ev, level).verdict == claims.HELD
    assert claims.Floor("w", ("a", "b"), "contradiction_rate").evaluate(
        ev, level).verdict == claims.HELD
    assert claims.Equivalent("w", "a", "nosuch", "final_size").evaluate(
        ev, level).verdict == claims.NOT_RUN


def test_monotone_claim_reads_the_grid_with_its_default(tmp_path: Path) -> None:
    """Prevents a monotonicity claim that skips the default cell or misses a reversal."""
    x = "contradiction_rate"
    seeds = range(40)  # a rate's steps, read with the betting interval: 40 seeds tell them
    rises = {f"p tau={t}": {x: [t / 1100 + s * 1e-5 for s in seeds]}
             for t in (30, 60, 1000)} | {"p": {x: [0.15 + s * 1e-5 for s in seeds]}}
    ev = _evidence(tmp_path, {("w", k): v for k, v in rises.items()})
    test = claims.Monotone("w", "p", "tau", (x,))
    out = test.evaluate(ev, 0.95)
    assert out.verdict == claims.HELD and "3 steps" in out.effect  # 30, 60, 150, 1000
    falls = dict(rises) | {"p tau=60": {x: [0.5 + s * 1e-5 for s in seeds]}}
    ev = _evidence(tmp_path, {("w", k): v for k, v in falls.items()})
    assert test.evaluate(ev, 0.95).verdict == claims.NOT_HELD


def test_published_numbers_are_the_reference_docs() -> None:
    """Prevents the reproduction table from quoting a number the seeds never published:
    each published value appears in docs/reference.md."""
    text = (ROOT / "docs" / "reference.md").read_text()
    for p in PUBLISHED:
        shown = f"{p.value:.3f}" if abs(p.value) < 10 else f"{p.value:.0f}"
        assert shown in text or f"{p.value:,.0f}" in text, p


def test_twins_are_bit_identical_cells_of_one_setting() -> None:
    """Prevents ``twins`` (the summary's ``same_as``) from matching cells that differ in
    any bit (a value, a nan's place, -0.0 against 0.0, a seed) or across settings, and
    from missing a real twin (nan where nan counts as equal)."""
    import numpy as np

    from runner.results.pairing import twins

    nan = float("nan")
    base = np.array([[0.5, nan], [0.25, 1.0]])
    blocks = {
        ("w", 1, 5, "a", "{}"): base,
        ("w", 1, 5, "b", "{}"): base.copy(),                       # a twin of a
        ("w", 1, 5, "c", "{}"): np.array([[0.5, nan], [0.25, 1.5]]),
        ("w", 1, 5, "d", "{}"): np.array([[0.5, 0.0], [0.25, 1.0]]),
        ("w", 1, 5, "f", "{}"): base.copy(),                       # ... on other seeds
        ("w", 2, 5, "g", "{}"): base.copy(),                       # another setting
    }
    values = np.vstack(list(blocks.values()))
    seeds = np.tile([0, 1], len(blocks))
    seeds[-4:-2] = [0, 2]  # f ran other seeds
    cells = {cell: np.arange(2 * i, 2 * i + 2) for i, cell in enumerate(blocks)}
    same = twins(cells, seeds, values)
    assert same == {("w", 1, 5, "b", "{}"): "a"}
    zero = {("w", 1, 5, "p", "{}"): np.array([[0.0]]), ("w", 1, 5, "q", "{}"): np.array([[-0.0]])}
    assert twins({c: np.array([i]) for i, c in enumerate(zero)}, np.array([0, 0]),
                 np.vstack(list(zero.values()))) == {}
