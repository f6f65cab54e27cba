"""Train the slot tagger to imitate the keyword teacher on ``contradiction`` texts.

Training texts are the distinct observation texts of the workload's streams for
``TRAIN_SEEDS`` (queries are never stored, so never tagged), sorted; labels are the
teacher's slots (class 0 = no slot). Full-batch Adam under ``deterministic``, in the
pinned subprocess of ``runner.train.isolated``.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

import workloads
from memcore.extract.base import Lexicon
from memcore.extract.teacher import KeywordTeacher
from memcore.learned.tagger_net import BUCKETS, HIDDEN, LABELS_KEY, TaggerNet, featurize
from runner.train.common import deterministic

WORKLOAD = "contradiction"
TRAIN_SEEDS = tuple(range(1, 21))
HORIZON = 3000
SEED = 0
STEPS = 300
LR = 0.02


def training_lexicon() -> Lexicon:
    """The lexicon the shipped tagger is trained for (the workload's vocabulary)."""
    vocab = workloads.WORKLOADS[WORKLOAD].vocabulary()
    return Lexicon(vocab.entities, vocab.phrases)


def training_texts() -> list[str]:
    """Distinct observation texts of the training streams, sorted."""
    w = workloads.WORKLOADS[WORKLOAD]
    texts: set[str] = set()
    for seed in TRAIN_SEEDS:
        for ev in w.events(seed, HORIZON, w.Params()):
            if isinstance(ev, workloads.Observe):
                texts.add(ev.text)
    return sorted(texts)


def teacher_labels(texts: list[str], lexicon: Lexicon) -> list[int]:
    """Class of each text under the keyword teacher: 0 = no slot, i + 1 = ``slots()[i]``."""
    teacher = KeywordTeacher(lexicon)
    index = {slot: i + 1 for i, slot in enumerate(lexicon.slots())}
    out = []
    for text in texts:
        slot = teacher.extract(text)
        out.append(0 if slot is None else index[slot])
    return out


def _batch(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat feature ids of ``texts`` and, for each id, the index of its text."""
    feats = [featurize(t, BUCKETS) for t in texts]
    ids = torch.tensor([i for f in feats for i in f], dtype=torch.long)
    bags = torch.tensor([b for b, f in enumerate(feats) for _ in f], dtype=torch.long)
    return ids, bags


def _logits(net: TaggerNet, ids: torch.Tensor, bags: torch.Tensor, n: int) -> torch.Tensor:
    """``net(ids, offsets)`` spelled with ATen's own indexing kernels (the embedding
    bag's rows gathered, then added into their bags in order) instead of
    ``EmbeddingBag``, whose CPU kernel is fbgemm's, generated for the CPU it runs on."""
    rows = net.bag.weight.index_select(0, ids)
    hidden = torch.zeros(n, rows.shape[1]).index_add(0, bags, rows)
    return net.out(torch.relu(hidden + net.bias))


def train_tagger() -> dict[str, torch.Tensor]:
    """Train the tagger from scratch; returns its state dict (deterministic)."""
    lexicon = training_lexicon()
    texts = training_texts()
    target = torch.tensor(teacher_labels(texts, lexicon), dtype=torch.long)
    ids, bags = _batch(texts)
    with deterministic(SEED):
        net = TaggerNet(BUCKETS, HIDDEN, len(lexicon.slots()) + 1)
        opt = torch.optim.Adam(net.parameters(), lr=LR)
        for _ in range(STEPS):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(_logits(net, ids, bags, len(texts)), target)
            loss.backward()
            opt.step()
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def tagger_metadata() -> dict[str, Any]:
    """The metadata shipped with the tagger: its label list and provenance."""
    return {
        LABELS_KEY: list(training_lexicon().slots()),
        "trained_on": {"workload": WORKLOAD, "seeds": list(TRAIN_SEEDS), "horizon": HORIZON,
                       "teacher": "teacher", "trainer": "runner.train.tagger"},
    }
