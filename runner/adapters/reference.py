"""The reference adapter: memcore's store with one registered policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcore import EMBEDDERS, EXTRACTORS, POLICIES, Lexicon, MemoryStore, StoreParams
from runner import extractors as _extractors  # noqa: F401  (registers oracle, noisy)
from runner.adapters.base import Hit, MemoryKind, register_memory
from runner.errors import FbenchError, lookup
from workloads import Vocabulary


class StoreAdapter:
    """A ``memcore.MemoryStore`` behind the harness's interface; hits carry the
    harness's observation ids. The reference adapter and the oracle both build on it."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        batch = getattr(store.embedder, "prefetch", None)
        if batch is not None:  # a batching embedder (minilm) sees each block's texts
            self.prefetch = batch

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.store.add(text, t, obs_id, meta)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        return [Hit(h.obs_id, h.score) for h in self.store.retrieve(text, t, k)]

    def tick(self, t: int) -> None:
        self.store.tick(t)

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

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store)
        hint = getattr(store.extractor, "hint", None)
        if hint is not None:  # a harness-side extractor (oracle, noisy) takes the truth
            self.hint_truth = hint

    def linked_slot(self, obs_id: int) -> str | None:
        return self.store.slot_of(obs_id)


def build_reference(policy_name: str) -> Any:
    def build(policy_params: Any, store_params: StoreParams, vocab: Vocabulary) -> ReferenceAdapter:
        make_embedder = lookup(EMBEDDERS, store_params.embedder, "embedder")
        make_extractor = lookup(EXTRACTORS, store_params.extractor, "extractor")
        try:
            # a learned policy loads its weights here: a bad file is one line too
            policy = POLICIES[policy_name](policy_params)
            embedder = make_embedder()  # minilm: a missing model package is one line too
            extractor = make_extractor(Lexicon(vocab.entities, vocab.phrases))
            configure = getattr(extractor, "configure", None)
            if configure is not None:
                configure(store_params.extract_miss, store_params.extract_false_merge)
            # the backend (store.backend / store.path) is created here: a path that
            # exists already is a one-line error too
            store = MemoryStore(policy, embedder, extractor, store_params)
        except ValueError as exc:
            raise FbenchError(str(exc)) from None
        return ReferenceAdapter(store)

    return build


for _name, _cls in sorted(POLICIES.items()):
    register_memory(
        MemoryKind(
            name=_name,
            family="reference",
            description=_cls.description,
            Params=_cls.Params,
            StoreParams=StoreParams,
            build=build_reference(_name),
        )
    )
