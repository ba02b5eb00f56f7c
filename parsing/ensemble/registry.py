"""The combination methods by name: build one over fitted members, fit it, save it, load it.

The command line (``--ensemble METHOD``), the pipeline and the app pick methods from
:data:`METHODS`; :data:`DEFAULT_METHOD` is chosen by measurement (``bench/ensembles.py``,
``bench/default_method.py``; see the README's ensemble table). Every method is fitted over
members that are already trained (the pipeline trains them once), on tuning data that is never
the test split:

* stacking (Martins et al. 2008): level-0 trees of train from ``folds``-fold jackknifing of
  copies of its level-0 members, level 1 fitted on train (dev picks its epochs);
* the others: the members' parses of dev, or of held-out folds of train without dev.

A fitted ensemble is saved without its members (they live in their own model files, by
name) and re-attached to them on loading, so nothing is stored twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sklearn.base import clone

from parsing.base import BaseParser
from parsing.ensemble.base import Ensemble
from parsing.ensemble.fuzzy import FuzzyPosVoting
from parsing.ensemble.mbr import MinimumBayesRisk
from parsing.ensemble.meta_classifier import MetaClassifier
from parsing.ensemble.score_sum import ScoreSum
from parsing.ensemble.stacking import Stacking
from parsing.ensemble.voting import ArcVoting
from parsing.persist import load_model, save_model
from parsing.types import Parse, Sentence

Build = Callable[[list[BaseParser]], Ensemble]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One named combination method.

    Attributes:
        name: what ``--ensemble`` takes.
        summary: one line for listings.
        build: an unfitted ensemble over the given members.
        uses: which members it combines, from the member names available (default: all).
        votes: it is a weighted arc vote over the members' trees, so other parsers' trees can
            join the vote (:mod:`parsing.ensemble.extra_voters`).
    """

    name: str
    summary: str
    build: Build
    uses: Callable[[Sequence[str]], list[str]] = list
    votes: bool = False


def _graphs(names: Sequence[str]) -> list[str]:
    return [name for name in names if name.startswith("graph")]


def _stack_level0(names: Sequence[str]) -> list[str]:
    """Martins et al. stack one transition parser under the graph parser: eager if present."""
    for preferred in ("eager", "hybrid", "swap"):
        if preferred in names:
            return [preferred]
    return [names[0]] if names else []


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        MethodSpec("vote-uniform", "arc voting + MST, one vote per member (Sagae & Lavie 2006)",
                   lambda m: ArcVoting(m, weighting="uniform"), votes=True),
        MethodSpec("vote-accuracy", "arc voting + MST, votes weighted by dev UAS (Green 2013)",
                   lambda m: ArcVoting(m, weighting="accuracy"), votes=True),
        MethodSpec("vote-power", "arc voting + MST, votes weighted by dev UAS**10 (Green 2013)",
                   lambda m: ArcVoting(m, weighting="power", exponent=10.0), votes=True),
        MethodSpec("vote-tuned", "arc voting + MST, votes weighted by dev UAS**k, k chosen on dev LAS",
                   lambda m: ArcVoting(m, weighting="tuned"), votes=True),
        MethodSpec("vote-tuned-labels", "vote-tuned, labels voted with weights of their own: dev label "
                   "accuracy**k, k chosen on dev LAS",
                   lambda m: ArcVoting(m, weighting="tuned", labels="tuned"), votes=True),
        MethodSpec("vote-rank", "arc voting + MST, rank votes: best of M members gets M (Green 2013)",
                   lambda m: ArcVoting(m, weighting="rank"), votes=True),
        MethodSpec("fuzzy-pos", "arc voting + MST, per-UPOS weights by fuzzy C-means (Green 2013)",
                   lambda m: FuzzyPosVoting(m), votes=True),
        MethodSpec("score-sum", "sum of the graph members' arc posteriors, one MST (Razavi 2012)",
                   lambda m: ScoreSum(m, normalise="softmax"), _graphs),
        MethodSpec("meta-svm", "SVM picks which member's head to trust per word (Green 2013)",
                   lambda m: MetaClassifier(m)),
        MethodSpec("mbr", "minimum Bayes risk tree over members' (k-best) trees (Titov 2008)",
                   lambda m: MinimumBayesRisk(m, weighting="uniform")),
        MethodSpec("stack", "graph parser with features of a jackknifed member's tree (Martins 2008)",
                   lambda m: Stacking(m, preset="E", tuning_folds=2), _stack_level0),
    )
}

DEFAULT_METHOD = "vote-uniform"
"""The vote that needs no tuning data (simulations and :func:`default_method` without dev).
Chosen by measurement over the nine members before the neural ones. In ``bench/ensembles.py``
over the ``../shared/ud`` treebanks (gold tags), the voting methods lead the others, and their
order varies by hundredths from run to run (vote-uniform first by +0.04 mean LAS in one run,
vote-accuracy by +0.05 in the next). ``bench/default_method.py`` finds no significant
difference between the two (pooled test sets: paired bootstrap p = 0.39), so the default is the
one that needs no tuning data: one vote per member."""

DEFAULT_METHODS: dict[str, str] = {"gold": "vote-tuned-labels", "predicted": "vote-tuned-labels"}
"""The measured default per tag mode. In both modes the default members include the
neural member where PyTorch is installed (:func:`parsing.members.default_members`), which is
3 to 5 LAS stronger than the others on four of six treebanks and labels better than it
attaches: one vote each lets the nine outvote it (vote-uniform fell 0.4 to 2.3 test LAS below it
alone on four of the six), while ``vote-tuned-labels`` (head weights UAS**k and label weights
label-accuracy**k, both k chosen on dev) had the best dev LAS of the votes on all six (tied with
vote-tuned on two) and the best or tied test LAS on five (``bench/ensembles.py --variant
biaffine``; the library guide's neural-ensemble table). Over the nine alone it is level with
vote-uniform (+0.11 mean test LAS on the six). It tunes on dev (in the app: the dev split or the
held-out slice); without dev sentences :func:`default_method` falls back to vote-uniform. Gold
tags, the ten (``bench/results/ensembles/gold-biaffine.jsonl`` and ``gold-lstm-hybrid.jsonl``):
vote-tuned-labels had a better dev LAS than the nine's vote-uniform on all six treebanks and a
better test LAS by +0.86 on average, where vote-uniform over the ten gained about +0.45."""


def default_method(tags: str, *, tuning: bool = True) -> str:
    """The measured default combination for ``tags`` (``"gold"`` or ``"predicted"``).

    ``tuning=False`` (no dev sentences to tune on): a default that would tune is replaced by the
    vote that needs none, since tuning without dev trains every member twice more on held-out
    folds (:meth:`~parsing.ensemble.base.Ensemble.tuning_data`).

    Examples:
        >>> default_method("gold"), default_method("predicted", tuning=False)
        ('vote-tuned-labels', 'vote-uniform')
    """
    if tags not in DEFAULT_METHODS:
        raise ValueError(f"tags must be one of {', '.join(DEFAULT_METHODS)}, not {tags!r}")
    method = DEFAULT_METHODS[tags]
    if not tuning and method_spec(method).build([]).needs_tuning:
        return "vote-uniform"
    return method


def method_names() -> list[str]:
    """Every method's name, in listing order."""
    return list(METHODS)


def method_spec(name: str) -> MethodSpec:
    """The spec of ``name``.

    Raises:
        ValueError: unknown name, listing the known ones.

    Examples:
        >>> method_spec("vote-power").uses(["graph1", "eager"])
        ['graph1', 'eager']
        >>> method_spec("score-sum").uses(["graph1", "eager", "graph2"])
        ['graph1', 'graph2']
    """
    if name not in METHODS:
        raise ValueError(f"unknown ensemble method {name!r}; known: {', '.join(METHODS)}")
    return METHODS[name]


def fit_ensemble(
    method: str,
    fitted: Mapping[str, BaseParser],
    train: Sequence[Sentence],
    dev: Sequence[Sentence] | None,
    *,
    random_state: int = 0,
    params: Mapping[str, Any] | None = None,
) -> tuple[Ensemble, list[str]]:
    """Fit ``method`` over already-fitted members; return it and the names it combines.

    Args:
        fitted: fitted members by name (the model directory's parsers).
        train: the members' training sentences (tags as the members saw them).
        dev: tuning sentences (gold trees), or ``None`` to tune on held-out folds of train.
        params: hyperparameters of the method overriding its defaults (e.g. ``max_iter``).

    Raises:
        ValueError: unknown method, or none of its members are among ``fitted``.
    """
    spec = method_spec(method)
    names = spec.uses(list(fitted))
    if not names:
        raise ValueError(f"ensemble {method!r} combines none of the members {', '.join(fitted)}")
    members = [fitted[name] for name in names]
    ensemble = spec.build([clone(member) for member in members])
    ensemble.set_params(random_state=random_state, **(params or {}))
    if isinstance(ensemble, Stacking):
        level0 = ensemble.jackknife_parses(train)
        ensemble.members_ = members
        dev_level0 = ensemble.member_predict(dev) if dev else None
        ensemble.level1_ = ensemble._level1().fit_stacked(train, level0, dev, dev_level0)
        return ensemble, names
    ensemble.members_ = members
    if not ensemble.needs_tuning:
        ensemble.fit_combiner([], [[] for _ in members])
    else:
        tuning, parses = ensemble.tuning_data(train, dev)
        ensemble.fit_combiner(tuning, parses)
    return ensemble, names


def save_ensemble(ensemble: Ensemble, names: Sequence[str], path: str | Path) -> None:
    """Write ``ensemble`` to ``path`` without its members (kept as ``names``)."""
    members, fitted = ensemble.members, ensemble.members_
    try:
        ensemble.members, ensemble.members_ = list(names), []
        save_model(ensemble, path)
    finally:
        ensemble.members, ensemble.members_ = members, fitted


def load_ensemble(path: str | Path, parsers: Mapping[str, BaseParser]) -> Ensemble:
    """Read an ensemble written by :func:`save_ensemble` and attach its members from ``parsers``.

    Raises:
        ValueError: a member it combines is not in ``parsers``.
    """
    ensemble: Ensemble = load_model(path, Ensemble)
    names = ensemble_members(ensemble)
    missing = [name for name in names if name not in parsers]
    if missing:
        raise ValueError(f"the ensemble combines {', '.join(missing)}, which this model does not load")
    ensemble.members_ = [parsers[name] for name in names]
    return ensemble


def ensemble_members(ensemble: Ensemble) -> list[str]:
    """The member names a loaded ensemble combines, in order."""
    return [str(name) for name in ensemble.members]


def combine(ensemble: Ensemble, names: Sequence[str], sentences: Sequence[Sentence],
            member_parses: Mapping[str, Sequence[Parse]]) -> list[Parse]:
    """The ensemble's parses of ``sentences`` from the parses of its members ``names`` (in
    the order it was fitted with), looked up by name in ``member_parses``."""
    return ensemble.combine_all(sentences, [member_parses[name] for name in names])
