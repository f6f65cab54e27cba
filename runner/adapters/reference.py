"""The reference adapter: memcore's store with one policy, offering the optional
capabilities (``runner.adapters.base``) its store has."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from memcore import EMBEDDERS, EXTRACTORS, Lexicon, MemoryStore, Policy, StoreParams
from memcore.embed import BatchEmbedder
from runner.adapters.base import Deletion, Hit
from runner.errors import FbenchError, lookup
from runner.job.extractors import HarnessExtractor  # (importing registers oracle, noisy)

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary


class StoreAdapter:
    """A ``memcore.MemoryStore`` behind the harness's interface; hits carry the
    harness's observation ids. The reference adapter and the oracle both build on it."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._removed: list[Deletion] | None = None  # kept once ``deletions`` is asked

    def deletions(self) -> list[Deletion]:
        """``ReportsDeletions``: the store's forget log, every removal as it is logged
        (from the first call on), its policy's score at removal."""
        if self._removed is None:
            self._removed = []
            self.store.forget_log.listener = self._logged
        found, self._removed = self._removed, []
        return found

    def _logged(self, removed: list[tuple[int, str, float]]) -> None:
        assert self._removed is not None
        self._removed.extend(Deletion(o, reason, score) for o, reason, score in removed)

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.store.add(text, t, obs_id, meta)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        return [Hit(h.obs_id, h.score) for h in self.store.retrieve(text, t, k)]

    def query_many(self, t: int, texts: list[str], k: int) -> list[list[Hit]]:
        ranked = self.store.rank_many(texts, t, k)
        if ranked is None:  # answers that can change later ones: in turn
            return [[Hit(h.obs_id, h.score) for h in hits]
                    for hits in self.store.retrieve_in_turn(texts, t, k)]
        rows, scores = ranked
        obs = self.store.cols.obs_id[rows].tolist()
        return [[Hit(o, s) for o, s in zip(os, ss, strict=True)]
                for os, ss in zip(obs, scores.tolist(), strict=True)]

    def query_ids(self, t: int, texts: list[str], k: int) -> np.ndarray:
        if len(texts) == 1:  # one question: the store's own path (no batch made)
            return self.store.retrieve_obs(texts[0], t, k)[None, :]
        ranked = self.store.rank_many(texts, t, k)
        if ranked is not None:
            return self.store.cols.obs_id[ranked[0]]
        return self.store.obs_in_turn(texts, t, k)  # in turn

    def tick(self, t: int) -> None:
        self.store.tick(t)

    def ignores_ticks(self) -> bool:
        """``IgnoresTicks``: the store's answer, unless a subclass has a ``tick`` of its
        own."""
        return type(self).tick is StoreAdapter.tick and self.store.ticks_change_nothing()

    def holds(self, obs_id: int) -> bool:
        return self.store.holds(obs_id)

    def size(self) -> int:
        return self.store.size

    def tokens(self) -> int:
        return self.store.live_tokens

    def forgotten(self) -> dict[str, int]:
        return self.store.forget_log.counts()


class ReferenceAdapter(StoreAdapter):
    """The store with one registered policy, and its extractor's diagnostics."""

    def linked_slot(self, obs_id: int) -> str | None:
        return self.store.slot_of(obs_id)


class PrefetchingMixin:
    """Offers ``prefetch`` (``Prefetches``) for a store whose embedder batches."""

    store: MemoryStore

    def prefetch(self, texts: list[str]) -> None:
        embedder = self.store.embedder
        assert isinstance(embedder, BatchEmbedder)
        embedder.prefetch(texts)


class HintedMixin:
    """Offers ``hint_truth`` (``TakesTruthHints``) for a harness-side extractor."""

    store: MemoryStore

    def hint_truth(self, slot: str | None, seed: int, obs_id: int) -> None:
        extractor = self.store.extractor
        assert isinstance(extractor, HarnessExtractor)
        extractor.hint(slot, seed, obs_id)


class PrefetchingStoreAdapter(PrefetchingMixin, StoreAdapter):
    """A store adapter whose embedder batches."""


class PrefetchingReference(PrefetchingMixin, ReferenceAdapter):
    """The reference adapter with a batching embedder."""


class HintedReference(HintedMixin, ReferenceAdapter):
    """The reference adapter with a harness-side extractor."""


class PrefetchingHintedReference(PrefetchingMixin, HintedMixin, ReferenceAdapter):
    """The reference adapter with a batching embedder and a harness-side extractor."""


def reference_adapter(store: MemoryStore) -> ReferenceAdapter:
    """The reference adapter offering exactly the capabilities its store has: batched
    prefetch for a batching embedder (no text lists per block otherwise), truth hints
    for a harness-side extractor."""
    batching = isinstance(store.embedder, BatchEmbedder)
    hinted = isinstance(store.extractor, HarnessExtractor)
    cls = {(False, False): ReferenceAdapter, (True, False): PrefetchingReference,
           (False, True): HintedReference, (True, True): PrefetchingHintedReference}
    return cls[batching, hinted](store)


def build_reference(policy_cls: type[Policy]) -> Callable[..., ReferenceAdapter]:
    def build(policy_params: Any, store_params: StoreParams, vocab: Vocabulary) -> ReferenceAdapter:
        make_embedder = lookup(EMBEDDERS, store_params.embedder, "embedder")
        make_extractor = lookup(EXTRACTORS, store_params.extractor, "extractor")
        try:
            # a learned policy loads its weights here: a bad file is one line too
            policy = policy_cls(policy_params)
            embedder = make_embedder()  # minilm: a missing model package is one line too
            extractor = make_extractor(Lexicon(vocab.entities, vocab.phrases))
            if isinstance(extractor, HarnessExtractor):
                extractor.configure(store_params.extract_miss, store_params.extract_false_merge)
            # the backend (store.backend / store.path) is created here: a path that
            # exists already is a one-line error too
            store = MemoryStore(policy, embedder, extractor, store_params)
        except ValueError as exc:
            raise FbenchError(str(exc)) from None
        return reference_adapter(store)

    return build
