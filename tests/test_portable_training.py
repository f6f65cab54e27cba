"""Training that gives the same weights on every x86-64 CPU (runner/train/portable.py,
runner/train/isolated.py): the pinned environment, the portable arithmetic, and the
diagnosis a failed `fbench train --check` prints. The exact retraining test itself is
tests/test_learned.py::test_retraining_reproduces_shipped_weights."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

import runner.train
from memcore.learned.weights import WeightsFile, save_weights
from runner.cli import app
from runner.train import BUILT_WITH, built_with, likely_cause
from runner.train.common import deterministic
from runner.train.isolated import pinned_env
from runner.train.portable import PINNED_ENV, PortableMath, UnportableOp

CALLER_SETTINGS = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX2",
                   "MKL_ENABLE_INSTRUCTIONS": "AVX512", "OMP_NUM_THREADS": "8",
                   "GLIBC_TUNABLES": "glibc.malloc.check=0", "HOME": "/somewhere"}


def test_the_pin_overrides_whatever_the_caller_set() -> None:
    """Prevents training that depends on the caller's environment: every pinned
    variable takes the pin's value over the caller's, MKL's instruction override is
    dropped, and everything unrelated passes through."""
    env = pinned_env(CALLER_SETTINGS)
    for key, value in PINNED_ENV.items():
        assert env[key] == value
    assert "MKL_ENABLE_INSTRUCTIONS" not in env
    assert env["HOME"] == "/somewhere"


def test_the_worker_refuses_to_train_unpinned(tmp_path: Path) -> None:
    """Prevents a worker started by hand (or with the pin lost) from writing weights
    computed by the machine's own SIMD kernels: it exits non-zero naming the capability,
    and writes nothing."""
    out = tmp_path / "w.safetensors"
    env = {**pinned_env(), "ATEN_CPU_CAPABILITY": "avx2"}
    proc = subprocess.run([sys.executable, "-m", "runner.train.isolated", "forget", str(out)],
                          env=env, capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode != 0
    assert "capability is AVX2" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_blas_products_are_decomposed_to_the_same_values(beta: float, alpha: float) -> None:
    """Prevents a decomposition that computes something else than the BLAS op it
    replaces (mm, addmm, mv, addmv, dot, with beta and alpha; beta 0 ignores even a NaN
    in the added tensor, as BLAS does), forward and through autograd."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(7, 5, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(5, 3, generator=g, dtype=torch.float64)
    v = torch.randn(5, generator=g, dtype=torch.float64)
    c = torch.randn(7, 3, generator=g, dtype=torch.float64)
    cv = torch.randn(7, generator=g, dtype=torch.float64)
    if beta == 0:
        c[0, 0] = cv[0] = float("nan")

    def products() -> list[torch.Tensor]:
        return [a @ b, torch.addmm(c, a, b, beta=beta, alpha=alpha), a @ v,
                torch.addmv(cv, a, v, beta=beta, alpha=alpha), a[0].dot(v)]

    def grad(out: list[torch.Tensor]) -> torch.Tensor:
        (grad_a,) = torch.autograd.grad(sum(o.sum() for o in out), a)
        return grad_a

    reference = products()
    mode = PortableMath()
    with mode:
        portable = products()
        portable_grad = grad(portable)
    assert {"mm", "addmm", "mv", "addmv", "dot"} <= mode.seen
    for ref, got in zip(reference, portable, strict=True):
        torch.testing.assert_close(got, ref)
    torch.testing.assert_close(portable_grad, grad(reference))


def test_sqrt_is_correctly_rounded_under_portable_math() -> None:
    """Prevents training's square roots (Adam's second moment, L-BFGS's line search)
    from running on MKL VML's sqrt, which is not correctly rounded and whose bits
    change with the CPU model and MKL_CBWR: under PortableMath every float32 sqrt, of
    a tensor or a 0-dim one, equals the IEEE result bit for bit."""
    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.rand(200_000, generator=g) * 10,
                   torch.rand(1000, generator=g) * 1e-30, torch.tensor([0.0, 1.0, 4.0])])
    exact = torch.from_numpy(x.double().numpy() ** 0.5).float()
    mode = PortableMath()
    with mode:
        got = torch.sqrt(x)
        scalar = x[7].sqrt()
    assert "sqrt" in mode.seen
    assert torch.equal(got, exact)
    assert scalar.shape == () and torch.equal(scalar, exact[7])


@pytest.mark.slow
def test_retraining_does_not_depend_on_mkl_s_mode(tmp_path: Path) -> None:
    """Prevents weights that move with the machine through MKL: the tagger (Adam, so
    square roots every step) retrained in the pinned worker with MKL_CBWR forced to
    COMPATIBLE, AVX2 and AVX512 gives the same file, byte for byte."""
    files = []
    for mode in ("COMPATIBLE", "AVX2", "AVX512"):
        out = tmp_path / f"{mode}.safetensors"
        subprocess.run([sys.executable, "-m", "runner.train.isolated", "tagger", str(out)],
                       env={**pinned_env(), "MKL_CBWR": mode}, check=True,
                       capture_output=True, timeout=300)
        files.append(out.read_bytes())
    assert files[0] == files[1] == files[2]


def test_an_op_outside_the_list_stops_training_naming_it() -> None:
    """Prevents a new layer from bringing a CPU-dependent kernel (oneDNN's convolution,
    fbgemm's embedding bag) into training unnoticed: the op is refused by name."""
    x, w = torch.randn(1, 2, 8), torch.randn(3, 2, 3)
    with pytest.raises(UnportableOp, match=r"aten\.convolution"), PortableMath():
        torch.nn.functional.conv1d(x, w)
    bag = torch.nn.EmbeddingBag(10, 4, mode="sum")
    ids, offsets = torch.tensor([1, 2]), torch.tensor([0])
    with pytest.raises(UnportableOp, match=r"aten\._embedding_bag"), deterministic(0):
        bag(ids, offsets)


@pytest.fixture
def fake_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """``runner.train`` reading model ``forget`` from a file of the test's making."""
    path = tmp_path / "forget.safetensors"
    monkeypatch.setattr(runner.train, "weights_path", lambda name: tmp_path / f"{name}.safetensors")

    def write(meta: dict[str, object]) -> None:
        save_weights(path, WeightsFile({"w": torch.zeros(2)}, meta))

    return write


def test_likely_cause_names_the_build_that_differs(fake_weights) -> None:  # type: ignore[no-untyped-def]
    """Prevents a failed check that leaves the user guessing: another torch build is
    named with both versions, a file from before the pin says so, and with the same
    build the cause is the training code or its data."""
    diffs = ["w: differs (max |delta| 1)"]
    fake_weights({BUILT_WITH: {**built_with(), "torch": "2.4.0+cpu"}})
    cause = likely_cause("forget", diffs)
    assert f"torch 2.4.0+cpu there, {torch.__version__} here" in cause
    assert "libc" not in cause
    fake_weights({})
    assert "records no build" in likely_cause("forget", diffs)
    fake_weights({BUILT_WITH: built_with()})
    assert "training code or its data changed" in likely_cause("forget", diffs)
    assert "settings or data changed" in likely_cause("forget", ["metadata 'rule' differs"])


def test_train_check_prints_differences_and_cause_and_exits_1(
        fake_weights, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Prevents `fbench train --check` from failing silently or with exit 0: it lists
    each differing tensor and one 'likely cause' line, and exits 1."""
    fake_weights({BUILT_WITH: {**built_with(), "torch": "2.4.0+cpu"}})
    monkeypatch.setattr(runner.train, "weight_differences",
                        lambda name: ["l1.weight: differs (max |delta| 0.5)"])
    result = CliRunner().invoke(app, ["train", "forget", "--check"])
    assert result.exit_code == 1
    assert "forget: DIFFERS from the shipped weights" in result.stdout
    assert "l1.weight: differs (max |delta| 0.5)" in result.stdout
    assert "likely cause: the shipped file was written by another build" in result.stdout
