"""The extractor axis: keyword, learned, and the harness-side oracle and noisy
extractors (misses and false merges), on small seeded runs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memcore import EXTRACTORS, Lexicon
from memcore.extract.tagger import LearnedTagger
from memcore.extract.teacher import KeywordTeacher
from runner.errors import FbenchError
from runner.job.extractors import NoisyExtractor, uniforms
from runner.job.run import run_job
from runner.spec.resolve import make_spec

SEEDS = (0, 1, 2)


def mean_metric(policy: str, metric: str, **params: object) -> float:
    vals = [run_job(make_spec("contradiction", policy, s, horizon=1500,
                              params=list(params.items()))).metrics()[metric] for s in SEEDS]
    return float(np.mean(vals))


def test_names_of_the_axis() -> None:
    """Prevents the axis' documented names (keyword, learned, oracle, noisy) from
    missing or pointing at the wrong extractor."""
    assert EXTRACTORS["keyword"] is KeywordTeacher and EXTRACTORS["learned"] is LearnedTagger
    assert {"oracle", "noisy"} <= set(EXTRACTORS)


def test_oracle_takes_last_write_wins_contradiction_to_zero() -> None:
    """Prevents an oracle that is not perfect: with every update linked to its slot,
    supersession leaves no stale value to retrieve."""
    assert mean_metric("last_write_wins", "contradiction_rate", extractor="oracle") == 0.0
    assert mean_metric("last_write_wins", "extract_link_hard", extractor="oracle") == 1.0
    assert mean_metric("last_write_wins", "contradiction_rate", extractor="keyword") > 0.1


def test_misses_raise_contradiction_monotonically() -> None:
    """Prevents a miss rate that does not act: more unlinked updates, more stale values
    left for retrieval (the seed's floor, as a dial)."""
    rates = [mean_metric("last_write_wins", "contradiction_rate", extractor="noisy",
                         extract_miss=m) for m in (0.0, 0.2, 0.5, 0.8)]
    assert rates[0] == 0.0
    assert all(a < b for a, b in itertools.pairwise(rates)), rates


def test_false_merges_make_supersession_forget_true_facts() -> None:
    """Prevents false merges that cost nothing: supersession-based policies delete
    facts that are still true (false-forget > 0), the hoarder does not."""
    for policy in ("last_write_wins", "ebbinghaus"):
        assert mean_metric(policy, "false_forget_rate", extractor="noisy",
                           extract_false_merge=0.1) > 0.0, policy
        assert mean_metric(policy, "false_forget_rate", extractor="oracle") == 0.0, policy
    assert mean_metric("keep_all", "false_forget_rate", extractor="noisy",
                       extract_false_merge=0.1) == 0.0


def test_noise_is_a_pure_function_of_seed_and_observation() -> None:
    """Prevents noise that depends on call order or process (irreproducible jobs), and a
    false merge that leaves its entity or keeps its attribute."""
    lex = Lexicon(("alice", "bob"), (("home city", "home_city"), ("job title", "job_title"),
                                     ("pet", "pet")))
    a, b = NoisyExtractor(lex), NoisyExtractor(lex)
    for ex in (a, b):
        ex.configure(0.3, 0.4)
    order = list(range(200))
    out_a = {}
    for i in order:
        a.hint("alice.home_city", 7, i)
        out_a[i] = a.extract("text")
    for i in reversed(order):
        b.hint("alice.home_city", 7, i)
        assert b.extract("text") == out_a[i]
    counts = {v: sum(1 for x in out_a.values() if x == v) for v in set(out_a.values())}
    assert set(counts) <= {None, "alice.home_city", "alice.job_title", "alice.pet"}
    assert 0.15 < counts.get(None, 0) / 200 < 0.45
    assert uniforms(7, 3) == uniforms(7, 3) != uniforms(8, 3)


def test_unhinted_text_gets_no_slot() -> None:
    """Prevents an oracle reusing the previous observation's truth for a text the harness
    did not hint (e.g. a store fed directly)."""
    ex = EXTRACTORS["oracle"](Lexicon(("alice",), (("pet", "pet"),)))
    ex.hint("alice.pet", 0, 0)  # type: ignore[attr-defined]
    assert ex.extract("a") == "alice.pet" and ex.extract("b") is None


@pytest.mark.parametrize("params", [
    [("extract_miss", "0.2")],
    [("extractor", "noisy"), ("extract_miss", "0.7"), ("extract_false_merge", "0.5")],
    [("extractor", "noisy"), ("extract_miss", "-0.1")],
])
def test_bad_rates_are_one_line_errors(params: list[tuple[str, str]]) -> None:
    """Prevents rates that silently do nothing (without extractor=noisy) or are not a
    probability split."""
    with pytest.raises(FbenchError) as err:
        make_spec("contradiction", "keep_all", 0, horizon=10, params=params)
    assert "\n" not in str(err.value) and "extract_" in str(err.value)


def test_the_keyword_teachers_kept_answers_are_its_own(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    """Prevents the teacher's per-process answers (shared by the extractors of one
    lexicon) giving a text another lexicon's slot, or an answer a fresh search would not:
    kept, dropped when full, and looked up again, every answer equals ``_find``'s."""
    from memcore.extract import teacher

    a = Lexicon(("alice", "bob"), (("home city", "city"),))
    b = Lexicon(("alice", "bob"), (("job title", "job"),))
    texts = ["Alice's home city is Paris.", "Bob's job title is chef.", "nothing here",
             "Alice's home city is Paris."]
    monkeypatch.setattr(teacher, "ANSWERS_KEPT", 2)
    for lexicon, want in ((a, ["alice.city", None, None, "alice.city"]),
                          (b, [None, "bob.job", None, None])):
        first, second = KeywordTeacher(lexicon), KeywordTeacher(lexicon)
        assert [first.extract(t) for t in texts] == want
        assert [second.extract(t) for t in texts] == [first._find(t) for t in texts] == want
        assert len(teacher._answers(lexicon)) <= 2
