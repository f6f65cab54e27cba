"""``isotope_zero``: the isotope-zero library (``pip install isotope-zero``, module
``isotope_zero``), its ``IsotopeZero`` client driven as it is, on the simulated clock.

- **Offline, no daemon, no download.** The client is built with ``spawn_daemon=False``
  and a socket path that does not exist (so it never reaches a daemon some other
  process started), ``use_mmap=False`` (its README's production recommendation) and an
  in-memory SQLite database per job. Its embedding engine is then replaced before the
  first call, so its in-process ONNX engine (which downloads MiniLM from the hub on
  first use) is never built: ``policy.embedder`` is ``hashing`` or ``minilm``
  (fbench's vectors, ``memcore.EMBEDDERS``) or ``own``, the library's own 384-d
  feature-hash embedder (``EmbeddingEngine._embed_fallback``, what it runs offline).
  The same object serves the client's ``remember``/``recall`` and its consolidator
  (which re-embeds merge survivors).
- **Clock.** The library reads ``time.time()`` (``types.now_ts``, the decay module's
  retention, the client's TTL filter): ``fbench.clock.simulate`` runs those modules on
  the stream's clock, set before every call (a second per call within a step, so card
  timestamps never tie).
- **Observe** → ``remember(text, tags=<meta tags>, card_id="obs-<id>")``: the
  observation id travels in the card id (the library's documented deterministic
  upsert id), the capture's tags in its tags (its session has no field).
- **Query** → ``recall(text, k)`` (cosine top-k re-ranked by ``alpha`` · cosine +
  (1-alpha) · Ebbinghaus retention, ``policy.alpha`` 0.70 its default), then
  ``touch`` on every hit (``policy.touch``, on: the client's documented
  recall → touch loop; its query router touches every hit it surfaces).
- **Consolidate** → ``consolidate()`` at each ``Tick`` (TTL prune, then its
  ``Consolidator``: dedup into SUPERSEDED cards, Ebbinghaus decay pruning of
  never-touched cards); a stream without Ticks consolidates every
  ``consolidate_every`` steps. ``policy.ttl_days`` (0: none) is its client TTL: a card
  is hidden from ``recall`` once ``timestamp + ttl < now`` and deleted at the next
  consolidation. Removals are read from the store (``all()`` before and after, and
  ``superseded_by``): ``superseded`` (dedup folds), ``decayed`` (pruned), ``expired``
  (TTL, counted when hidden).
"""

from __future__ import annotations

import atexit
import tempfile
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fbench.clock import DAYS, Clock, simulate
from fbench.extras import import_module
from memcore import EMBEDDERS
from memcore.embed import BatchEmbedder
from memcore.store import parse_tags
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError
from runner.spec.params import OWN

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "isotope_zero"
PREFIX = "obs-"
EMBEDDER_CHOICES = ("hashing", "minilm", "own")
DIM = 384  # the library's embedding width (its own hash embedder's)


@dataclass(frozen=True)
class IsotopeZeroParams:
    """The client's defaults (alpha 0.70, no TTL), its embedder, and how it is driven."""

    embedder: str = "hashing"
    alpha: float = 0.70
    ttl_days: float = 0.0
    touch: bool = True
    consolidate_every: int = 1

    def __post_init__(self) -> None:
        if self.embedder not in EMBEDDER_CHOICES:
            raise ValueError(f"{NAME} embedder {self.embedder!r} is not one of "
                             f"{', '.join(EMBEDDER_CHOICES)}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"{NAME} alpha must be in [0, 1], got {self.alpha}")
        if self.ttl_days < 0:
            raise ValueError(f"{NAME} ttl_days must be >= 0 (0: none), got {self.ttl_days}")
        if self.consolidate_every < 0:
            raise ValueError(f"consolidate_every must be >= 0 (0: only at Ticks), "
                             f"got {self.consolidate_every}")


class _Engine:
    """The duck-typed embedder the client, its store and its consolidator call
    (``embed_text``, ``embed_batch``, ``dim``, ``is_real``, ``close``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.fbench = None if name == "own" else EMBEDDERS[name]()
        if self.fbench is None:
            from isotope_zero.embeddings.onnx_embed import EmbeddingEngine

            own = EmbeddingEngine.__new__(EmbeddingEngine)  # no model load or download
            own._dim, own.is_real = DIM, False
            self._own = own
        self.dim = DIM if self.fbench is None else len(self.fbench.embed("x"))
        self.is_real = name == "minilm"

    def embed_text(self, text: str) -> list[float]:
        if text == "":
            return [0.0] * self.dim
        if self.fbench is None:
            return list(self._own._embed_fallback(text))
        return [float(v) for v in self.fbench.embed(text)]

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_text(t) for t in texts]

    def close(self) -> None:
        pass


class IsotopeZeroAdapter:
    """One job's ``IsotopeZero`` client behind the harness's interface."""

    def __init__(self, izero: Any, p: IsotopeZeroParams) -> None:
        from isotope_zero import client as client_module
        from isotope_zero import types as types_module
        from isotope_zero.core import consolidation, decay, graph, store

        self.p = p
        self._time = simulate(types_module, DAYS, client_module, decay, graph, consolidation,
                              store)
        self._now = self._time.at(0).timestamp()
        self._ttl = p.ttl_days * 86_400.0
        nowhere = tempfile.gettempdir() + "/fbench-isotope-zero-no-daemon/none.sock"
        self.client = izero.IsotopeZero(
            db_path=":memory:", socket_path=nowhere, spawn_daemon=False, use_mmap=False,
            alpha=p.alpha, ttl_seconds=self._ttl or None)
        # the client and its engine register close() with atexit, which would keep every
        # job's client (and its database) alive until the process exits
        atexit.unregister(self.client.close)
        atexit.unregister(self.client.engine.close)
        self.engine = _Engine(p.embedder)
        self.client.engine = self.engine
        self.client.store.embedder = self.engine
        self._step = -1
        self._ticked = False
        self._live: set[int] = set()            # observations the library still serves
        self._tokens_of: dict[int, int] = {}
        self._tokens = 0
        self._expiry: deque[tuple[float, int]] = deque()  # (hidden after, obs) in order
        self._counts: dict[str, int] = {}

    # the simulated clock -------------------------------------------------------------
    def use_clock(self, clock: Clock) -> None:
        self._time.use_clock(clock)

    def prefetch(self, texts: list[str]) -> None:
        if isinstance(self.engine.fbench, BatchEmbedder):
            self.engine.fbench.prefetch(texts)

    def _advance(self, t: int) -> None:
        if t != self._step:
            if (not self._ticked and self.p.consolidate_every and self._step >= 0
                    and t // self.p.consolidate_every > self._step // self.p.consolidate_every):
                self._consolidate(t)
            self._step = t
        self._at(t)

    def _at(self, t: int) -> None:
        """Set the library's time to step ``t``; captures whose TTL has passed are hidden
        from ``recall`` from now on (the client's rule: ``timestamp + ttl < now``)."""
        self._now = self._time.at(t).timestamp()
        while self._expiry and self._expiry[0][0] < self._now:
            _, obs = self._expiry.popleft()
            if obs in self._live:
                self._drop(obs, "expired")

    def _drop(self, obs: int, reason: str) -> None:
        self._live.discard(obs)
        self._tokens -= self._tokens_of.pop(obs, 0)
        self._counts[reason] = self._counts.get(reason, 0) + 1

    def _consolidate(self, t: int) -> None:
        self._at(t)
        self.client.consolidate()
        live = {int(c.id[len(PREFIX):]) for c in self.client.store.all()}
        for obs in sorted(self._live - live):
            card = self.client.store.get(f"{PREFIX}{obs}")
            self._drop(obs, "superseded" if card is not None and card.superseded_by
                       else "decayed")

    # the adapter interface -----------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self._advance(t)
        self.client.remember(text, tags=parse_tags(meta), card_id=f"{PREFIX}{obs_id}")
        self._live.add(obs_id)
        n = whitespace_tokens(text)
        self._tokens_of[obs_id] = n
        self._tokens += n
        if self._ttl:
            self._expiry.append((self._now + self._ttl, obs_id))

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._advance(t)
        hits = self.client.recall(text, k=k)
        if self.p.touch:  # at the recall's instant: what it returned is held then
            for h in hits:
                self.client.touch(h["id"])
        return [Hit(int(h["id"][len(PREFIX):]), float(h["score"])) for h in hits[:k]]

    def tick(self, t: int) -> None:
        self._ticked = True
        self._advance(t)
        self._consolidate(t)

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._live

    def size(self) -> int:
        return len(self._live)

    def stored(self) -> int:
        """The store's own count of live cards (``count()``), TTL-hidden ones included."""
        return int(self.client.count())

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)


def build(policy_params: IsotopeZeroParams, store_params: Any, vocab: Vocabulary) -> Any:
    izero = import_module("isotope_zero", f"policy {NAME!r}")
    try:
        return IsotopeZeroAdapter(izero, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


def _forgets(p: IsotopeZeroParams) -> str:
    rule = "Ebbinghaus decay pruning of never-touched cards, dedup supersession"
    if p.ttl_days:
        rule += f", {p.ttl_days:g}-day TTL"
    return rule + ("" if p.touch else " (recall without touch)")


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="the isotope-zero library (1.5.0) as it is: recall fused with Ebbinghaus "
                "retention, consolidate() (dedup supersession, decay pruning of "
                "never-recalled cards), optional TTL, on the simulated clock",
    Params=IsotopeZeroParams, StoreParams=None, build=build,
    embedder=lambda policy, store: OWN if policy.embedder == "own" else str(policy.embedder),
    library=("isotope-zero",), imports=("isotope_zero",), forgets=_forgets))

