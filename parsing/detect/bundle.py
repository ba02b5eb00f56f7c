"""The detector in a model directory: fitted beside the members, used to score parsed or given trees.

``MODEL_DIR/detector.model`` (:data:`DETECTOR_FILE`) is written by :func:`fit_model_detector`
(``python -m parsing fit-detector``): the model's members and ensemble parse the dev sentences
(which they were not trained on), the detector learns from those parses against the dev trees,
and its treebank counts come from the training trees. The manifest records it under
``"detector"``.

:func:`score_corpus` scores each sentence's own tree when it has one (a gold, reviewed or
imported tree: every word has a head) and otherwise the ensemble's parse of it; the members
parse every sentence, since their votes are features.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parsing.detect.boosting import FloatArray
from parsing.detect.evaluate import roc_auc, share_in_top
from parsing.detect.model import ArcDetector, ScoredTree, fit_detector
from parsing.ensemble.base import Ensemble
from parsing.ensemble.registry import combine
from parsing.ensemble.voting import ensemble_vote_weights
from parsing.pipeline import MANIFEST, ModelBundle, load_models, read_manifest
from parsing.types import Parse, Sentence

DETECTOR_FILE = "detector.model"
"""The detector's file in a model directory."""


def detector_path(model_dir: str | Path) -> Path:
    """Where a model directory keeps its detector."""
    return Path(model_dir) / DETECTOR_FILE


def load_detector(model_dir: str | Path) -> ArcDetector:
    """The detector of a model directory.

    Raises:
        FileNotFoundError: not a model directory, or one without a detector (the message says
            how to fit one).
    """
    read_manifest(model_dir)
    path = detector_path(model_dir)
    if not path.is_file():
        raise FileNotFoundError(
            f"{model_dir} has no arc detector ({DETECTOR_FILE}); fit one with: python -m parsing "
            f"fit-detector --model {model_dir} --train TRAIN.conllu --dev DEV.conllu")
    return ArcDetector.load(path)


def with_tags(sentence: Sentence, upos: Sequence[str] | None) -> Sentence:
    """A copy of ``sentence`` whose UPOS are ``upos`` (``n+1``, ROOT first); itself when ``None``."""
    if upos is None:
        return sentence
    return Sentence(sentence.forms, sentence.lemmas, list(upos), sentence.xpos, sentence.feats,
                    sentence.heads, sentence.deprels, sentence.sent_id, sentence.annotated)


def _ensemble(bundle: ModelBundle) -> Ensemble:
    if bundle.ensemble is None:
        raise ValueError("the detector reads the ensemble's votes; this model has no ensemble "
                         "(train it with --ensemble METHOD)")
    return bundle.ensemble


def confident_members(bundle: ModelBundle, names: Sequence[str]) -> list[str]:
    """Those of ``names`` whose arc scores are probabilities (``gives_arc_probabilities``): the
    detector reads their confidence."""
    return [name for name in names if bundle.parsers[name].gives_arc_probabilities]


def member_weights(bundle: ModelBundle) -> tuple[list[str], list[float]]:
    """The members the ensemble votes with and their vote weights.

    Raises:
        ValueError: the model has no ensemble.
    """
    names = list(bundle.ensemble_members)
    by_name = ensemble_vote_weights(_ensemble(bundle), names, names)
    return names, [by_name[name] for name in names]


def ensemble_trees(bundle: ModelBundle, sentences: Sequence[Sentence],
                   member_parses: Mapping[str, Sequence[Parse]] | None = None) -> list[ScoredTree]:
    """The ensemble's trees of ``sentences`` as trees to score (tags: the ones parsed with).

    Args:
        member_parses: the members' parses of ``sentences`` when already made (as
            :meth:`~parsing.pipeline.ModelBundle.parse_with_ensemble` gives them); the ensemble
            then only combines them.
    """
    names, _ = member_weights(bundle)
    if member_parses is None:
        parses, combined = bundle.parse_with_ensemble(sentences, names)
        tagged = [with_tags(sentence, tree.upos) for sentence, tree in zip(sentences, combined, strict=True)]
    else:
        parses = {name: list(member_parses[name]) for name in names}
        tagged = [with_tags(sentence, parses[names[0]][i].upos) for i, sentence in enumerate(sentences)]
        combined = combine(_ensemble(bundle), names, tagged, parses)
    return [ScoredTree(sentence, tree.heads, list(tree.deprels), {name: parses[name][i] for name in names})
            for i, (sentence, tree) in enumerate(zip(tagged, combined, strict=True))]


def fit_model_detector(model_dir: str | Path, train: Sequence[Sentence], dev: Sequence[Sentence], *,
                       member_parses: Mapping[str, Sequence[Parse]] | None = None,
                       bundle: ModelBundle | None = None, params: Mapping[str, Any] | None = None,
                       random_state: int = 0) -> dict[str, Any]:
    """Fit the detector of ``model_dir`` on its ensemble's parses of ``dev`` and save it there.

    Args:
        train: the trees the members were trained on (counted); dev: gold trees they were not
            (a dev split, or held-out trees).
        member_parses: the members' parses of ``dev`` when already made (a round scores its
            members on them first); bundle: the loaded model directory, when it is.

    Returns:
        What the manifest records (``"detector"``): dev words and wrong arcs of the ensemble's
        parses, their jackknifed AUC and top-30% share, and the jackknifed share of the errors
        planted in copies of the dev trees that the top 5% holds.

    Raises:
        ValueError: no ensemble, dev without complete trees, or one class only.
    """
    incomplete = [s.sent_id or str(i + 1) for i, s in enumerate(dev) if not s.has_tree]
    if incomplete:
        raise ValueError(f"dev sentence {incomplete[0]} has words without a head: the detector learns "
                         "from complete gold trees")
    bundle = bundle or load_models(model_dir)
    names, weights = member_weights(bundle)
    detector = fit_detector(train, ensemble_trees(bundle, dev, member_parses), dev, names, weights,
                            params=params, random_state=random_state,
                            confident=confident_members(bundle, names))
    detector.save(detector_path(model_dir))
    record: dict[str, Any] = {"file": DETECTOR_FILE, "train_trees": detector.counts.n_trees}
    parsed = ~detector.training_given
    scores, wrong = detector.training_scores[parsed], detector.training_wrong[parsed]
    record["dev_words"], record["dev_wrong"] = int(parsed.sum()), int(wrong.sum())
    record["jackknifed_auc"] = round(roc_auc(scores, wrong), 4)
    record["jackknifed_wrong_in_top30"] = round(share_in_top(scores, wrong, 0.3), 4)
    if detector.training_given.any():
        given = detector.training_given
        record["planted_errors"] = int(detector.training_wrong[given].sum())
        record["jackknifed_planted_in_top5"] = round(
            share_in_top(detector.training_scores[given], detector.training_wrong[given], 0.05), 4)
    manifest = read_manifest(model_dir)
    manifest["detector"] = record
    (Path(model_dir) / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return record


@dataclass(frozen=True, slots=True)
class ScoredCorpus:
    """Per sentence: the tree scored (``"given"``, ``"ensemble"``, ``"empty"``: no words) and each
    word's ``p_wrong``; ``trees``: the scored trees of the sentences with words, in order."""

    sources: list[str]
    p_wrong: list[FloatArray]
    trees: list[ScoredTree]


def score_corpus(model_dir: str | Path, sentences: Sequence[Sentence]) -> ScoredCorpus:
    """Score every sentence's tree (its own when complete, else the ensemble's parse); a sentence
    without words gets an empty array and source ``"empty"``.

    Raises:
        FileNotFoundError: no detector in ``model_dir``.
        ValueError: a given head outside the sentence (naming it), or sentences to parse and no ensemble.
    """
    detector = load_detector(model_dir)
    for i, sentence in enumerate(sentences):  # bad input fails before any parsing
        if sentence.has_tree:
            _check_heads(sentence, i)
    bundle = load_models(model_dir, detector.members)
    sources = ["empty" if len(s) == 0 else "given" if s.has_tree else "ensemble" for s in sentences]
    given = [i for i, source in enumerate(sources) if source == "given"]
    parse = [i for i, source in enumerate(sources) if source == "ensemble"]
    trees: dict[int, ScoredTree] = {}
    if given:
        member_parses = bundle.parse([sentences[i] for i in given], detector.members)
        for k, i in enumerate(given):
            own = {name: member_parses[name][k] for name in detector.members}
            sentence = sentences[i]
            trees[i] = ScoredTree(with_tags(sentence, _given_tags(sentence, own[detector.members[0]])),
                                  np.asarray(sentence.heads, dtype=np.intp), list(sentence.deprels), own,
                                  given=True)
    if parse:
        trees.update(zip(parse, ensemble_trees(bundle, [sentences[i] for i in parse]), strict=True))
    order = sorted(trees)
    scored = dict(zip(order, detector.score([trees[i] for i in order]), strict=True))
    empty = np.zeros(0, dtype=np.float64)
    return ScoredCorpus(sources, [scored.get(i, empty) for i in range(len(sentences))],
                        [trees[i] for i in order])


def _check_heads(sentence: Sentence, index: int) -> None:
    """Raise ValueError naming the sentence and word when a given head is outside ``0..n``."""
    n = len(sentence)
    for word, head in enumerate(sentence.heads[1:].tolist(), start=1):
        if not 0 <= head <= n or head == word:
            raise ValueError(f"sentence {sentence.sent_id or index + 1}, word {word}: head {head} is not "
                             f"another word of the sentence (0..{n})")


def _given_tags(sentence: Sentence, parse: Parse) -> list[str] | None:
    """A given tree's own UPOS where the input has them, the tagger's (``parse.upos``) for ``_``."""
    if parse.upos is None:
        return None
    return [own if own != "_" else tagged for own, tagged in zip(sentence.upos, parse.upos, strict=True)]


def rank_arcs(sentences: Sequence[Sentence], p_wrong: Sequence[FloatArray]) -> list[dict[str, Any]]:
    """Every word as ``{"sent_id", "word", "p_wrong"}``, most likely wrong first (ties: input order).

    ``sent_id`` is the sentence's ``# sent_id``, else its 1-based number in the input (as text);
    ``word`` the word's 1-based id.

    Examples:
        >>> s = [Sentence.from_words(["a", "b"], sent_id="x"), Sentence.from_words(["c"])]
        >>> [(r["sent_id"], r["word"]) for r in rank_arcs(s, [np.array([0.1, 0.7]), np.array([0.7])])]
        [('x', 2), ('2', 1), ('x', 1)]
    """
    rows = [(float(p), i, d) for i, scores in enumerate(p_wrong)
            for d, p in enumerate(scores.tolist(), start=1)]
    rows.sort(key=lambda row: (-row[0], row[1], row[2]))
    return [{"sent_id": sentences[i].sent_id or str(i + 1), "word": d, "p_wrong": round(p, 6)}
            for p, i, d in rows]
