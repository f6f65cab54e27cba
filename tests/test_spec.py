"""JobSpec: canonical JSON, the stable job id, round trips; make_spec's checks."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from runner.errors import FbenchError
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import make_spec

GOLDEN = JobSpec("contradiction", "ebbinghaus", 0, 3000, (("policy.tau", 150.0),), 5)
GOLDEN_JSON = (
    '{"horizon":3000,"k":5,"params":{"policy.tau":150.0},"policy":"ebbinghaus",'
    '"seed":0,"workload":"contradiction"}'
)
GOLDEN_ID = "f546a95b21295744"


def test_job_id_golden() -> None:
    """Guards against a silent change to the canonical JSON or its hashing, which would
    orphan every shard already written (their file names are job ids)."""
    assert GOLDEN.canonical_json() == GOLDEN_JSON
    assert GOLDEN.job_id == GOLDEN_ID


def test_job_id_is_sha256_prefix_of_canonical_json() -> None:
    """Guards against the id being derived from anything but the canonical JSON
    (e.g. repr or Python's salted hash) or changing length/alphabet."""
    spec = JobSpec("contradiction", "keep_all", 7, 300, (("workload.p_hard", 0.5),), 3)
    want = hashlib.sha256(spec.canonical_json().encode()).hexdigest()[:16]
    assert spec.job_id == want
    assert len(spec.job_id) == 16
    assert set(spec.job_id) <= set("0123456789abcdef")


@pytest.mark.parametrize(
    "change",
    [
        {"workload": "lifecycle"},
        {"policy": "keep_all"},
        {"seed": 1},
        {"horizon": 3001},
        {"k": 6},
        {"params": ()},
        {"params": (("policy.tau", 151.0),)},
        {"params": (("policy.gain", 150.0),)},
        {"params": (("policy.tau", 150.0), ("store.extractor", "teacher"))},
    ],
)
def test_job_id_changes_with_every_field(change: dict) -> None:
    """Guards against two different jobs sharing an id (one shard overwriting another)."""
    other = dataclasses.replace(GOLDEN, **change)
    assert other.job_id != GOLDEN.job_id


def test_job_id_ignores_param_order() -> None:
    """Guards against the same parameters in another order producing another id."""
    a = JobSpec("contradiction", "ebbinghaus", 0, 300,
                (("policy.gain", 2.0), ("policy.tau", 30.0)))
    b = JobSpec("contradiction", "ebbinghaus", 0, 300,
                (("policy.tau", 30.0), ("policy.gain", 2.0)))
    assert a.canonical_json() == b.canonical_json()
    assert a.job_id == b.job_id


def test_make_spec_canonicalizes_value_types() -> None:
    """Guards against "150", 150 and 150.0 for a float parameter giving three ids (raw JSON
    would write 150 and 150.0 differently)."""
    specs = {
        make_spec("contradiction", "ebbinghaus", 0, 3000, params=[("tau", raw)])
        for raw in ("60", 60, 60.0, " 60 ")
    }
    assert len(specs) == 1
    assert specs.pop().params == (("policy.tau", 60.0),)


def test_canonical_json_sorted_and_compact() -> None:
    """Guards against key order or whitespace leaking into the hashed text."""
    spec = JobSpec("contradiction", "ebbinghaus", 2, 300,
                   (("store.extractor", "teacher"), ("policy.tau", 30.0)), 4)
    text = spec.canonical_json()
    assert " " not in text
    assert "\n" not in text
    doc = json.loads(text)
    assert list(doc) == sorted(doc)
    assert list(doc["params"]) == sorted(doc["params"])
    assert text == json.dumps(doc, sort_keys=True, separators=(",", ":"))


def test_to_dict_from_dict_round_trip() -> None:
    """Guards against a spec read back from a shard (as JSON) not being the same job."""
    spec = JobSpec("contradiction", "ebbinghaus", 4, 300,
                   (("policy.tau", 30.0), ("store.extractor", "teacher")), 3)
    back = JobSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert back == spec
    assert back.job_id == spec.job_id
    assert JobSpec.from_dict(GOLDEN.to_dict()) == GOLDEN


def test_from_dict_defaults_and_sorts() -> None:
    """Guards against from_dict failing on a dict without k/params or keeping unsorted
    params (which would break equality with the canonical spec)."""
    bare = JobSpec.from_dict({"workload": "contradiction", "policy": "keep_all",
                              "seed": "1", "horizon": "300"})
    assert bare == JobSpec("contradiction", "keep_all", 1, 300, (), 5)
    mixed = JobSpec.from_dict({"workload": "contradiction", "policy": "ebbinghaus", "seed": 0,
                               "horizon": 300, "params": {"policy.tau": 1.0,
                                                          "policy.gain": 2.0}})
    assert mixed.params == (("policy.gain", 2.0), ("policy.tau", 1.0))


def test_spec_is_frozen_and_hashable() -> None:
    """Guards against a spec being mutated after its id was taken, or being unusable as a
    dict key / set member."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        GOLDEN.seed = 1  # type: ignore[misc]
    assert {GOLDEN, dataclasses.replace(GOLDEN)} == {GOLDEN}


def test_make_spec_rejects_negative_seed() -> None:
    """Guards against negative seeds slipping into a sweep (one-line FbenchError)."""
    with pytest.raises(FbenchError, match="seed must be non-negative, got -1"):
        make_spec("contradiction", "keep_all", -1, 300)
    assert make_spec("contradiction", "keep_all", 0, 300).seed == 0


def test_make_spec_default_horizon_and_params() -> None:
    """Guards against make_spec dropping the workload's default horizon or writing
    defaults into params (which would change every id when a default is added)."""
    spec = make_spec("contradiction", "ebbinghaus", 0)
    assert spec == JobSpec("contradiction", "ebbinghaus", 0, 3000, (), 5, workload_version="2")
