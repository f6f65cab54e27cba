"""The report's cross-workload rankings: each policy's mean, interval and rank per column,
and Kendall's τ between an outside workload's column and fbench's own."""

from __future__ import annotations

import json

import pyarrow as pa
from scipy import stats

from runner.report.markdown_text import render_markdown
from runner.report.rankings import section


def _summary(workload: str, horizon: int, means: dict[str, float],
             params: dict[str, object] | None = None) -> pa.Table:
    rows = []
    for policy, mean in means.items():
        for metric in ("recall_current_at_k", "contradiction_rate", "false_forget_rate"):
            rows.append({"workload": workload, "horizon": horizon, "k": 5, "policy": policy,
                         "params": json.dumps(params or {}), "metric": metric, "mean": mean,
                         "ci_low": mean - 0.01, "ci_high": mean + 0.01, "n": 20, "n_jobs": 20})
    return pa.Table.from_pylist(rows)


def test_rankings_set_each_policy_side_by_side_with_tau() -> None:
    """Prevents a rankings section that mis-ranks (direction ignored), drops a column of
    an outside workload's parameters, ranks among cells it does not show, or states a τ
    other than scipy's over the policies both columns ran; and one shown when no included
    sweep runs another workload."""
    main = pa.concat_tables([
        _summary("contradiction", 3000, {"keep_all": 0.6, "lethe": 0.1, "ttl": 0.3,
                                          "main_only": 0.99}),
        _summary("lifecycle", 365, {"keep_all": 0.5, "lethe": 0.7, "ttl": 0.2}),
        _summary("lifecycle.bursty", 365, {"keep_all": 0.5})])
    outside = pa.concat_tables([
        _summary("statebench", 2000, {"keep_all": 0.4, "lethe": 0.2, "ttl": 0.9, "oracle": 0.5},
                 {"workload.distance": 40})])
    text = render_markdown(section(main, [("outside-sweep", outside)]))
    assert ("| policy | contradiction h3000 | lifecycle h365 | statebench h2000 distance=40 |"
            in text)
    assert ("| lethe | 3. 0.100 [0.090, 0.110] | 1. 0.700 [0.690, 0.710] "
            "| 4. 0.200 [0.190, 0.210] |") in text
    assert ("| keep_all | 1. 0.600 [0.590, 0.610] | 2. 0.500 [0.490, 0.510] "
            "| 3. 0.400 [0.390, 0.410] |") in text
    assert "| oracle |  |  | 2. 0.500 [0.490, 0.510] |" in text
    # contradiction_rate is lower-is-better: the ranks flip
    lower = text.split("**contradiction_rate ↓**")[1]
    assert ("| lethe | 1. 0.100 [0.090, 0.110] | 3. 0.700 [0.690, 0.710] "
            "| 1. 0.200 [0.190, 0.210] |") in lower
    tau = stats.kendalltau([3, 4, 1], [1, 3, 2]).statistic  # keep_all, lethe, ttl
    assert (f"- statebench h2000 distance=40 vs contradiction h3000: τ = {tau:+.2f}"
            in text.split("**contradiction_rate")[0])
    assert "lifecycle.bursty" not in text and "main_only" not in text
    assert section(main, [("incumbents", main)]) == []
