"""Rewrite tests/golden/*.json from the current code: ``make golden``."""

from __future__ import annotations

import json

from tests.golden_cases import GOLDEN_DIR, compute, golden_path, policies

if __name__ == "__main__":
    GOLDEN_DIR.mkdir(exist_ok=True)
    for policy in policies():
        golden_path(policy).write_text(json.dumps(compute(policy), indent=1) + "\n")
        print(f"wrote {golden_path(policy)}")
