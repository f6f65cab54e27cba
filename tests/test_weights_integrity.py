"""Shipped weights load without pickle and only as shipped: a tampered or corrupt file
is refused in one line (exit 2 from the CLI), never silently used."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.learned.weights import WEIGHTS_DIR, load_weights, recorded_digests

ROOT = Path(__file__).resolve().parent.parent


def test_every_shipped_file_has_a_recorded_digest_that_matches() -> None:
    """Prevents shipping weights whose digest was not recorded (so never checked)."""
    digests = recorded_digests(WEIGHTS_DIR)
    files = sorted(p.name for p in WEIGHTS_DIR.glob("*.safetensors"))
    assert files and sorted(digests) == files
    for name in files:
        load_weights(WEIGHTS_DIR / name)  # matches, loads


@pytest.mark.parametrize("damage", ["flip-a-byte", "truncate", "garbage"])
def test_a_damaged_file_is_refused_in_one_line(damage: str, tmp_path: Path) -> None:
    """Prevents a tampered or corrupt weights file from loading (or crashing with a
    multi-line parser error)."""
    folder = tmp_path / "weights"
    shutil.copytree(WEIGHTS_DIR, folder)
    path = folder / "forget.safetensors"
    data = bytearray(path.read_bytes())
    if damage == "flip-a-byte":
        data[-5] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = bytearray(b"\x80\x04not safetensors at all")
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as err:
        load_weights(path)
    assert "\n" not in str(err.value) and "SHA-256" in str(err.value)
    (folder / "SHA256SUMS").unlink()  # without a recorded digest, the format still refuses it
    if damage != "flip-a-byte":
        with pytest.raises(ValueError, match="not a valid safetensors file"):
            load_weights(path)


def test_the_cli_refuses_tampered_weights_with_exit_2(tmp_path: Path) -> None:
    """Prevents a job from running on tampered weights or dying with a traceback."""
    folder = tmp_path / "weights"
    shutil.copytree(WEIGHTS_DIR, folder)
    path = folder / "forget.safetensors"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    code = (
        "import sys; from pathlib import Path; import memcore.learned.weights as w; "
        f"w.WEIGHTS_DIR = Path({str(folder)!r}); from runner.cli import main; "
        "sys.argv = ['fbench', 'run', '--workload', 'contradiction', '--policy', "
        "'learned_forget', '--horizon', '50']; main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "SHA-256" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_nothing_is_unpickled() -> None:
    """Prevents pickle (or torch.load) from reading files: results are Parquet and
    JSON, weights safetensors."""
    for package in ("memcore", "runner", "cluster", "workloads"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                    assert not any(n.split(".")[0] in ("pickle", "dill", "cloudpickle")
                                   for n in names), path
                if isinstance(node, ast.Attribute) and node.attr == "load":
                    base = node.value
                    assert not (isinstance(base, ast.Name) and base.id == "torch"), path
