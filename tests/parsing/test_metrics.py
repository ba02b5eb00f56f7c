"""Tests of parsing.scorer.metrics: hand-made cases, breakdown sums, and the official scorer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import (
    ConlluSentence,
    format_conllu,
    load_sentences,
    parse_conllu,
    read_conllu,
    to_sentence,
    with_parse,
)
from parsing.scorer.breakdowns import (
    ARC_LENGTH_BUCKETS,
    SENTENCE_LENGTH_BUCKETS,
    arc_length_bucket,
    sentence_length_bucket,
)
from parsing.scorer.metrics import CONTENT_DEPRELS, NON_CONTENT_DEPRELS, evaluate
from parsing.scorer.report import evaluation_to_dict
from parsing.types import Parse, Sentence

UD_ROOT = Path(__file__).resolve().parents[3] / "shared" / "ud"

# "The dog barks ." with a possessive-subtype label on "dog" to test subtypes.
FORMS = ["The", "dog", "barks", "."]
UPOS = ["DET", "NOUN", "VERB", "PUNCT"]
HEADS = [2, 3, 0, 3]
DEPRELS = ["det", "nsubj:pass", "root", "punct"]


def sentence(
    heads: list[int] = HEADS, deprels: list[str] = DEPRELS, upos: list[str] = UPOS,
    forms: list[str] = FORMS,
) -> Sentence:
    return Sentence.from_words(list(forms), upos=list(upos), heads=list(heads),
                               deprels=list(deprels))


def parse(heads: list[int], deprels: list[str], upos: list[str] | None = None) -> Parse:
    return Parse(heads=np.array([-1, *heads], dtype=np.intp), deprels=["", *deprels],
                 upos=None if upos is None else ["<ROOT>", *upos])


GOLD = [sentence()]


# --- totals -----------------------------------------------------------------------------

def test_perfect_parse_scores_100() -> None:
    result = evaluate(GOLD, [sentence()])
    assert (result.uas.f1, result.las.f1, result.clas.f1) == (1.0, 1.0, 1.0)
    assert result.upos is not None and result.upos.f1 == 1.0
    assert (result.words, result.sentences) == (4, 1)
    assert (result.exact_match.unlabelled, result.exact_match.labelled) == (1, 1)


def test_one_wrong_head_costs_one_word() -> None:
    result = evaluate(GOLD, [sentence(heads=[3, 3, 0, 3])])
    assert result.uas.correct == 3 and result.uas.f1 == pytest.approx(0.75)
    assert result.las.f1 == pytest.approx(0.75)
    assert result.exact_match.unlabelled == 0


def test_wrong_label_costs_las_only() -> None:
    result = evaluate(GOLD, [sentence(deprels=["det", "obj", "root", "punct"])])
    assert result.uas.f1 == 1.0
    assert result.las.f1 == pytest.approx(0.75)
    assert (result.exact_match.unlabelled, result.exact_match.labelled) == (1, 0)


@pytest.mark.parametrize("system_label", ["nsubj", "nsubj:pass", "nsubj:outer"])
def test_label_subtypes_are_ignored(system_label: str) -> None:
    result = evaluate(GOLD, [sentence(deprels=["det", system_label, "root", "punct"])])
    assert result.las.f1 == 1.0
    assert result.clas.f1 == 1.0


def test_punctuation_counts_by_default_and_can_be_excluded() -> None:
    system = [sentence(heads=[2, 3, 0, 2])]  # only "." is wrong
    assert evaluate(GOLD, system).uas.f1 == pytest.approx(0.75)
    without = evaluate(GOLD, system, exclude_punct=True)
    assert without.words == 3 and without.uas.f1 == 1.0 and without.las.f1 == 1.0
    assert without.exact_match.unlabelled == 1
    assert "PUNCT" not in without.by_upos


def test_punctuation_is_decided_by_gold_upos_or_gold_deprel() -> None:
    # gold "." is SYM + punct, gold "barks" is PUNCT (odd but possible): both excluded
    gold = [sentence(upos=["DET", "NOUN", "PUNCT", "SYM"])]
    system = [sentence(heads=[2, 1, 0, 2], upos=["DET", "NOUN", "VERB", "PUNCT"])]
    result = evaluate(gold, system, exclude_punct=True)
    assert result.words == 2
    # the system's own PUNCT tag does not matter, only gold
    system_tags = [sentence(upos=["PUNCT", "PUNCT", "PUNCT", "PUNCT"])]
    assert evaluate(GOLD, system_tags, exclude_punct=True).words == 3


MWT_CONLLU = (
    "# sent_id = mwt\n"
    "1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tde\tde\tADP\t_\t_\t2\tcase\t_\t_\n"
    "2\tel\tel\tDET\t_\t_\t3\tdet\t_\t_\n"
    "3\tcasa\tcasa\tNOUN\t_\t_\t0\troot\t_\t_\n"
    "3.1\tes\t_\tVERB\t_\t_\t_\t_\t3:orphan\t_\n"
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n"
    "\n"
)


def test_multiword_tokens_and_empty_nodes_are_not_scored() -> None:
    raw = parse_conllu(MWT_CONLLU)
    gold = [to_sentence(s) for s in raw]
    wrong = Parse(heads=np.array([-1, 3, 3, 0, 3]), deprels=["", "case", "det", "root", "punct"])
    result = evaluate(gold, [wrong])
    assert result.words == 4
    assert result.uas.correct == 3


def test_clas_scores_only_content_relations() -> None:
    # det and punct wrong: LAS suffers, CLAS does not
    system = [sentence(heads=[3, 3, 0, 2])]
    result = evaluate(GOLD, system)
    assert result.las.f1 == pytest.approx(0.5)
    assert (result.clas.correct, result.clas.gold, result.clas.system) == (2, 2, 2)
    assert result.clas.f1 == 1.0


def test_clas_is_the_f1_of_gold_and_system_content_words() -> None:
    # the system calls "dog" a det: gold has 2 content words, the system 1 (barks)
    result = evaluate(GOLD, [sentence(deprels=["det", "det", "root", "punct"])])
    assert (result.clas.correct, result.clas.gold, result.clas.system) == (1, 2, 1)
    assert result.clas.precision == 1.0 and result.clas.recall == 0.5
    assert result.clas.f1 == pytest.approx(2 / 3)


def test_clas_excludes_labels_outside_ud_like_the_official_script() -> None:
    gold = [sentence(deprels=["det", "made_up", "root", "punct"])]
    result = evaluate(gold, [sentence(deprels=["det", "made_up", "root", "punct"])])
    assert (result.clas.gold, result.clas.system) == (1, 1)


def test_content_relations_match_the_official_script() -> None:
    udeval = pytest.importorskip("udtools.udeval")
    assert set(udeval.CONTENT_DEPRELS) == CONTENT_DEPRELS
    ud_relations = CONTENT_DEPRELS | NON_CONTENT_DEPRELS
    assert len(ud_relations) == 37  # the UD v2 universal relations
    assert set(udeval.FUNCTIONAL_DEPRELS) | {"punct"} == NON_CONTENT_DEPRELS


def test_parse_without_tags_has_no_upos_score() -> None:
    result = evaluate(GOLD, [parse(HEADS, DEPRELS)])
    assert result.upos is None and result.las.f1 == 1.0
    assert evaluation_to_dict(result)["UPOS"] is None


def test_upos_accuracy() -> None:
    result = evaluate(GOLD, [parse(HEADS, DEPRELS, ["DET", "PROPN", "VERB", "PUNCT"])])
    assert result.upos is not None and result.upos.f1 == pytest.approx(0.75)


def test_unknown_system_heads_are_wrong() -> None:
    result = evaluate(GOLD, [parse([-1, -1, 0, 3], DEPRELS)])
    assert result.uas.correct == 2


@pytest.mark.parametrize(
    ("system", "message"),
    [
        ([sentence(forms=["The", "cat", "barks", "."])], "sentence 1, word 2: gold form 'dog'"),
        ([sentence()] * 2, "gold has 1 sentence but system has 2"),
        ([Sentence.from_words(["The", "dog"], heads=[2, 0], deprels=["det", "root"])],
         "sentence 1: gold has 4 words but system has 2"),
    ],
)
def test_different_words_raise(system: list[Sentence], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(GOLD, system)


def test_difference_names_the_sent_id() -> None:
    gold = [sentence(), Sentence.from_words(["Hi"], heads=[0], deprels=["root"], sent_id="s2")]
    system = [sentence(), Sentence.from_words(["Ho"], heads=[0], deprels=["root"])]
    with pytest.raises(ValueError, match=r"sentence 2 \(sent_id s2\), word 1"):
        evaluate(gold, system)


def test_gold_without_tree_raises() -> None:
    with pytest.raises(ValueError, match="without a head"):
        evaluate([Sentence.from_words(["a", "b"])], [parse([2, 0], ["det", "root"])])


# --- breakdowns --------------------------------------------------------------------------

def test_bucket_labels() -> None:
    heads = np.array([0, 1, 1, 1, 20])
    positions = np.array([3, 2, 3, 7, 12])
    assert arc_length_bucket(heads, positions).tolist() == ["root", "1", "2", "3-6", "7+"]
    lengths = np.array([1, 10, 11, 20, 21, 30, 31, 40, 41, 100])
    assert sentence_length_bucket(lengths).tolist() == [
        "1-10", "1-10", "11-20", "11-20", "21-30", "21-30", "31-40", "31-40", "41+", "41+"
    ]


def test_by_deprel_is_labelled_precision_and_recall() -> None:
    # "dog" labelled obj by the system: nsubj loses recall, obj gets a false positive
    result = evaluate(GOLD, [sentence(deprels=["det", "obj", "root", "punct"])])
    nsubj, obj = result.by_deprel["nsubj"], result.by_deprel["obj"]
    assert (nsubj.correct, nsubj.gold, nsubj.system) == (0, 1, 0)
    assert (obj.correct, obj.gold, obj.system) == (0, 0, 1)
    assert result.by_deprel["det"].f1 == 1.0


def random_corpus(seed: int, sentences: int = 60) -> list[Sentence]:
    """Random trees (head of word d among ROOT or earlier words) with random tags."""
    rng = np.random.default_rng(seed)
    tags, labels = ["NOUN", "VERB", "PUNCT", "DET"], ["nsubj", "obj", "punct", "det:poss"]
    corpus = []
    for _ in range(sentences):
        n = int(rng.integers(1, 55))
        heads = [0] + [int(rng.integers(1, d + 1)) for d in range(1, n)]
        corpus.append(Sentence.from_words(
            [f"w{i}" for i in range(n)], heads=heads,
            upos=[str(t) for t in rng.choice(tags, n)],
            deprels=["root"] + [str(r) for r in rng.choice(labels, n - 1)],
        ))
    return corpus


def noisy(gold: list[Sentence], seed: int, rate: float) -> list[Parse]:
    """Parses with a fraction ``rate`` of heads and labels changed."""
    rng = np.random.default_rng(seed)
    parses = []
    for s in gold:
        n = len(s)
        heads = s.heads.copy()
        deprels = list(s.deprels)
        for d in range(1, n + 1):
            if rng.random() < rate:
                heads[d] = (heads[d] + 1) % (n + 1) or 1
            if rng.random() < rate:
                deprels[d] = "obl"
        parses.append(Parse(heads=heads, deprels=deprels, upos=list(s.upos)))
    return parses


@pytest.mark.parametrize("exclude_punct", [False, True])
def test_breakdowns_sum_to_the_totals(exclude_punct: bool) -> None:
    gold = random_corpus(0)
    result = evaluate(gold, noisy(gold, 1, 0.2), exclude_punct=exclude_punct)
    assert 0 < result.las.correct < result.uas.correct < result.words
    for groups in (result.by_upos, result.by_arc_length,
                   {k: b.attachment for k, b in result.by_sentence_length.items()}):
        assert sum(g.words for g in groups.values()) == result.words
        assert sum(g.uas_correct for g in groups.values()) == result.uas.correct
        assert sum(g.las_correct for g in groups.values()) == result.las.correct
    assert list(result.by_arc_length) == list(ARC_LENGTH_BUCKETS)
    assert list(result.by_sentence_length) == list(SENTENCE_LENGTH_BUCKETS)
    buckets = result.by_sentence_length.values()
    assert sum(b.sentences for b in buckets) == result.sentences
    assert sum(b.exact_unlabelled for b in buckets) == result.exact_match.unlabelled
    assert sum(b.exact_labelled for b in buckets) == result.exact_match.labelled
    deprels = result.by_deprel.values()
    assert sum(s.correct for s in deprels) == result.las.correct
    assert sum(s.gold for s in deprels) == sum(s.system for s in deprels) == result.words
    if not exclude_punct:
        assert result.by_arc_length["root"].words == result.sentences


def test_exact_match_counts_sentences() -> None:
    gold = [sentence(), sentence()]
    result = evaluate(gold, [sentence(), sentence(heads=[3, 3, 0, 3])])
    assert (result.exact_match.unlabelled, result.exact_match.labelled) == (1, 1)
    assert result.exact_match.unlabelled_rate == 0.5


# --- cross-check against the official CoNLL 2018 scorer ----------------------------------

TREEBANKS = {
    "wolof (multiword tokens)": "UD_Wolof-WTB/wo_wtb-ud-dev.conllu",
    "welsh (multiword tokens)": "UD_Welsh-CCG/cy_ccg-ud-dev.conllu",
    "tamil (multiword tokens)": "UD_Tamil-TTB/ta_ttb-ud-dev.conllu",
    "afrikaans": "UD_Afrikaans-AfriBooms/af_afribooms-ud-dev.conllu",
    "english (multiword tokens, empty nodes)": "UD_English-EWT/en_ewt-ud-dev.conllu",
}
SUBSET = 500
"""Larger files are cut to their first SUBSET sentences plus every one with an empty node."""


def _subset(raws: list[ConlluSentence]) -> list[ConlluSentence]:
    return [raw for i, raw in enumerate(raws)
            if i < SUBSET or any("." in row[0] for row in raw.rows)]


def _is_below(heads: np.ndarray, head: int, word: int) -> bool:
    """Whether ``head`` is ``word`` or one of its descendants."""
    while head > 0:
        if head == word:
            return True
        head = int(heads[head])
    return False


def perturbed(raws: list[ConlluSentence], *, seed: int, rate: float) -> list[ConlluSentence]:
    """A valid system file: a fraction of heads moved (keeping trees with one root),
    of labels replaced (also by a non-UD label) or given a new subtype, of tags changed."""
    rng = np.random.default_rng(seed)
    sentences = [to_sentence(raw) for raw in raws]
    labels = sorted({r for s in sentences for r in s.deprels[1:]}) + ["not_ud"]
    tags = sorted({t for s in sentences for t in s.upos[1:]})
    result = []
    for raw, s in zip(raws, sentences, strict=True):
        heads, deprels, upos = s.heads.copy(), list(s.deprels), list(s.upos)
        for word in range(1, len(s) + 1):
            if heads[word] != 0 and rng.random() < rate:
                options = [h for h in range(1, len(s) + 1) if not _is_below(heads, h, word)]
                heads[word] = options[int(rng.integers(len(options)))]
            draw = rng.random()
            if draw < rate:
                deprels[word] = labels[int(rng.integers(len(labels)))]
            elif draw < 2 * rate:
                deprels[word] = deprels[word].split(":")[0] + ":sub"
            if rng.random() < rate:
                upos[word] = tags[int(rng.integers(len(tags)))]
        result.append(with_parse(raw, Parse(heads=heads, deprels=deprels, upos=upos), tags=True))
    return result


def _ud_file(relative: str) -> Path:
    path = UD_ROOT / relative
    if not path.is_file():
        pytest.skip(f"UD treebank file not found: {path} (expected ../shared/ud beside the repo)")
    return path


@pytest.mark.parametrize("relative", TREEBANKS.values(), ids=list(TREEBANKS))
def test_scores_equal_the_official_conll18_scorer(relative: str, tmp_path: Path) -> None:
    udeval = pytest.importorskip("udtools.udeval", reason="udtools (test dependency) missing")
    gold_raws = _subset(read_conllu(_ud_file(relative)))
    gold_path, system_path = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold_path.write_text(format_conllu(gold_raws), encoding="utf-8")
    system_path.write_text(format_conllu(perturbed(gold_raws, seed=7, rate=0.15)),
                           encoding="utf-8")
    ours = evaluate(load_sentences(gold_path), load_sentences(system_path))
    official = udeval.evaluate(udeval.load_conllu_file(str(gold_path)),
                               udeval.load_conllu_file(str(system_path)))
    assert ours.upos is not None
    assert 0.6 < ours.las.f1 < 0.9  # the perturbation really changed things
    for name, score in (("UAS", ours.uas), ("LAS", ours.las), ("CLAS", ours.clas),
                        ("UPOS", ours.upos)):
        assert 100 * score.f1 == pytest.approx(100 * official[name].f1, abs=0.01), name
        assert (score.correct, score.gold, score.system) == (
            official[name].correct, official[name].gold_total, official[name].system_total
        ), name


def test_scores_equal_the_udeval_console_script(tmp_path: Path) -> None:
    pytest.importorskip("udtools.udeval", reason="udtools (test dependency) missing")
    script = Path(sys.executable).with_name("udeval")
    if not script.is_file():
        found = shutil.which("udeval")
        if found is None:
            pytest.skip("the udeval console script (from udtools) is not installed")
        script = Path(found)
    gold_path = _ud_file(TREEBANKS["tamil (multiword tokens)"])
    system_path = tmp_path / "system.conllu"
    system_path.write_text(format_conllu(perturbed(read_conllu(gold_path), seed=3, rate=0.2)),
                           encoding="utf-8")
    output = subprocess.run([str(script), "-v", str(gold_path), str(system_path)],
                            capture_output=True, text=True, check=True).stdout
    official = {
        cells[0].strip(): float(cells[3])
        for cells in (line.split("|") for line in output.splitlines())
        if len(cells) == 5 and cells[0].strip() in {"UAS", "LAS", "CLAS", "UPOS"}
    }
    ours = evaluation_to_dict(evaluate(load_sentences(gold_path), load_sentences(system_path)))
    assert set(official) == {"UAS", "LAS", "CLAS", "UPOS"}
    for name, value in official.items():
        assert ours[name] == pytest.approx(value, abs=0.01), name
