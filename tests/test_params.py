"""runner.spec.params: coercion, key resolution, canonical output, validation errors."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from runner.errors import FbenchError
from runner.spec.params import build, coerce, fields_of, resolve, split_assignment
from runner.spec.resolve import make_spec


@dataclass(frozen=True)
class Alpha:
    size: int = 1
    rate: float = 0.5
    on: bool = False
    label: str = "x"
    shared: float = 1.0

    def __post_init__(self) -> None:
        if self.rate < 0:
            raise ValueError(f"rate must be non-negative, got {self.rate}")


@dataclass(frozen=True)
class Beta:
    shared: float = 2.0
    count: int = 0


SPACES = {"policy": Alpha, "workload": Beta}
WHERE = {"policy": "policy 'alpha'", "workload": "workload 'beta'"}


def res(*assignments: tuple[str, object]) -> dict:
    return resolve(assignments, SPACES, WHERE)  # type: ignore[arg-type]


# ---------------------------------------------------------------- coerce


@pytest.mark.parametrize(
    ("raw", "typ", "want"),
    [
        ("3", int, 3),
        (" 3 ", int, 3),
        ("-4", int, -4),
        (7, int, 7),
        ("150", float, 150.0),
        ("0.25", float, 0.25),
        ("1e-3", float, 0.001),
        (3, float, 3.0),
        (2.5, float, 2.5),
        ("true", bool, True),
        ("TRUE", bool, True),
        (" True ", bool, True),
        ("1", bool, True),
        ("false", bool, False),
        ("0", bool, False),
        (True, bool, True),
        ("teacher", str, "teacher"),
        ("", str, ""),
    ],
)
def test_coerce_valid(raw: object, typ: type, want: object) -> None:
    """Guards against a valid value being rejected or coerced to the wrong value/type."""
    got = coerce(raw, typ, "ns.key")  # type: ignore[arg-type]
    assert got == want
    assert type(got) is typ


@pytest.mark.parametrize(
    ("raw", "typ"),
    [
        ("maybe", bool),
        ("yes", bool),
        ("", bool),
        (1, bool),
        ("abc", float),
        ("", float),
        ("1.5", int),
        ("abc", int),
        (True, int),
        (1.0, int),
        (True, float),
        (5, str),
    ],
)
def test_coerce_invalid(raw: object, typ: type) -> None:
    """Guards against nonsense values (e.g. bool "maybe", int "1.5", True as a number)
    being accepted or escaping as a bare ValueError/TypeError."""
    with pytest.raises(FbenchError, match=r"^parameter ns\.key="):
        coerce(raw, typ, "ns.key")  # type: ignore[arg-type]


def test_coerce_error_message_names_key_type_and_example() -> None:
    """Guards against an unhelpful coercion message (it must name the key, the type and
    show a valid example)."""
    with pytest.raises(FbenchError) as exc:
        coerce("abc", float, "policy.tau")
    assert str(exc.value) == (
        "parameter policy.tau='abc' is not a valid float; give e.g. policy.tau=0.0"
    )


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf"])
def test_non_finite_float_rejected(raw: str) -> None:
    """Guards against NaN parameters passing validation silently (and hashing to non-JSON)."""
    with pytest.raises(FbenchError, match="finite"):
        make_spec("contradiction", "ebbinghaus", 0, 300, params=[("tau", raw)])


def test_parameters_equal_to_defaults_are_dropped() -> None:
    """Guards against the same job getting two ids (and running twice in a sweep) because a
    parameter was spelled out at its default value."""
    plain = make_spec("contradiction", "ebbinghaus", 0, 300)
    explicit = make_spec("contradiction", "ebbinghaus", 0, 300, params=[("tau", "150")])
    assert explicit == plain
    assert explicit.params == ()


# ---------------------------------------------------------------- split_assignment


def test_split_assignment() -> None:
    """Guards against --param parsing losing '=' in values or accepting a missing key/'='."""
    assert split_assignment("tau=150") == ("tau", "150")
    assert split_assignment(" policy.tau =30") == ("policy.tau", "30")
    assert split_assignment("store.extractor=a=b") == ("store.extractor", "a=b")
    assert split_assignment("label=") == ("label", "")
    for bad in ("tau", "=5", " =5", ""):
        with pytest.raises(FbenchError, match="is not key=value"):
            split_assignment(bad)


# ---------------------------------------------------------------- resolve


def test_fields_of() -> None:
    """Guards against field types/defaults being misread (e.g. string annotations under
    `from __future__ import annotations` not resolved to types)."""
    assert fields_of(Beta) == {"shared": (float, 2.0), "count": (int, 0)}
    assert fields_of(Alpha)["on"] == (bool, False)


def test_bare_and_namespaced_keys_resolve_alike() -> None:
    """Guards against a bare key resolving to a different canonical key than its
    namespaced form."""
    assert res(("size", "3")) == {"policy.size": 3}
    assert res(("policy.size", "3")) == {"policy.size": 3}
    assert res(("count", "2")) == {"workload.count": 2}
    assert res(("workload.count", 2)) == {"workload.count": 2}


def test_bare_key_in_two_namespaces_is_ambiguous() -> None:
    """Guards against a bare key silently picking one of two namespaces that declare it."""
    with pytest.raises(FbenchError, match="ambiguous") as exc:
        res(("shared", "1"))
    assert "policy.shared" in str(exc.value)
    assert "workload.shared" in str(exc.value)
    assert res(("workload.shared", "7")) == {"workload.shared": 7.0}
    assert res(("policy.shared", "7")) == {"policy.shared": 7.0}


@pytest.mark.parametrize("key", ["nope", "policy.count", "workload.size", "store.size", "policy."])
def test_unknown_key(key: str) -> None:
    """Guards against unknown or wrongly namespaced keys being accepted (or crashing)
    instead of an error listing the known keys."""
    with pytest.raises(FbenchError, match="unknown parameter") as exc:
        res((key, "1"))
    assert "policy.size" in str(exc.value)
    assert "workload.count" in str(exc.value)


def test_canonical_output_sorted_and_typed() -> None:
    """Guards against the canonical parameters (which feed the job id) depending on the
    order given or keeping raw strings."""
    out = res(("workload.count", "4"), ("on", "true"), ("rate", "150"), ("label", "y"),
              ("size", " 2"))
    assert out == {"policy.label": "y", "policy.on": True, "policy.rate": 150.0,
                   "policy.size": 2, "workload.count": 4}
    assert list(out) == sorted(out)
    assert type(out["policy.rate"]) is float
    assert type(out["policy.size"]) is int


def test_later_assignment_wins() -> None:
    """Guards against a repeated parameter (bare then namespaced) producing two entries."""
    assert res(("rate", "1"), ("policy.rate", "2")) == {"policy.rate": 2.0}


def test_validation_error_becomes_fbench_error() -> None:
    """Guards against a dataclass __post_init__ ValueError escaping as a traceback; the
    message names the owner and keeps the validator's explanation."""
    with pytest.raises(FbenchError) as exc:
        res(("rate", "-1"))
    assert str(exc.value) == "bad parameter for policy 'alpha': rate must be non-negative, got -1.0"


def test_build_type_error_becomes_fbench_error() -> None:
    """Guards against an unexpected field reaching the constructor as a raw TypeError."""
    with pytest.raises(FbenchError, match=r"^bad parameter for owner"):
        build(Beta, {"workload.bogus": 1}, "workload", "owner")
    assert build(Beta, {"workload.count": 3, "policy.size": 9}, "workload", "o") == Beta(count=3)
