"""Rewrite tests/golden/ (the policies' counts, the streams, the reports of
``tests/report_cases.py``) from the current code: ``make golden``."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from tests import report_cases
from tests.golden_cases import (
    GOLDEN_DIR,
    compute,
    compute_incumbents,
    compute_streams,
    golden_path,
    incumbents_path,
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
    incumbents_path().write_text(json.dumps(compute_incumbents(), indent=1) + "\n")
    print(f"wrote {incumbents_path()}")
    with tempfile.TemporaryDirectory() as tmp:
        report_cases.build(Path(tmp))
        for name, made in report_cases.outputs(Path(tmp)).items():
            golden = report_cases.GOLDEN_DIR / name
            golden.parent.mkdir(parents=True, exist_ok=True)
            if name.endswith(".html"):
                golden.write_text(report_cases.page_text(made.read_text()))
            else:
                shutil.copyfile(made, golden)
            print(f"wrote {golden}")
