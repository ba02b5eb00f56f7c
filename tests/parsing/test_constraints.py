"""Constrained parsing: every member and the ensemble keep the forced arcs (issue 12).

Property tests on real sentences (Wolof, tiny models trained once per module): random
constraint sets drawn from the gold tree are always contained in a valid single-rooted tree;
constraints drawn from the member's own unconstrained output change nothing. Seeded numpy
randomness over many cases (hypothesis is not installed).
"""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest

from parsing import constraints as constraints_module
from parsing.base import BaseParser
from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints, force_scores, forced_labels, keep_previous_labels, repair_heads
from parsing.decoders.first_order import chu_liu_edmonds, eisner
from parsing.decoders.second_order import eisner_second_order, second_order_rearrange
from parsing.members import build_member
from parsing.pipeline import ModelBundle, load_models, train_models
from parsing.trees import is_tree
from parsing.types import Parse, Sentence

Data = tuple[list[Sentence], list[Sentence]]

TINY = {
    "graph1": {"max_iter": 1, "n_bits": 16},
    "graph2": {"max_iter": 1, "n_bits": 16},
    "eager": {"epochs": 1, "n_bits": 16},
    "eager-rtl": {"epochs": 1, "n_bits": 16},
    "swap": {"epochs": 1, "n_bits": 16},
    "swap-rtl": {"epochs": 1, "n_bits": 16},
    "hybrid": {"epochs": 1, "n_bits": 16},
    "hybrid-rtl": {"epochs": 1, "n_bits": 16},
    "neural": {"max_epochs": 1, "hidden": 32, "word_dim": 16, "beam_size": 3},
}
IMPLEMENTED = ["graph1", "graph2", "eager", "eager-rtl", "swap", "swap-rtl", "hybrid", "hybrid-rtl", "neural"]


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> Data:
    """40 Wolof training sentences and 24 short dev sentences (3-25 words)."""
    source = ud_root / "UD_Wolof-WTB"
    train = load_sentences(source / "wo_wtb-ud-train.conllu")[:40]
    dev = [s for s in load_sentences(source / "wo_wtb-ud-dev.conllu") if 3 <= len(s) <= 25][:24]
    return train, dev


_MODELS: dict[str, BaseParser] = {}


def fitted(name: str, train: list[Sentence]) -> BaseParser:
    if name not in _MODELS:
        _MODELS[name] = build_member(name, **TINY[name]).fit(train)
    return _MODELS[name]


def random_constraints(sentence: Sentence, rng: np.random.Generator, *, labels: bool) -> Constraints:
    """A random subset of the gold arcs (0..n words), with their labels when ``labels``."""
    n = len(sentence)
    words = rng.choice(np.arange(1, n + 1), size=int(rng.integers(0, n + 1)), replace=False)
    return Constraints.from_tree(sentence.heads, sentence.deprels if labels else None, words)


def assert_kept(heads: np.ndarray, deprels: list[str], forced: Constraints) -> None:
    assert is_tree(heads) and np.count_nonzero(heads[1:] == 0) == 1
    for dep, head in forced.heads.items():
        assert heads[dep] == head, (dep, head, heads.tolist())
    for dep, label in forced.labels.items():
        assert deprels[dep] == label


# ------------------------------------------------------------------ the module's own pieces


def test_validate_rejects_what_no_tree_can_hold() -> None:
    for bad in ({4: 1}, {1: 1}, {1: 2, 2: 1}, {1: 0, 2: 0}, {1: 5}):
        with pytest.raises(ValueError):
            Constraints(bad).validate(3)
    Constraints({1: 2, 2: 0, 3: 2}, {3: "obj"}).validate(3)


def test_forced_decoders_never_pick_a_forbidden_arc() -> None:
    rng = np.random.default_rng(0)
    for _ in range(150):
        n = int(rng.integers(2, 9))
        scores = rng.normal(size=(n + 1, n + 1))
        gold = chu_liu_edmonds(rng.normal(size=(n + 1, n + 1)))
        gold_projective = eisner(rng.normal(size=(n + 1, n + 1)))
        for tree, decode in ((gold, chu_liu_edmonds), (gold_projective, eisner)):
            words = rng.choice(np.arange(1, n + 1), size=int(rng.integers(0, n + 1)), replace=False)
            forced = Constraints.from_tree(tree, None, words)
            heads = decode(force_scores(scores, forced))
            assert_kept(heads, [""] * (n + 1), forced)
        words = rng.choice(np.arange(1, n + 1), size=int(rng.integers(0, n + 1)), replace=False)
        forced = Constraints.from_tree(gold_projective, None, words)
        siblings = rng.normal(size=(n + 1,) * 3)
        heads = eisner_second_order(force_scores(scores, forced), siblings)
        assert_kept(heads, [""] * (n + 1), forced)
        forced = Constraints.from_tree(gold, None, words)  # possibly non-projective
        start = chu_liu_edmonds(force_scores(scores, forced))
        heads = second_order_rearrange(start, force_scores(scores, forced), siblings)
        assert_kept(heads, [""] * (n + 1), forced)


def test_repair_keeps_a_satisfying_tree_and_fixes_a_broken_one() -> None:
    heads = np.array([-1, 2, 0, 2, 3])
    assert repair_heads(heads, Constraints({4: 3})).tolist() == heads.tolist()
    repaired = repair_heads(heads, Constraints({2: 4, 4: 0}))
    assert_kept(repaired, [""] * 5, Constraints({2: 4, 4: 0}))
    assert repaired[1] == 2  # the untouched arc stays


# ------------------------------------------------------------------ every member


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_member_keeps_random_gold_constraints(name: str, wolof: Data) -> None:
    train, dev = wolof
    parser = fitted(name, train)
    rng = np.random.default_rng(len(name))
    for round_ in range(3):
        forced = [random_constraints(s, rng, labels=round_ > 0) for s in dev]
        parses = parser.predict_constrained(dev, forced)
        for parse, constraint in zip(parses, forced, strict=True):
            assert_kept(parse.heads, parse.deprels, constraint)
        given = parser.predict_constrained(dev, forced, free=parser.predict(dev))  # parsed once already
        assert [p.heads.tolist() for p in given] == [p.heads.tolist() for p in parses]
        assert [p.deprels for p in given] == [p.deprels for p in parses]


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_member_output_is_a_fixed_point(name: str, wolof: Data) -> None:
    train, dev = wolof
    parser = fitted(name, train)
    free = parser.predict(dev)
    rng = np.random.default_rng(7)
    forced = [random_constraints(Sentence.from_words(s.forms[1:], heads=p.heads[1:].tolist(),
                                                     deprels=p.deprels[1:]), rng, labels=True)
              for s, p in zip(dev, free, strict=True)]
    again = parser.predict_constrained(dev, forced)
    for before, after in zip(free, again, strict=True):
        assert after.heads.tolist() == before.heads.tolist()
        assert after.deprels == before.deprels


# ------------------------------------------------------------------ the ensemble


@pytest.fixture(scope="module")
def bundle(wolof: Data, tmp_path_factory: pytest.TempPathFactory) -> ModelBundle:
    """Three tiny members (one graph, two transition) and arc voting."""
    train, _ = wolof
    names = ["graph1", "hybrid", "swap-rtl"]
    out = tmp_path_factory.mktemp("constrained-bundle")
    train_models(train, None, out, names=names, params={name: TINY[name] for name in names},
                 ensemble="vote-uniform")
    return load_models(out)


def test_ensemble_keeps_random_gold_constraints(bundle: ModelBundle, wolof: Data) -> None:
    _, dev = wolof
    rng = np.random.default_rng(11)
    for round_ in range(3):
        forced = [random_constraints(s, rng, labels=round_ != 1) for s in dev]
        members, ensemble = bundle.parse_constrained(dev, forced)
        assert set(members) == set(bundle.parsers)
        for i, constraint in enumerate(forced):
            assert_kept(ensemble[i].heads, ensemble[i].deprels, constraint)
            for parses in members.values():
                assert_kept(parses[i].heads, parses[i].deprels, constraint)


def test_ensemble_output_is_a_fixed_point(bundle: ModelBundle, wolof: Data) -> None:
    _, dev = wolof
    _, free = bundle.parse_with_ensemble(dev)
    rng = np.random.default_rng(5)
    forced = [Constraints.from_tree(p.heads, p.deprels, rng.choice(np.arange(1, len(p)), size=len(p) // 2,
                                                                   replace=False))
              for p in free]
    _, again = bundle.parse_constrained(dev, forced)
    assert [p.heads.tolist() for p in again] == [p.heads.tolist() for p in free]


def test_constraints_that_do_not_fit_are_refused(bundle: ModelBundle, wolof: Data) -> None:
    _, dev = wolof
    with pytest.raises(ValueError, match="sentence 0"):
        bundle.parse_constrained(dev[:1], [Constraints({len(dev[0]) + 1: 0})])


def test_previous_labels_stay_on_arcs_that_did_not_move() -> None:
    before = Parse(np.array([-1, 2, 0, 2, 2, 6, 2]), ["", "nsubj", "root", "obj", "obl", "det", "obl"])
    after = Parse(np.array([-1, 2, 0, 2, 3, 6, 2]), ["", "obj", "root", "iobj", "nmod", "amod", "advmod"])
    kept = keep_previous_labels(after, before, Constraints({4: 3}))
    # word 4 moved from 2 to 3: its new label stays, and so do the new labels of its old
    # siblings (1, 3, 6, under 2); word 5 (under 6, whose head stayed) keeps "det"
    assert kept.deprels == ["", "obj", "root", "iobj", "nmod", "det", "advmod"]
    nothing_moved = Parse(np.array([-1, 2, 0, 2, 2, 6, 2]), after.deprels)
    assert keep_previous_labels(nothing_moved, before, Constraints({})).deprels == before.deprels
    forced = keep_previous_labels(nothing_moved, before, Constraints({3: 2}, {3: "iobj"}))
    # a forced label the tree did not have relabels the word's siblings, not the far word 5
    assert forced.deprels == ["", "obj", "root", "iobj", "nmod", "det", "advmod"]


def test_constraints_are_frozen_and_pickle() -> None:
    import pickle

    forced = Constraints({1: 2, 2: 0}, {1: "nsubj"})
    with pytest.raises(TypeError):
        forced.heads[1] = 0  # type: ignore[index]
    again = pickle.loads(pickle.dumps(forced))
    assert dict(again.heads) == {1: 2, 2: 0} and dict(again.labels) == {1: "nsubj"}


def test_doctests() -> None:
    result = doctest.testmod(constraints_module)
    assert result.attempted and result.failed == 0


def test_a_word_forced_onto_root_takes_the_root_label_not_a_dependents_vote() -> None:
    # The ensemble had word 1 at ROOT; the human moves it under word 2, so word 2 (whose votes
    # all named it an nmod of word 1) becomes the root word: it must be labelled root.
    preferred = Parse(np.array([-1, 0, 1]), ["", "root", "nmod"])
    labels = forced_labels(np.array([-1, 2, 0]), preferred, ["", "obl", "nmod"], Constraints({1: 2}))
    assert labels == ["", "obl", "root"]
    # with a human label on the word at ROOT, the human label stays
    labels = forced_labels(np.array([-1, 2, 0]), preferred, ["", "obl", "nmod"],
                           Constraints({1: 2, 2: 0}, {2: "parataxis"}))
    assert labels == ["", "obl", "parataxis"]


def test_an_edit_sequence_decodes_only_the_members_that_miss_the_new_arc(
    bundle: ModelBundle, wolof: Data, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The editor's next edit adds an arc: with ``start`` (the members' parses of the previous
    edit) a member whose parse already holds it is not decoded again, and the trees are the ones
    decoding from scratch gives (exactly for the first-order graph member and, but for the
    rare repaired parse, for the guided greedy ones)."""
    _, dev = wolof
    decoded: dict[str, int] = {name: 0 for name in bundle.parsers}
    for name, parser in bundle.parsers.items():
        def counting(sentences: list[Sentence], constraints: list[Constraints], *, free: object = None,
                     _real: object = parser.predict_constrained, _name: str = name) -> list[Parse]:
            decoded[_name] += len(sentences)
            return _real(sentences, constraints, free=free)  # type: ignore[operator, no-any-return]
        monkeypatch.setattr(parser, "predict_constrained", counting)
    same = steps = 0
    without_start = with_start = 0
    for sentence in dev:
        unconstrained = bundle.parse_with_ensemble([sentence])
        wrong = [w for w in range(1, len(sentence) + 1)
                 if unconstrained[1][0].heads[w] != sentence.heads[w]][:4]
        earlier: dict[str, list[Parse]] | None = None
        for step in range(1, len(wrong) + 1):
            forced = Constraints.from_tree(sentence.heads, sentence.deprels, wrong[:step])
            before = sum(decoded.values())
            plain, _ = bundle.parse_constrained([sentence], [forced], unconstrained=unconstrained)
            without_start += sum(decoded.values()) - before
            before = sum(decoded.values())
            reused, tree = bundle.parse_constrained([sentence], [forced], unconstrained=unconstrained,
                                                    start=earlier)
            with_start += sum(decoded.values()) - before
            assert_kept(tree[0].heads, tree[0].deprels, forced)
            for name in bundle.parsers:
                assert_kept(reused[name][0].heads, reused[name][0].deprels, forced)
                steps += 1
                same += plain[name][0].heads.tolist() == reused[name][0].heads.tolist()
            assert plain["graph1"][0].heads.tolist() == reused["graph1"][0].heads.tolist()
            earlier = reused
    assert steps > 30 and with_start < without_start
    assert same / steps >= 0.9, (same, steps)


def test_a_graph_member_keeps_its_arc_scores_for_the_next_parse(wolof: Data, tmp_path: Path) -> None:
    """The editor parses a sentence, then re-parses it after each edit: a graph member scores
    its arcs once (read-only, not saved) and gives the trees a fresh copy of itself gives."""
    train, dev = wolof
    for name in ("graph1", "graph2"):
        parser = fitted(name, train)
        fresh = build_member(name, **TINY[name]).fit(train)
        rng = np.random.default_rng(3)
        forced = [random_constraints(s, rng, labels=True) for s in dev]
        free = parser.predict(dev)
        cache = parser.__dict__["_scores_cache"]
        assert cache is not None and cache[0] is parser.weights_
        kept = list(cache[1].values())
        assert kept and all(not scores.flags.writeable for scores in kept)
        again = parser.predict_constrained(dev, forced)
        expected = fresh.predict_constrained(dev, forced)
        assert [p.heads.tolist() for p in again] == [p.heads.tolist() for p in expected]
        assert [p.deprels for p in again] == [p.deprels for p in expected]
        assert [p.heads.tolist() for p in parser.predict(dev)] == [p.heads.tolist() for p in free]
        parser.save(tmp_path / f"{name}.npz")
        loaded = type(parser).load(tmp_path / f"{name}.npz")
        assert loaded.__dict__.get("_scores_cache") is None
        assert [p.heads.tolist() for p in loaded.predict(dev)] == [p.heads.tolist() for p in free]


@pytest.mark.parametrize("name", ["eager", "hybrid-rtl", "swap"])
def test_a_transition_member_replays_its_last_guided_parse(
    name: str, wolof: Data, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The editor's next edit adds an arc: a transition member replays its last guided parse of
    the sentence up to the first move the new arc changes (scoring only the rest) and gives, bit
    for bit, the parse of a copy of itself that keeps no trace."""
    from parsing.transition import decoding

    train, dev = wolof
    parser = fitted(name, train)
    reference = build_member(name, **TINY[name]).fit(train)
    scored = {"calls": 0}
    real_features = decoding.features  # type: ignore[attr-defined]

    def counting(*args: object) -> object:
        scored["calls"] += 1
        return real_features(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(decoding, "features", counting)
    replayed = fresh = 0
    for sentence in dev:
        free = parser.predict([sentence])[0]
        wrong = [w for w in range(1, len(sentence) + 1) if free.heads[w] != sentence.heads[w]][:4]
        for step in range(1, len(wrong) + 1):
            forced = Constraints.from_tree(sentence.heads, sentence.deprels, wrong[:step])
            reference.__dict__.pop("_trace_cache", None)
            before = scored["calls"]
            expected = reference._parse(sentence, forced)
            fresh += scored["calls"] - before
            before = scored["calls"]
            got = parser._parse(sentence, forced)
            replayed += scored["calls"] - before
            assert got.heads.tolist() == expected.heads.tolist()
            assert got.deprels == expected.deprels
            np.testing.assert_array_equal(got.arc_scores, expected.arc_scores)
    print(f"{name}: {replayed} of {fresh} configurations scored")
    assert fresh > 0 and replayed < 0.9 * fresh, (replayed, fresh)
    reference._parse(dev[0], Constraints.from_tree(dev[0].heads, None, [1]))
    assert len(reference._traces()) >= 1
    reference.fit(train[:20])  # new weights: the traces of the old ones are not replayed
    assert len(reference._traces()) == 0


@pytest.mark.parametrize("name", ["eager", "hybrid-rtl", "swap", "swap-rtl", "neural"])
def test_a_configuration_far_from_the_forced_arcs_allows_every_valid_move(
    name: str, wolof: Data, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guide's shortcut (no forced arc at the stack's top or the buffer's front, or at the
    top two for swap: every valid move allowed) gives the parses the full check gives, under
    random gold constraints; for the greedy members, the same mask at every configuration
    where it is taken, and it is taken at most of them."""
    from parsing.transition import constrained
    from parsing.transition.constrained import ConstraintGuide

    train, dev = wolof
    parser = fitted(name, train)
    rng = np.random.default_rng(11)
    sentences = [s for s in dev if len(s) >= 4]
    picks = [rng.choice(np.arange(1, len(s) + 1), 2, replace=False) for s in sentences]
    forced = [Constraints.from_tree(s.heads, s.deprels, w) for s, w in zip(sentences, picks, strict=True)]
    unparsed = [Parse(np.full(len(s) + 1, -1, dtype=np.intp), [""] * (len(s) + 1)) for s in sentences]

    def parse() -> list[Parse]:
        parser.__dict__.pop("_trace_cache", None)
        return parser.predict_constrained(sentences, forced, free=unparsed)  # every sentence guided

    real_build = ConstraintGuide.build.__func__  # type: ignore[attr-defined]

    def everything_involved(cls: type, *args: object, **kwargs: object) -> ConstraintGuide:
        guide = real_build(cls, *args, **kwargs)
        guide.involved[:] = True
        return guide  # type: ignore[no-any-return]

    with monkeypatch.context() as patch:
        patch.setattr(constrained.ConstraintGuide, "build", classmethod(everything_involved))  # type: ignore[arg-type]
        slow = parse()
    real_allowed, real_quiet = ConstraintGuide.allowed, ConstraintGuide.quiet
    seen = {"quiet": 0, "all": 0}

    def checked(guide: ConstraintGuide, system: object, state: object, valid: np.ndarray) -> np.ndarray:
        fast = real_allowed(guide, system, state, valid)  # type: ignore[arg-type]
        if real_quiet(guide, state):  # type: ignore[arg-type]
            seen["quiet"] += 1
            monkeypatch.setattr(ConstraintGuide, "quiet", lambda self, state: False)
            np.testing.assert_array_equal(fast, real_allowed(guide, system, state, valid))  # type: ignore[arg-type]
            monkeypatch.setattr(ConstraintGuide, "quiet", real_quiet)
        seen["all"] += 1
        return fast

    monkeypatch.setattr(ConstraintGuide, "allowed", checked)
    fast = parse()
    for got, expected, constraint in zip(fast, slow, forced, strict=True):
        assert_kept(got.heads, got.deprels, constraint)
        assert got.heads.tolist() == expected.heads.tolist() and got.deprels == expected.deprels
        np.testing.assert_array_equal(got.arc_scores, expected.arc_scores)
    if name != "neural":  # the network's beam tests the shortcut before it builds a state
        assert seen["all"] > 100 and seen["quiet"] > seen["all"] / 3, seen
