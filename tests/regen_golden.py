"""Rewrite tests/golden/*.json from the current code: ``make golden``."""

from __future__ import annotations

import json

from tests.golden_cases import (
    GOLDEN_DIR,
    compute,
    compute_streams,
    golden_path,
    policies,
    streams_path,
)

if __name__ == "__main__":
    GOLDEN_DIR.mkdir(exist_ok=True)
    for policy in policies():
        golden_path(policy).write_text(json.dumps(compute(policy), indent=1) + "\n")
        print(f"wrote {golden_path(policy)}")
    streams_path().write_text(json.dumps(compute_streams(), indent=1) + "\n")
    print(f"wrote {streams_path()}")
