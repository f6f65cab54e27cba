"""A sweep's spec from what the user gave: comma-separated CLI flags, ``--param`` grid
axes and ``sweep.toml``, each problem a one-line ``FbenchError`` (the spec and its
expansion into jobs: ``runner.sweep.expand``). A config's declared primary family
(``compare``: pairs of variant labels, and ``primary_metrics``) is validated here too
(``runner.results.comparisons`` reads it back)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from runner.errors import FbenchError, lookup
from runner.spec.params import Scalar
from runner.sweep.expand import SweepSpec


def parse_list(text: str | None, what: str) -> tuple[str, ...]:
    if text is None:
        return ()
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise FbenchError(f"--{what} is empty; give a comma-separated list")
    return items


def parse_seed_list(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(x) for x in parse_list(text, "seed-list"))
    except ValueError:
        raise FbenchError(f"--seed-list {text!r} must be integers, e.g. 0,3,7") from None
    if any(s < 0 for s in seeds):
        raise FbenchError("seeds must be non-negative")
    return tuple(dict.fromkeys(seeds))


def seeds_from_count(n: int) -> tuple[int, ...]:
    if n <= 0:
        raise FbenchError(f"--seeds must be positive, got {n}")
    return tuple(range(n))


def parse_param_axis(text: str) -> tuple[str, tuple[str, ...]]:
    key, sep, values = text.partition("=")
    if not sep or not key.strip():
        raise FbenchError(f"parameter {text!r} is not key=v1,v2; write e.g. ebbinghaus.tau=30,150")
    return key.strip(), parse_list(values, f"param {key.strip()}")


CONFIG_KEYS = {
    "seeds", "seed_list", "policies", "workloads", "horizons", "params", "k",
    "out", "executor", "address", "max_in_flight", "overwrite", "baseline",
    "compare", "primary_metrics", "samples",
}


def load_config(path: Path) -> dict[str, Any]:
    """Read sweep.toml; an unknown key or a malformed file is a one-line error."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise FbenchError(f"config {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FbenchError(f"cannot read config {str(path)!r}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise FbenchError(f"config {str(path)!r} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - CONFIG_KEYS)
    if unknown:
        raise FbenchError(
            f"config {str(path)!r}: unknown key {unknown[0]!r}; "
            f"known: {', '.join(sorted(CONFIG_KEYS))}"
        )
    return data


def _as_list(value: Any, key: str) -> list[Any]:
    if isinstance(value, str):
        return [x.strip() for x in value.split(",") if x.strip()]
    if isinstance(value, list):
        return value
    if isinstance(value, int | float | bool):
        return [value]
    raise FbenchError(f"config key {key!r} must be a list or a comma-separated string")


def compare_pairs(value: Any) -> tuple[tuple[str, str], ...]:
    """``compare = [["ebbinghaus", "last_write_wins"], ...]``: pairs of variant labels."""
    if not isinstance(value, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in value):
        raise FbenchError('config key \'compare\' must be a list of pairs of policies, e.g. '
                          'compare = [["ebbinghaus", "last_write_wins"]]')
    return tuple((str(a).strip(), str(b).strip()) for a, b in value)


def primary_metrics(value: Any) -> tuple[str, ...]:
    """``primary_metrics = [...]``: metrics with a better direction (timing ones are not)."""
    from runner.metrics import METRICS

    items = ([x.strip() for x in value.split(",") if x.strip()] if isinstance(value, str)
             else value if isinstance(value, list) else [value])
    names = tuple(str(x) for x in items)
    for name in names:
        metric = lookup(METRICS, name, "metric")
        if metric.direction == "none" or metric.timing:
            raise FbenchError(f"primary metric {name!r} has no better direction; choose a "
                              "metric marked ↑ or ↓ in `fbench list metrics`")
    return names


def spec_from_config(data: dict[str, Any]) -> dict[str, Any]:
    """The SweepSpec fields a config sets (CLI flags then override them)."""
    out: dict[str, Any] = {}
    if "seeds" in data and "seed_list" in data:
        raise FbenchError("config sets both 'seeds' and 'seed_list'; keep one")
    if "seeds" in data:
        if not isinstance(data["seeds"], int) or isinstance(data["seeds"], bool):
            raise FbenchError("config key 'seeds' must be an integer count")
        out["seeds"] = seeds_from_count(data["seeds"])
    if "seed_list" in data:
        out["seeds"] = parse_seed_list(",".join(str(s) for s in _as_list(data["seed_list"],
                                                                          "seed_list")))
    for key in ("policies", "workloads", "horizons"):
        if key in data:
            out[key] = tuple(str(x) for x in _as_list(data[key], key))
    if "params" in data:
        if not isinstance(data["params"], dict):
            raise FbenchError("config key 'params' must be a table of key = [values]")
        out["params"] = tuple(
            (str(k), tuple(_as_list(v, f"params.{k}"))) for k, v in data["params"].items()
        )
    if "k" in data:
        out["k"] = data["k"]
    if "baseline" in data:
        out["baseline"] = str(data["baseline"])
    if "compare" in data:
        out["compare"] = compare_pairs(data["compare"])
    if "primary_metrics" in data:
        out["primary_metrics"] = primary_metrics(data["primary_metrics"])
    return out


def build_spec(config: dict[str, Any], overrides: dict[str, Any]) -> SweepSpec:
    merged = spec_from_config(config) | {k: v for k, v in overrides.items() if v is not None}
    known = {f.name for f in fields(SweepSpec)}
    spec = SweepSpec(**{k: v for k, v in merged.items() if k in known})
    if not isinstance(spec.k, int) or spec.k <= 0:
        raise FbenchError(f"k must be a positive integer, got {spec.k!r}")
    return spec


def merge_params(
    config_params: Sequence[tuple[str, tuple[Scalar, ...]]], cli: Iterable[str]
) -> tuple[tuple[str, tuple[Scalar, ...]], ...]:
    """Config grid axes, with CLI ``--param`` axes replacing the same key."""
    axes = dict(config_params)
    for text in cli:
        key, values = parse_param_axis(text)
        axes[key] = values
    return tuple(axes.items())
