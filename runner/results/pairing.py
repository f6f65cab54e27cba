"""Which cell a cell is paired with, and on what: a cell's baseline is the baseline
policy at its defaults, at the same workload, horizon and k, with the same non-policy
parameters and the same embedder (the one its shards recorded, not the one written:
mem0 embeds with MiniLM whatever its parameters). No cell is paired across embedders.
Also: aligning two cells' seeds."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pyarrow as pa

from runner.errors import FbenchError
from runner.spec.params import OWN

Cell = tuple[str, int, int, str, str]

EMBEDDER_KEY = "store.embedder"


def baseline_params(params: str) -> str:
    """The baseline's params for a cell: its non-policy overrides only."""
    kept = {k: v for k, v in json.loads(params).items() if not k.startswith("policy.")}
    return json.dumps(kept, sort_keys=True)


def context(params: str) -> str:
    """What a cell shares with its baseline besides the embedder: its non-policy overrides
    other than ``store.embedder`` (the embedder is matched on what ran, its own column)."""
    kept = {k: v for k, v in json.loads(params).items()
            if not k.startswith("policy.") and not is_embedder_key(k)}
    return json.dumps(kept, sort_keys=True)


def is_embedder_key(key: str) -> bool:
    """``store.embedder`` or a memory's own ``policy.embedder`` (lethe_agent's): the
    embedder axis, never part of a policy's identity."""
    return key.rpartition(".")[2] == "embedder"


def is_default_variant(params: str) -> bool:
    """No ``policy.*`` override but the embedder: the policy at its defaults (how a
    baseline is run, and the policy's own primary comparison)."""
    return not any(k.startswith("policy.") and not is_embedder_key(k)
                   for k in json.loads(params))


class Baselines:
    """The baseline's cells by (setting, context, embedder): a cell's baseline is the
    baseline policy at its defaults, at the same workload, horizon, k and non-policy
    parameters, with the same embedder (what ran, not what was written: mem0 embeds
    with MiniLM whatever its parameters). A memory with its own retrieval (``own``) is
    paired with the baseline at the baseline's default embedder."""

    def __init__(self, baseline: str, embedders: dict[Cell, str]) -> None:
        self.baseline = baseline
        self.by_key: dict[tuple[Any, ...], Cell] = {}
        self.default: dict[tuple[Any, ...], Cell] = {}
        for cell, emb in embedders.items():
            w, h, k, policy, params = cell
            if policy != baseline or not is_default_variant(params):
                continue
            self.by_key[(w, h, k, context(params), emb)] = cell
            if EMBEDDER_KEY not in json.loads(params):
                self.default[(w, h, k, context(params))] = cell
        self.embedders = embedders

    def of(self, cell: Cell) -> tuple[Cell | None, str | None]:
        """The cell's baseline cell, or None and the reason there is none."""
        w, h, k, policy, params = cell
        if policy == self.baseline and is_default_variant(params):
            return None, None
        emb = self.embedders[cell]
        if emb == OWN:
            found = self.default.get((w, h, k, context(params)))
        else:
            found = self.by_key.get((w, h, k, context(params), emb))
        if found is not None:
            return found, None
        if any(key[:4] == (w, h, k, context(params)) for key in self.by_key):
            return None, (f"no {self.baseline} ran with embedder {emb} here: not paired "
                          "across embedders")
        return None, f"no {self.baseline} cell with these parameters"


def cell_embedders(final: pa.Table, cells: dict[Cell, np.ndarray]) -> dict[Cell, str]:
    """Each cell's embedder, as its shards recorded it (one per cell)."""
    col = final.column("embedder").to_pylist()
    out = {}
    for cell, idx in cells.items():
        names = {col[i] for i in idx.tolist()}
        if len(names) != 1:
            raise FbenchError(f"cell {cell[3]} {cell[4]} ran with several embedders "
                              f"({', '.join(sorted(map(str, names)))}); rerun its jobs")
        out[cell] = str(names.pop())
    return out


def aligned(seeds: np.ndarray, idx: np.ndarray, bidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of two cells at their common seeds, aligned (both come sorted by seed)."""
    common = np.intersect1d(seeds[idx], seeds[bidx])
    return idx[np.isin(seeds[idx], common)], bidx[np.isin(seeds[bidx], common)]




def twins(cells: dict[Cell, np.ndarray], seeds: np.ndarray, values: np.ndarray
          ) -> dict[Cell, str]:
    """Cells whose outputs are bit-identical on every seed (the same seeds, every metric
    equal, nan where nan) to an earlier cell of their setting: that cell's label. Cells
    are matched by a digest of their seeds and values, then compared in full."""
    from runner.results.tables import variant_label

    first: dict[tuple[Any, ...], Cell] = {}
    out = {}
    for cell, idx in cells.items():
        key = (cell[:3], _digest(seeds[idx], values[idx]))
        earlier = first.get(key)
        if earlier is None:
            first[key] = cell
        elif _same_outputs(seeds, values, cells[earlier], idx):
            out[cell] = variant_label(*earlier[3:])
    return out


def _digest(seeds: np.ndarray, block: np.ndarray) -> bytes:
    """A cell's seeds and values (nan where nan), hashed."""
    h = hashlib.sha256(np.ascontiguousarray(seeds).tobytes())
    block = np.ascontiguousarray(block)
    h.update(np.nan_to_num(block, nan=np.inf).tobytes())
    h.update(np.isnan(block).tobytes())
    return h.digest()


def _same_outputs(seeds: np.ndarray, values: np.ndarray, a: np.ndarray, b: np.ndarray
                  ) -> bool:
    """Two cells' rows hold the same seeds and bit-identical values, nan where nan."""
    return bool(np.array_equal(seeds[a], seeds[b])
                and np.array_equal(values[a], values[b], equal_nan=True))
