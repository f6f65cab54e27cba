"""The tiny seeded cases behind the exact golden files, and how to compute them.

Regenerate with ``make golden`` (``python -m tests.regen_golden``) only when a change
of behaviour is intended, and review the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore import POLICIES
from runner.job.run import run_job
from runner.spec.resolve import make_spec

GOLDEN_DIR = Path(__file__).parent / "golden"
# One tiny case per workload family: turns without ticks, and days with ticks and tags;
# the retired versions' cases hold the numbers those streams always gave.
CASES = (
    {"workload": "contradiction@1", "seed": 7, "horizon": 400, "k": 5},
    {"workload": "lifecycle@1", "seed": 3, "horizon": 60, "k": 5},
    {"workload": "contradiction", "seed": 7, "horizon": 400, "k": 5},
    {"workload": "lifecycle", "seed": 3, "horizon": 60, "k": 5},
)


def golden_path(policy: str) -> Path:
    return GOLDEN_DIR / f"{policy}.json"


def compute(policy: str) -> dict[str, Any]:
    """Exact integer counts of the policy's tiny jobs, one per case."""
    return {str(case["workload"]): compute_case(policy, case) for case in CASES}


def compute_case(policy: str, case: dict[str, Any],
                 params: tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    """Exact integer counts of one tiny job (no floats, so no tolerance is needed)."""
    spec = make_spec(case["workload"], policy, case["seed"], case["horizon"], case["k"],
                     params)
    result = run_job(spec)
    m = result.metrics()
    n = m["n_queries"]
    return {
        "case": case | {"policy": policy},
        "n_queries": n,
        "recall_hits": round(m["recall_at_k"] * n),
        "contradiction_hits": round(m["contradiction_rate"] * n),
        "top1_hits": round(m["accuracy_at_1"] * n),
        "false_forget_queries": round(m["false_forget_rate"] * n),
        "final_size": m["final_size"],
        "peak_size": m["peak_size"],
        "final_tokens": m["final_tokens"],
        "forgotten": dict(sorted(result.forgotten.items())),
        "size_trajectory": [row["final_size"] for row in result.rows],
    }


def policies() -> list[str]:
    return sorted(POLICIES)


# The incumbents' settings the published sweeps run, each of their forgetting rules once
# and each on MiniLM (with fbench's keep_all on it: the vectors the libraries share), on
# the current cases at turns and at days (each library on its simulated clock).
INCUMBENTS = (
    ("lethe_agent", ()), ("lethe_agent", (("retention", "fifo"),)),
    ("lethe_agent", (("retention", "ttl"),)),
    ("mem0", ()), ("mem0", (("expire_days", 7),)),
    ("langgraph_store", (("backend", "sqlite"), ("ttl_days", 7))),
    ("yantrikdb", ()), ("yantrikdb", (("max_active", 20),)),
    ("lethe_agent", (("embedder", "minilm"),)),
    ("langgraph_store", (("backend", "sqlite"), ("ttl_days", 7), ("embedder", "minilm"))),
    ("yantrikdb", (("embedder", "minilm"),)),
    ("keep_all", (("embedder", "minilm"),)),
    ("inspeximus", ()), ("inspeximus", (("key_by", "teacher"),)),
    ("inspeximus", (("retention_days", 30),)),
    ("memware", ()), ("memware", (("conflicts", "await_confirmation"),)),
    ("memware", (("decay", 0.5),)),
    ("cognitive_memory", ()), ("cognitive_memory", (("episodic_decay_days", 7),)),
    ("dory", ()),
    ("isotope_zero", ()), ("isotope_zero", (("ttl_days", 7),)),
)
INCUMBENT_CASES = (
    {"workload": "contradiction", "seed": 7, "horizon": 400, "k": 5},
    {"workload": "lifecycle", "seed": 3, "horizon": 30, "k": 5},
)


def incumbents_path() -> Path:
    return GOLDEN_DIR / "incumbents.json"


def compute_incumbents() -> dict[str, Any]:
    """Exact integer counts of each incumbent setting's tiny jobs."""
    return {f"{policy} {dict(params)} {case['workload']}":
            compute_case(policy, case, params)
            for policy, params in INCUMBENTS for case in INCUMBENT_CASES}


# Every current workload's stream, seeds 0 and 1 at its default horizon, as one digest
# each (the event, its time, text and meta, and its whole truth): a faster generator must
# draw the same streams.
STREAM_SEEDS = (0, 1)


def stream_workloads() -> list[str]:
    from workloads import WORKLOADS

    return sorted(n for n in WORKLOADS.builtin_names() if "@" not in n
                  and n.split(".")[0] in ("contradiction", "lifecycle"))


def stream_digest(workload: str, seed: int) -> str:
    """SHA-256 of the stream's events in order, every field written out (a stale set
    sorted, so the digest does not depend on the process's string hashing)."""
    import hashlib

    from workloads import WORKLOADS, Observe, Query

    w = WORKLOADS[workload]
    h = hashlib.sha256()
    for ev in w.events(seed, w.default_horizon, w.Params()):
        if isinstance(ev, Observe):
            line = (f"O|{ev.t}|{ev.text}|{sorted(ev.meta.items())}|{ev.truth.slot}|"
                    f"{ev.truth.value}|{ev.truth.kind}")
        elif isinstance(ev, Query):
            line = (f"Q|{ev.t}|{ev.text}|{ev.truth.slot}|{ev.truth.value}|"
                    f"{sorted(ev.truth.stale)}|{ev.truth.category}")
        else:
            line = f"T|{ev.t}"
        h.update(line.encode() + b"\n")
    return h.hexdigest()


def streams_path() -> Path:
    return GOLDEN_DIR / "streams.json"


def compute_streams() -> dict[str, str]:
    return {f"{w} {seed}": stream_digest(w, seed) for w in stream_workloads()
            for seed in STREAM_SEEDS}
