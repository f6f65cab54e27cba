"""The learned models: the slot tagger and the learned-forget MLP.

They must imitate their teachers (the keyword teacher, the retention rule), ship
weights that load without training, and be reproducible bit-for-bit by retraining.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from collections import Counter
from typing import Any

import numpy as np
import pytest
import torch

import runner.train.forget
import runner.train.tagger
import workloads
from memcore.embed import HashingEmbedder
from memcore.extract import EXTRACTORS, Lexicon
from memcore.extract.tagger import LearnedTagger, shipped_tagger
from memcore.learned.forget_net import forget_features
from memcore.learned.weights import weights_path
from memcore.policies import POLICIES
from memcore.policies.learned_forget import (
    LearnedForget,
    LearnedForgetParams,
    shipped_forget_net,
)
from memcore.store import MemoryStore
from runner.train import TRAINERS, weight_differences
from runner.train.common import deterministic
from runner.train.forget import rule_log_retention, rule_strength

CONTRADICTION = workloads.WORKLOADS["contradiction"]


def _lexicon() -> Lexicon:
    vocab = CONTRADICTION.vocabulary()
    return Lexicon(vocab.entities, vocab.phrases)


def _seed0_observations() -> list[workloads.Observe]:
    events = CONTRADICTION.events(0, 3000, CONTRADICTION.Params())
    return [ev for ev in events if isinstance(ev, workloads.Observe)]


# -- (a) the tagger imitates the teacher ------------------------------------------


def test_tagger_agrees_with_teacher_on_seed0_stream() -> None:
    """Prevents a tagger that drifts from the keyword teacher: it must link every
    fact and canonical update to its true slot and never link a hard update or a
    distractor, on a stream it was not trained on (training seeds are 1..20)."""
    lexicon = _lexicon()
    tagger = EXTRACTORS["tagger"](lexicon)
    teacher = EXTRACTORS["teacher"](lexicon)
    total: Counter[str] = Counter()
    linked: Counter[str] = Counter()
    disagreements = []
    for ev in _seed0_observations():
        slot = tagger.extract(ev.text)
        if slot != teacher.extract(ev.text):
            disagreements.append((ev.text, slot))
        total[ev.truth.kind] += 1
        if ev.truth.kind in ("fact", "canonical_update"):
            linked[ev.truth.kind] += slot == ev.truth.slot  # linked to the right slot
        else:
            linked[ev.truth.kind] += slot is not None  # linked to anything at all
    assert disagreements == []
    assert total == {"fact": 60, "canonical_update": 308, "hard_update": 221, "distractor": 2044}
    assert linked["fact"] == 60
    assert linked["canonical_update"] >= 0.99 * total["canonical_update"]
    assert linked["hard_update"] == 0
    assert linked["distractor"] == 0


def test_the_numpy_tagger_answers_as_the_torch_network() -> None:
    """Prevents the torch-free tagger from answering differently from the network it
    was trained as: on every distinct observation of 30 seeds of both contradiction
    streams, the same slot or none, and no answer within 1e-5 of a decision boundary
    (top class against the next, and against MIN_PROB), far above any rounding."""
    from memcore.extract.tagger import MIN_PROB
    from memcore.learned.tagger_net import featurize, tagger_from_weights
    from memcore.learned.weights import load_weights

    net, labels = tagger_from_weights(load_weights(weights_path("tagger")))
    ours = shipped_tagger()
    texts = set()
    for name in ("contradiction", "contradiction.retrievable"):
        w = workloads.WORKLOADS[name]
        for seed in range(30):
            texts.update(ev.text for ev in w.events(seed, 3000, w.Params())
                         if isinstance(ev, workloads.Observe))
    assert len(texts) > 2000
    margins = []
    for text in sorted(texts):
        ids = featurize(text, ours.buckets)
        with torch.inference_mode():
            p = torch.softmax(net(torch.tensor(ids), torch.zeros(1, dtype=torch.long))[0], 0)
        top2 = torch.topk(p, 2).values
        c = int(p.argmax())
        expected = labels[c - 1] if c > 0 and float(p[c]) >= MIN_PROB else None
        assert ours.predict(text) == expected, text
        margins.append(min(float(top2[0] - top2[1]), abs(float(p[c]) - MIN_PROB)))
    assert min(margins) > 1e-5


def test_tagger_answers_no_slot_for_empty_text() -> None:
    """Prevents an empty or punctuation-only text from being tagged by the bias alone."""
    tagger = EXTRACTORS["tagger"](_lexicon())
    assert tagger.extract("") is None
    assert tagger.extract("?!") is None


# -- (e) a lexicon the tagger was not trained for -----------------------------------


def test_tagger_rejects_another_vocabulary() -> None:
    """Prevents the shipped tagger from silently answering labels of a vocabulary it
    was never trained on: the error must say so and point to the alternatives."""
    other = Lexicon(("zed",), (("shoe size", "shoe_size"),))
    with pytest.raises(ValueError, match="trained for another vocabulary") as err:
        EXTRACTORS["tagger"](other)
    assert "teacher" in str(err.value)
    assert "\n" not in str(err.value)


def test_tagger_rejects_reordered_vocabulary() -> None:
    """Prevents a permuted entity list from mapping class ids to the wrong slots."""
    vocab = CONTRADICTION.vocabulary()
    with pytest.raises(ValueError, match="another vocabulary"):
        EXTRACTORS["tagger"](Lexicon(tuple(reversed(vocab.entities)), vocab.phrases))


# -- (b) loading never trains -------------------------------------------------------


def test_loading_shipped_weights_never_trains(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a loader that falls back to training (slow, and not the shipped
    model): with every optimizer, backward and trainer disabled, a fresh load of
    both models must still build and answer."""

    def forbidden(*args: object, **kwargs: object) -> Any:
        raise AssertionError("loading the shipped weights must not train")

    monkeypatch.setattr(torch.optim, "Adam", forbidden)
    monkeypatch.setattr(torch.optim, "LBFGS", forbidden)
    monkeypatch.setattr(torch.Tensor, "backward", forbidden)
    monkeypatch.setattr(runner.train.tagger, "train_tagger", forbidden)
    monkeypatch.setattr(runner.train.forget, "train_forget", forbidden)
    for name, trainer in TRAINERS.items():
        monkeypatch.setitem(TRAINERS, name, dataclasses.replace(trainer, train=forbidden))
    shipped_tagger.cache_clear()
    shipped_forget_net.cache_clear()
    try:
        tagger = EXTRACTORS["tagger"](_lexicon())
        assert tagger.extract("Alice's home city is now boston.") == "alice.home_city"
        policy = POLICIES["learned_forget"]()
        store = MemoryStore(policy, HashingEmbedder(), tagger)
        store.add("Alice's home city is boston.", 0)
        assert store.retrieve("What is Alice's home city?", now=1)
    finally:
        shipped_tagger.cache_clear()
        shipped_forget_net.cache_clear()


def test_shipped_models_load_once_per_process() -> None:
    """Prevents a per-job reload of the weights (each job builds its own extractor
    and policy; they must share one loaded network)."""
    assert LearnedTagger(_lexicon())._model is LearnedTagger(_lexicon())._model
    assert LearnedForget()._table is LearnedForget()._table


def test_shipped_weight_files_are_small() -> None:
    """Prevents shipping oversized weights in the package."""
    for name in TRAINERS:
        assert weights_path(name).stat().st_size < 1_000_000


def test_import_memcore_does_not_import_torch() -> None:
    """Prevents `import memcore` from paying torch's import time: the learned models
    import torch on first use only."""
    code = "import sys, memcore; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- (c) retraining reproduces the shipped weights ----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_retraining_reproduces_shipped_weights(name: str) -> None:
    """Prevents shipped weights that nobody can regenerate: retraining must give the
    shipped tensors bit-for-bit (and the same metadata)."""
    assert weight_differences(name) == []


def test_deterministic_context_restores_torch_state() -> None:
    """Prevents training from leaking global torch settings (thread count,
    deterministic algorithms, RNG state) into the process that runs jobs."""
    threads = torch.get_num_threads()
    det = torch.are_deterministic_algorithms_enabled()
    rng = torch.get_rng_state()
    with deterministic(123):
        assert torch.get_num_threads() == 1
        assert torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == threads
    assert torch.are_deterministic_algorithms_enabled() == det
    assert torch.equal(torch.get_rng_state(), rng)


# -- (d) learned_forget imitates its rule -------------------------------------------


def _grid() -> torch.Tensor:
    ages = np.arange(0.0, 6001.0, 10.0)
    imps = np.linspace(0.0, 1.0, 21)
    age, imp = (a.ravel() for a in np.meshgrid(ages, imps, indexing="ij"))
    blocks = [
        forget_features(age, imp, np.full(age.shape, sup), np.full(age.shape, slotted))
        for sup, slotted in ((False, True), (True, True), (False, False))
    ]
    return torch.from_numpy(np.concatenate(blocks))


def test_forget_net_prune_decisions_match_rule() -> None:
    """Prevents a forget network that no longer imitates its rule: away from the
    decision boundary (|log R - ln 0.02| > 0.1) its prune decision must agree with
    the rule on at least 98% of a grid of ages, importances and cases."""
    x = _grid()
    with torch.inference_mode():
        predicted = shipped_forget_net()(x)[:, 1]
    rule = rule_log_retention(x).float()
    threshold = math.log(0.02)
    away = (rule - threshold).abs() > 0.1
    agree = ((predicted < threshold) == (rule < threshold))[away].float().mean().item()
    assert agree >= 0.98


def test_forget_net_strength_matches_rule() -> None:
    """Prevents ranking drift: a fresh entry must rank at ~1 whatever its age (so the
    MLP does not reorder correct facts) and a superseded one near 0.05."""
    x = _grid()
    with torch.inference_mode():
        strength = torch.sigmoid(shipped_forget_net()(x)[:, 0]).double()
    target = rule_strength(x)
    fresh = target == 1.0
    assert strength[fresh].min().item() > 0.999
    assert (strength[~fresh] - 0.05).abs().max().item() < 0.03


def test_learned_forget_prunes_unslotted_after_about_313_turns() -> None:
    """Prevents a lifetime regression for unslotted entries (exp(-age/80) < 0.02 at
    age 313) while a slotted fact outlives them (Ebbinghaus, S >= 150)."""
    store = MemoryStore(POLICIES["learned_forget"](), HashingEmbedder(),
                        EXTRACTORS["teacher"](_lexicon()))
    store.add("Alice's home city is boston.", 0, obs_id=0)
    for t in range(1, 1000):
        store.add("The weather was surprisingly cheerful today.", t, obs_id=t)
    live = [t for t in range(1, 1000) if store.holds(t)]
    oldest_age = 999 - min(live)
    assert 295 <= oldest_age <= 330
    assert live == list(range(min(live), 1000))
    assert store.holds(0)
    assert all(r.reason == "learned" for r in store.forget_log.records())


def test_learned_forget_params_are_validated() -> None:
    """Prevents a threshold outside (0, 1) from silently pruning all or nothing."""
    for bad in (0.0, 1.0, -0.1, 2.0):
        with pytest.raises(ValueError, match="prune_threshold"):
            LearnedForgetParams(prune_threshold=bad)
    assert POLICIES["learned_forget"].Params is LearnedForgetParams


def test_learned_forget_seed0_job_stays_bounded_and_scores_like_ebbinghaus() -> None:
    """Prevents the learned policy from hoarding or from hurting retrieval: on the
    seed-0 stream it must end near the rule's ~319 entries (the published run: 306)
    and match Ebbinghaus's recall and contradiction rate."""
    results: dict[str, tuple[int, float, float]] = {}
    for policy in ("learned_forget", "ebbinghaus"):
        store = MemoryStore(POLICIES[policy](), HashingEmbedder(),
                            EXTRACTORS["tagger"](_lexicon()))
        truth = {}
        recalled = contradicted = queries = 0
        for i, ev in enumerate(CONTRADICTION.events(0, 3000, CONTRADICTION.Params())):
            if isinstance(ev, workloads.Observe):
                store.add(ev.text, ev.t, obs_id=i)
                truth[i] = ev.truth
            elif isinstance(ev, workloads.Query):
                hits = [truth[h.obs_id] for h in store.retrieve(ev.text, now=ev.t, k=5)]
                on_slot = [h.value for h in hits if h.slot == ev.truth.slot]
                recalled += ev.truth.value in on_slot
                contradicted += any(v != ev.truth.value for v in on_slot)
                queries += 1
        results[policy] = (store.size, recalled / queries, contradicted / queries)
    size, recall, contradiction = results["learned_forget"]
    assert 250 <= size <= 400
    assert recall == pytest.approx(results["ebbinghaus"][1], abs=0.01)
    assert contradiction == pytest.approx(results["ebbinghaus"][2], abs=0.01)
