"""The scaling study: the log–log slope fit (exact on synthetic power laws, bootstrap over
seeds), the report's Scaling section and log–log plot from a tiny real sweep at three
horizons, and the committed sweep config ``sweeps/scaling.toml``."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from runner.analysis.scaling import SCALED, fit_loglog, fit_slope
from runner.job.execute import execute
from runner.report.markdown import write_report
from runner.results.load import shard_files
from runner.results.shard import shard_path, write_shard
from runner.spec.resolve import make_spec
from runner.sweep.config import build_spec, load_config
from runner.sweep.expand import SweepSpec, expand, policy_names
from runner.sweep.run import prepare, run_sweep

ROOT = Path(__file__).resolve().parent.parent
H = np.repeat([100.0, 300.0, 1000.0, 3000.0, 10000.0], 4)  # 5 horizons x 4 seeds
SEEDS = np.tile(np.arange(4), 5)


# ------------------------------------------------------------------------------ the fit


def test_a_power_law_gives_its_exponent_and_a_constant_gives_zero() -> None:
    """Prevents a wrong fit (log base, swapped axes, a fit on means of raw values): on
    exact power laws y = c·h^b the slope is b and the interval collapses onto it."""
    for c, b in ((3.0, 0.5), (2.0, 1.0), (0.7, 1.5)):
        fit = fit_slope(H, SEEDS, c * H**b, "power law")
        assert abs(fit.slope - b) < 1e-12, (b, fit)
        assert abs(fit.intercept - math.log(c)) < 1e-10
        assert abs(fit.ci_low - b) < 1e-12 and abs(fit.ci_high - b) < 1e-12
        assert (fit.n_jobs, fit.n_used, fit.n_horizons, fit.n_seeds) == (20, 20, 5, 4)
    const = fit_slope(H, SEEDS, np.full(len(H), 100.0), "bounded")
    assert (const.slope, const.ci_low, const.ci_high) == (0.0, 0.0, 0.0)  # exactly
    assert const.intercept == math.log(100.0)


def test_the_fit_is_ordinary_least_squares_on_logs() -> None:
    """Prevents the point estimate drifting from the documented estimator: it equals
    numpy's polyfit of log y on log h over every job's point."""
    rng = np.random.default_rng(7)
    y = 5.0 * H**0.8 * np.exp(rng.normal(0.0, 0.2, len(H)))
    b, a = np.polyfit(np.log(H), np.log(y), 1)
    fit = fit_slope(H, SEEDS, y, "noisy")
    assert fit.slope == pytest.approx(b, abs=1e-12)
    assert fit.intercept == pytest.approx(a, abs=1e-10)
    assert fit_loglog(H, y) == (fit.intercept, fit.slope)
    assert fit.ci_low < fit.slope < fit.ci_high


def test_the_bootstrap_resamples_seeds_not_jobs_and_is_seeded() -> None:
    """Prevents an interval that treats a seed's jobs as independent, or one that changes
    between runs: each seed on its own exact power law with the same exponent (its own
    constant) leaves no doubt about the slope when whole seeds are resampled, while
    resampling single jobs would tilt the line; the same key gives the same interval."""
    c = np.array([1.0, 4.0, 0.25, 9.0])[SEEDS]
    fit = fit_slope(H, SEEDS, c * H**0.5, "per-seed constants")
    assert abs(fit.ci_low - 0.5) < 1e-12 and abs(fit.ci_high - 0.5) < 1e-12
    h, seeds = np.repeat([100.0, 1000.0, 10000.0], 20), np.tile(np.arange(20), 3)
    y = h * np.exp(np.random.default_rng(3).normal(0.0, 0.3, len(h)))
    assert fit_slope(h, seeds, y, "k") == fit_slope(h, seeds, y, "k")
    assert fit_slope(h, seeds, y, "k").ci_low != fit_slope(h, seeds, y, "other").ci_low


def test_values_without_a_logarithm_are_left_out_and_counted() -> None:
    """Prevents log(0) = -inf (or nan) from poisoning a slope: points with y <= 0 or nan are
    dropped and counted, and with fewer than two horizons left the slope is undefined."""
    y = 2.0 * H**0.5
    y[0], y[5] = 0.0, math.nan
    fit = fit_slope(H, SEEDS, y, "holes")
    assert abs(fit.slope - 0.5) < 1e-12 and (fit.n_jobs, fit.n_used) == (20, 18)
    empty = np.where(H > 100, 0.0, 3.0)  # positive at the first horizon only
    none = fit_slope(H, SEEDS, empty, "emptied")
    assert math.isnan(none.slope) and math.isnan(none.ci_low) and not none.defined
    assert (none.n_used, none.n_horizons) == (4, 1)


def test_one_seed_gives_a_slope_without_an_interval() -> None:
    """Prevents a fake interval from a single run (as runner.analysis.stats: one seed says nothing
    about the spread)."""
    one = SEEDS == 0
    fit = fit_slope(H[one], SEEDS[one], 3.0 * H[one] ** 0.25, "one seed")
    assert abs(fit.slope - 0.25) < 1e-12
    assert math.isnan(fit.ci_low) and math.isnan(fit.ci_high)


# ------------------------------------------------------------------- a tiny real sweep

SPEC = SweepSpec(seeds=(0, 1), policies=("keep_all", "fifo"), workloads=("contradiction",),
                 horizons=("200", "400", "800"))


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny sweep (inline), plus one ebbinghaus job at one horizon only, reported."""
    out = tmp_path_factory.mktemp("scaling") / "out"
    run_sweep(prepare(SPEC, expand(SPEC), out, executor="inline"))
    spec = make_spec("contradiction", "ebbinghaus", 0, horizon=200)
    o = execute(spec.canonical_json(), "inline")
    assert o.table is not None, o.error
    write_shard(shard_path(out, spec), o.table)
    write_report(out)
    return out


def _final(out: Path) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for f in shard_files(out):
        last = pq.read_table(f).to_pylist()[-1]
        rows.setdefault(last["policy"], []).append(last)
    return rows


def _scaling_rows(text: str) -> dict[str, list[str]]:
    section = text.split("## Scaling", 1)[1].split("\n## ", 1)[0]
    return {cells[0]: cells for line in section.splitlines() if line.startswith("| ")
            and not line.startswith(("| policy", "| ---"))
            for cells in [[c.strip() for c in line.strip("|").split("|")]]}


def test_multi_horizon_report_has_the_scaling_table_and_log_log_plot(scaled: Path) -> None:
    """Prevents a scaling study whose report lacks the slopes, their explanation or the
    figure: the Scaling section names each policy run at several horizons with three slopes
    and intervals, says what a slope means, lists the one-horizon policy as not fitted, and
    links the three-panel scaling plot, which exists."""
    text = (scaled / "RESULTS.md").read_text()
    assert "## Scaling" in text and "### Scaling: contradiction, k = 5" in text
    assert "b = 1: y grows linearly with the horizon" in text and "b = 0: y is bounded" in text
    assert "Horizons 200, 400, 800 turns; seeds 0–1 (2)." in text
    assert ("| policy | jobs | horizons | final size at 200 → 800 | slope of size | "
            "slope of tokens | slope of seconds |") in text
    assert "Not fitted (ran at one horizon): ebbinghaus." in text
    assert "left out, except the Scaling section's per-job seconds." in text
    rows = _scaling_rows(text)
    assert set(rows) == {"keep_all", "fifo"}
    slope = re.compile(r"-?\d+\.\d\d \[-?\d+\.\d\d, -?\d+\.\d\d\]")
    for cells in rows.values():
        assert cells[1:3] == ["6", "3"]
        assert all(slope.fullmatch(c) for c in cells[4:]), cells
    assert rows["fifo"][4] == "0.00 [0.00, 0.00]"  # capacity 100: bounded from the start
    assert float(rows["keep_all"][4].split()[0]) > 0.5  # never forgets: grows with the horizon
    png = scaled / "plots" / "scaling-contradiction-k5.png"
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "](plots/scaling-contradiction-k5.png)" in text.split("## Scaling", 1)[1]
    assert text.count("scaling-contradiction-k5.png") == 1


def test_report_slopes_are_the_fit_of_the_shards(scaled: Path) -> None:
    """Prevents a table that does not show the fit of the jobs' final checkpoints (wrong
    column, checkpoint or rounding): each printed slope of size and tokens is
    ``fit_slope`` of the shards' final rows, read file by file."""
    rows = _scaling_rows((scaled / "RESULTS.md").read_text())
    for policy, jobs in _final(scaled).items():
        if policy == "ebbinghaus":
            continue
        for col, metric in enumerate(SCALED, start=4):
            if metric == "wall_s":
                continue
            fit = fit_slope([r["horizon"] for r in jobs], [r["seed"] for r in jobs],
                            [r[metric] for r in jobs], "unused")
            assert float(rows[policy][col].split()[0]) == round(fit.slope, 2), (policy, metric)


def test_one_horizon_report_has_no_scaling_section(scaled: Path, tmp_path: Path) -> None:
    """Prevents a Scaling section (or wall_s mention, or scaling figure) in the report of a
    one-horizon sweep such as the one behind RESULTS.md."""
    out = tmp_path / "one"
    (out / "shards").mkdir(parents=True)
    for f in shard_files(scaled):
        if pq.read_table(f, columns=["horizon"]).column("horizon")[0].as_py() == 400:
            target = out / f.relative_to(scaled)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
    text = write_report(out).read_text()
    assert "Scaling" not in text and "slope" not in text
    assert "are not deterministic: left out.\n" in text
    assert "scaling plot for contradiction (k=5) skipped: it ran at one horizon (400)" in text
    assert not list((out / "plots").glob("scaling-*.png"))


# ------------------------------------------------------------------ the committed config


def test_scaling_config_is_the_documented_study() -> None:
    """Prevents sweeps/scaling.toml drifting from the study it claims to be: horizons 1x to
    100x, at least 10 seeds, every reference policy, the two family bases, its own folder."""
    config = load_config(ROOT / "sweeps" / "scaling.toml")
    spec = build_spec(config, {})
    assert spec.horizons == ("1x", "3x", "10x", "30x", "100x")
    assert len(spec.seeds) >= 10
    assert spec.workloads == ("contradiction", "lifecycle")
    assert policy_names(spec) == policy_names(SweepSpec())
    assert config["out"] == "runs/scaling"
    jobs = expand(spec)
    assert len(jobs) == 2 * 5 * len(policy_names(spec)) * len(spec.seeds)
    assert {(j.workload, j.horizon) for j in jobs} == {
        ("contradiction", h) for h in (3000, 9000, 30000, 90000, 300000)
    } | {("lifecycle", h) for h in (365, 1095, 3650, 10950, 36500)}
