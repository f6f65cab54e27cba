"""The report's outputs on three small sweeps equal the reviewed golden files
(``tests/report_cases.py``; ``make golden`` rewrites them)."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.report_cases import GOLDEN_DIR, build, outputs, page_text


def _nan_as_text(table: pa.Table) -> list[dict[str, object]]:
    """The rows, nan written "nan" (so that nan equals nan)."""
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in table.to_pylist()]


NAMES = sorted(outputs(Path("/")))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report_cases")
    build(root)
    return outputs(root)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_report_output_matches_its_golden_file(name: str, built: dict[str, Path]) -> None:
    """Prevents any unreviewed change to what a report says: RESULTS.md and
    comparisons.csv byte for byte, summary.parquet value for value with its metadata,
    RESULTS.html byte for byte but for the plots' pixels."""
    golden, made = GOLDEN_DIR / name, built[name]
    assert golden.exists(), f"no golden file {golden}: run `make golden` and review it"
    if name.endswith(".parquet"):
        want, got = pq.read_table(golden), pq.read_table(made)
        assert got.schema.metadata == want.schema.metadata
        assert got.schema == want.schema
        assert _nan_as_text(got) == _nan_as_text(want)
    elif name.endswith(".html"):
        assert page_text(made.read_text()) == golden.read_text()
    else:
        assert made.read_bytes() == golden.read_bytes()
