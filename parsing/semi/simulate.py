"""Simulated annotation rounds: how fast does the ensemble learn under each selection strategy?

An oracle annotator stands in for people. Start from ``seed_trees`` gold trees of the
training file (drawn with ``seed``); the rest is the pool, its trees hidden. Round 0 trains
the members and the ensemble on the seed trees. Each later round parses the pool once with
the current members and ensemble, picks ``per_round`` sentences by a selection strategy
(:mod:`parsing.semi.selection`), reveals their gold trees, retrains and scores on dev with
the CoNLL 2018 scorer (:mod:`parsing.scorer.metrics`). Options:

* self-training (:mod:`parsing.semi.self_training`): each round's retraining adds
  automatic trees of the rest of the pool, from that round's parse, labelled by each member
  (``"own"``) or by the ensemble (``"ensemble"``); they replace the previous round's
  automatic trees, so their number stays within the configured bound;
* warm rounds: a member whose hyperparameters include ``warm_start`` continues from the
  previous round's weights; the others are retrained from scratch ("cold");
* partial annotation (``partial``, a vote-share threshold): the oracle confirms or fixes only
  the words of a selected sentence whose labelled vote share is below the threshold; the other
  words keep the ensemble's arcs (:func:`parsing.semi.partial.partial_tree`), and
  ``annotated_tokens`` counts the human-touched words only (seed trees count whole). With
  ``interactive`` the oracle works as in the editor with re-parsing on: one doubtful word at
  a time, lowest share first, the round's members and ensemble re-parsing the sentence under
  the touched arcs after each (:func:`parsing.semi.partial.interactive_partial_trees`).
  With ``refill`` each round also fills the parser arcs of the earlier rounds' partial trees
  again, around their human arcs, with the newest model (:func:`parsing.semi.partial.refill`):
  a tree filled by round 1's weak members is not learned as it was then for ever (Li, Zhang,
  Chao & Zhang 2016 complete partial trees with the newest model of each iteration).
  ``flag_detector`` (a ``p_wrong`` threshold P, issue #32) lets each round's arc error
  detector choose words too: fitted as for the ``detector`` strategy
  (:func:`round_detector_scores`, on that round's dev parses), it scores the selected
  sentences' ensemble trees, and a word is touched when its labelled share is below
  ``partial`` **or** its ``p_wrong`` is at least P (:func:`parsing.semi.partial.words_to_touch`);
  with ``flag_detector`` and no ``partial`` the detector alone chooses (``p_wrong >= P``).
  ``oracle_fill`` measures a bound: the words nobody touched get their true arcs as well, so
  the members learn whole trees at partial annotation's cost. What it reaches is the most any
  way of learning from partial trees (filling, weighting, refilling) could reach with the same
  sentences and the same touched words.

The result is JSON-ready: ``{"config": {...}, "rounds": [{"round", "annotated_sentences",
"annotated_tokens", "dev_uas", "dev_las", "members": {NAME: {"uas", "las"}}, "train_s", ...}]}``
with scores in % (``dev_las`` is the ensemble's). These key names are a contract: scripts
(``bench/simulate.py``, the lead's reports) read them.

As in the app's rounds, members get the dev file to pick their epochs, and the treebank's
own UPOS tags (gold tags) are used throughout, so strategies are compared on parsing alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from parsing.charts import line_chart_svg
from parsing.constraints import Constraints
from parsing.ensemble.registry import DEFAULT_METHOD, method_spec
from parsing.members import member_names
from parsing.plan import TrainingPlan
from parsing.semi.partial import interactive_partial_trees, partial_tree, refill
from parsing.semi.round_model import RoundModel, score_round, train_round
from parsing.semi.selection import ALL_STRATEGIES, rank_sentences, select_batch
from parsing.semi.self_training import (
    SELECTIONS,
    SelfTrainingConfig,
    automatic_trees,
    select_candidates,
)
from parsing.types import NO_HEAD, Parse, Sentence

__all__ = [
    "DEFAULT_PARSERS",
    "SELF_TRAINING",
    "SimulationConfig",
    "learning_curve_svg",
    "run_simulation",
]

SELF_TRAINING: tuple[str, ...] = ("none", "own", "ensemble")
"""``--self-training`` choices: off, each member's own trees, the ensemble's trees."""

DEFAULT_PARSERS: tuple[str, ...] = ("graph1", "eager", "hybrid")
"""The app's default member set (three fast, diverse members)."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class SimulationConfig:
    """Every setting of one simulation (module docstring).

    Attributes:
        seed_trees, per_round, rounds: gold trees at round 0, sentences revealed per round,
            rounds after round 0.
        strategy: one of :data:`parsing.semi.selection.ALL_STRATEGIES`.
        self_training: one of :data:`SELF_TRAINING`.
        select, max_share, max_automatic, min_confidence, agreement_k, stratify_by_length:
            the self-training settings (:class:`~parsing.semi.self_training.SelfTrainingConfig`).
        parsers: member names; ensemble: the combination method; member_params: member (and
            ``"ensemble"``) hyperparameters by name, e.g. ``{"eager": {"epochs": 3}}``.
        seed: draws the seed trees, the random strategy and the members' randomness.
        warm: continue members that support ``warm_start`` from the previous round.
        diversity, max_similarity: skip near-duplicates within a batch
            (:func:`~parsing.semi.selection.select_batch`).
        partial: with a vote-share threshold, annotate only the words below it (module
            docstring); ``None`` annotates whole sentences unless ``flag_detector`` is given.
        flag_detector: with a ``p_wrong`` threshold in (0, 1], the round's arc error detector
            chooses words too: a word is touched when below ``partial`` or with ``p_wrong`` at
            least this; without ``partial``, the detector alone chooses (module docstring).
        interactive: with ``partial``, touch one doubtful word at a time and re-parse the
            sentence under the touched arcs before reading the shares again (module docstring).
        refill: with ``partial``, every round fills the parser arcs of the earlier rounds'
            partial trees again with that round's model (module docstring).
        oracle_fill: with ``partial``, a bound, not a way to annotate: the untouched words get
            their true arcs too and the members learn whole trees, while ``annotated_tokens``
            still counts the touched words only (module docstring).
    """

    seed_trees: int
    per_round: int
    rounds: int
    strategy: str = "random"
    self_training: str = "none"
    select: str = "confidence"
    parsers: tuple[str, ...] = DEFAULT_PARSERS
    ensemble: str = DEFAULT_METHOD
    member_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seed: int = 0
    warm: bool = False
    diversity: bool = False
    max_similarity: float = 0.7
    max_share: float = 1.0
    max_automatic: int | None = None
    min_confidence: float = 0.9
    agreement_k: int | None = None
    stratify_by_length: bool = True
    partial: float | None = None
    interactive: bool = False
    refill: bool = False
    oracle_fill: bool = False
    flag_detector: float | None = None

    @property
    def partial_annotation(self) -> bool:
        """True when the oracle touches only some words (``partial`` and/or ``flag_detector``)."""
        return self.partial is not None or self.flag_detector is not None

    def __post_init__(self) -> None:
        for name, minimum in (("seed_trees", 1), ("per_round", 1), ("rounds", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        if self.strategy not in ALL_STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; known: {', '.join(ALL_STRATEGIES)}")
        if self.self_training not in SELF_TRAINING:
            raise ValueError(f"self_training must be one of {', '.join(SELF_TRAINING)}, "
                             f"got {self.self_training!r}")
        if self.select not in SELECTIONS:
            raise ValueError(f"select must be one of {', '.join(SELECTIONS)}, got {self.select!r}")
        names = member_names(",".join(self.parsers))
        if not names:
            raise ValueError("a simulation needs at least one member parser")
        if not method_spec(self.ensemble).uses(names):
            raise ValueError(f"ensemble {self.ensemble} combines none of {', '.join(names)}")
        unknown = sorted(set(self.member_params) - {*names, "ensemble"})
        if unknown:
            raise ValueError(f"member parameters for {', '.join(unknown)}, which is not simulated")
        if not 0.0 <= self.max_similarity <= 1.0:
            raise ValueError(f"max_similarity must lie in [0, 1], got {self.max_similarity}")
        if self.partial is not None and not 0.0 < self.partial <= 1.0:
            raise ValueError(f"partial must be a vote-share threshold in (0, 1], got {self.partial}")
        if self.flag_detector is not None and not 0.0 < self.flag_detector <= 1.0:
            raise ValueError(f"flag_detector must be a p_wrong threshold in (0, 1], got {self.flag_detector}")
        if self.interactive and self.partial is None:
            raise ValueError("interactive re-parsing is a way of partial annotation: give partial too")
        if self.interactive and self.flag_detector is not None:
            raise ValueError("interactive re-parsing re-reads the vote shares only: it does not take "
                             "flag_detector")
        for name in ("refill", "oracle_fill"):
            if getattr(self, name) and not self.partial_annotation:
                raise ValueError(f"{name} fills the parser arcs of partial trees: give partial too")
        self.self_training_config()  # validates the self-training settings
        self.plan()  # validates the members' and the ensemble's settings

    def plan(self) -> TrainingPlan:
        """What every round trains (:class:`~parsing.plan.TrainingPlan`): the members and
        their settings, the ensemble and its settings (``member_params["ensemble"]``), the
        seed and warm rounds; the treebank's own (gold) tags.

        Raises:
            ValueError: a setting a member or the method does not take, naming it.
        """
        return TrainingPlan(
            members=tuple(self.parsers), tags="gold",
            settings={name: dict(values) for name, values in self.member_params.items()
                      if name != "ensemble" and values},
            ensemble=self.ensemble, ensemble_settings=dict(self.member_params.get("ensemble") or {}),
            seed=self.seed, warm=self.warm)

    def self_training_config(self, random_state: int | None = None) -> SelfTrainingConfig:
        """The self-training settings (``source`` "ensemble" when self-training is off)."""
        return SelfTrainingConfig(
            source="ensemble" if self.self_training == "none" else self.self_training,
            select=self.select, max_automatic=self.max_automatic, max_share=self.max_share,
            agreement_k=self.agreement_k, min_confidence=self.min_confidence,
            stratify_by_length=self.stratify_by_length,
            random_state=self.seed if random_state is None else random_state,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings."""
        settings = asdict(self)
        settings["parsers"] = list(self.parsers)
        settings["member_params"] = {name: dict(values) for name, values in self.member_params.items()}
        return settings


def _hidden(sentence: Sentence) -> Sentence:
    """A copy without its tree (the pool as an annotator first sees it)."""
    size = len(sentence.forms)
    return replace(sentence, heads=np.full(size, NO_HEAD, dtype=np.intp), deprels=["", *["_"] * (size - 1)])


def round_detector_scores(model: RoundModel, human: Sequence[Sentence], dev: Sequence[Sentence],
                          pool: Sequence[Sentence], by_name: Mapping[str, Sequence[Parse]],
                          trees: Sequence[Parse], *, seed: int = 0) -> list[NDArray[np.float64]]:
    """The ``detector`` strategy's scores: an arc error detector (:mod:`parsing.detect`) fitted on
    this round's parses of ``dev`` (which its members never train on), counting the ``human``
    trees, scores each pool sentence's ensemble tree; ``p_wrong`` per word of each, shape
    ``(n_s,)``."""
    return _round_detector(model, human, dev, seed=seed)(pool, by_name, trees)


Scorer = Callable[[Sequence[Sentence], Mapping[str, Sequence[Parse]], Sequence[Parse]],
                  list[NDArray[np.float64]]]
"""``(sentences, member parses by name, ensemble trees) -> p_wrong of each tree's words``."""


def _round_detector(model: RoundModel, human: Sequence[Sentence], dev: Sequence[Sentence], *,
                    seed: int = 0) -> Scorer:
    """The round's fitted detector (:func:`round_detector_scores`), as a scorer of trees."""
    from parsing.detect.bundle import with_tags
    from parsing.detect.model import ScoredTree, fit_detector

    weights = model.weights()
    dev_parses, dev_trees = model.parse(dev)
    tuning = [ScoredTree(s, t.heads, list(t.deprels), {n: dev_parses[n][i] for n in model.names})
              for i, (s, t) in enumerate(zip(dev, dev_trees, strict=True))]
    confident = [n for n in model.names if model.members[n].gives_arc_probabilities]
    detector = fit_detector([h for h in human if h.has_tree], tuning, dev, model.names, weights,
                            random_state=seed, synthetic_copies=0, confident=confident)

    def score(sentences: Sequence[Sentence], by_name: Mapping[str, Sequence[Parse]],
              trees: Sequence[Parse]) -> list[NDArray[np.float64]]:
        scored = [ScoredTree(with_tags(s, t.upos), t.heads, list(t.deprels),
                             {n: by_name[n][i] for n in model.names})
                  for i, (s, t) in enumerate(zip(sentences, trees, strict=True))]
        return detector.score(scored)

    return score


def _identifier(sentence: Sentence, index: int) -> str:
    return sentence.sent_id or f"#{index}"


def run_simulation(
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    config: SimulationConfig,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Simulate ``config.rounds`` annotation rounds after a seed round (module docstring).

    Args:
        train: gold trees; ``seed_trees`` of them start annotated, the rest is the pool.
        dev: gold trees the rounds are scored on.
        progress: told one line per round.

    Returns:
        ``{"config": config.to_dict(), "rounds": [...]}``; each round has ``round``,
        ``annotated_sentences``, ``annotated_tokens``, ``dev_uas``, ``dev_las`` (the
        ensemble's, %), ``members`` (``{NAME: {"uas", "las"}}``), ``train_s`` (seconds
        training that round), ``parse_s`` (seconds parsing the pool), ``selected_ids``
        (sent_ids revealed that round; the seed trees in round 0), ``automatic_sentences``
        (by member), ``warm_members``, ``pool_sentences`` (left after the round). Stops
        early when the pool runs out.

    Raises:
        ValueError: a sentence without a tree, or more seed trees than training sentences.
    """
    say = progress or (lambda message: None)
    if config.seed_trees > len(train):
        raise ValueError(f"seed_trees={config.seed_trees} but the training file has {len(train)} sentences")
    for label, corpus in (("train", train), ("dev", dev)):
        missing = next((i for i, s in enumerate(corpus) if not s.has_tree), None)
        if missing is not None:
            raise ValueError(f"{label} sentence {missing + 1} has no tree; a simulation needs gold trees")
    order = np.random.default_rng(config.seed).permutation(len(train))
    annotated = [int(i) for i in order[: config.seed_trees]]
    pool = sorted(int(i) for i in order[config.seed_trees:])
    hidden = {i: _hidden(train[i]) for i in pool}
    needs_parses = (config.strategy not in ("random", "longest") or config.self_training != "none"
                    or config.partial_annotation)
    trees = {i: train[i] for i in annotated}  # what the annotator left: gold, or partial trees
    touched = {i: len(train[i]) for i in annotated}  # human-touched words per annotated sentence
    model: RoundModel | None = None
    plan = config.plan()
    automatic: dict[str, list[Sentence]] = {}
    rounds: list[dict[str, Any]] = []
    for number in range(config.rounds + 1):
        selected: list[int] = list(annotated) if number == 0 else []
        parse_s = 0.0
        if number > 0:
            if not pool:
                say(f"round {number}: the pool is empty, stopping")
                break
            assert model is not None
            if config.refill:
                _refill(model, trees, hidden, [i for i in annotated if trees[i].partial])
            sentences = [hidden[i] for i in pool]
            member_parses: list[list[Parse]] = []
            ensemble_parses: list[Parse] = []
            by_name: dict[str, list[Parse]] = {}
            if needs_parses:
                started = time.perf_counter()
                by_name, ensemble_parses = model.parse(sentences)
                member_parses = [by_name[name] for name in model.names]
                parse_s = time.perf_counter() - started
            detector = (_round_detector(model, [trees[i] for i in annotated], dev, seed=config.seed)
                        if config.strategy == "detector" or config.flag_detector is not None else None)
            p_wrong = (detector(sentences, by_name, ensemble_parses)
                       if detector is not None and config.strategy == "detector" else None)
            ranked = rank_sentences(config.strategy, sentences, member_parses, ensemble_parses,
                                    weights=model.weights() if member_parses else None,
                                    random_state=config.seed * 1000 + number, p_wrong=p_wrong)
            batch = select_batch(ranked, sentences, config.per_round, diversity=config.diversity,
                                 max_similarity=config.max_similarity)
            selected = [pool[j] for j in batch]
            annotated.extend(selected)
            flags: list[NDArray[np.float64]] | None = None
            if config.flag_detector is not None:
                assert detector is not None
                flags = ([p_wrong[j] for j in batch] if p_wrong is not None else
                         detector([sentences[j] for j in batch], {n: [by_name[n][j] for j in batch]
                                                                   for n in model.names},
                                  [ensemble_parses[j] for j in batch]))
            annotations = _annotate(config, [train[pool[j]] for j in batch], [sentences[j] for j in batch],
                                    model, [[parses[j] for parses in member_parses] for j in batch],
                                    [ensemble_parses[j] for j in batch] if ensemble_parses else [],
                                    p_wrong=flags)
            for j, (tree, count) in zip(batch, annotations, strict=True):
                trees[pool[j]], touched[pool[j]] = tree, count
            if config.self_training != "none":
                taken = set(batch)
                rest = [j for j in range(len(pool)) if j not in taken]
                rest_parses = {name: [parses[j] for j in rest]
                               for name, parses in zip(model.names, member_parses, strict=True)}
                automatic = _automatic(config, number, [sentences[j] for j in rest], rest_parses,
                                       [ensemble_parses[j] for j in rest], len(annotated), model.weights())
            chosen = set(selected)
            pool = [i for i in pool if i not in chosen]
        human = [trees[i] for i in annotated]
        started = time.perf_counter()
        model = train_round(plan, human, dev, automatic, previous=model)
        train_s = time.perf_counter() - started
        ensemble_scores, member_scores = score_round(dev, model)
        record: dict[str, Any] = {
            "round": number,
            "annotated_sentences": len(annotated),
            "annotated_tokens": sum(touched[i] for i in annotated),
            "annotated_words": sum(len(train[i]) for i in annotated),
            **ensemble_scores,
            "members": member_scores,
            "train_s": round(train_s, 3),
            "parse_s": round(parse_s, 3),
            "selected_ids": [_identifier(train[i], i) for i in selected],
            "automatic_sentences": {name: len(automatic.get(name, ())) for name in model.names},
            "warm_members": model.warm,
            "pool_sentences": len(pool),
        }
        rounds.append(record)
        say(f"round {number}: {record['annotated_sentences']} sentences, {record['annotated_tokens']} "
            f"tokens, dev UAS {record['dev_uas']:.2f} LAS {record['dev_las']:.2f}, trained in {train_s:.1f}s")
    return {"config": config.to_dict(), "rounds": rounds}


def _annotate(config: SimulationConfig, golds: Sequence[Sentence], hidden: Sequence[Sentence],
              model: RoundModel, member_parses: Sequence[Sequence[Parse]], ensemble_parses: Sequence[Parse],
              *, p_wrong: Sequence[NDArray[np.float64]] | None = None) -> list[tuple[Sentence, int]]:
    """The oracle's tree of each selected sentence and how many of its words it touched.

    Args:
        golds: the selected sentences with their trees; ``hidden``: the same without them.
        member_parses: each sentence's member parses (in ``model.names`` order); with
            ``ensemble_parses`` empty when the strategy parsed nothing (whole sentences only).
        p_wrong: with ``config.flag_detector``, the round detector's scores of each sentence's
            ensemble tree, shape ``(n_s,)`` each.
    """
    if not config.partial_annotation:
        return [(gold, len(gold)) for gold in golds]
    if not config.interactive:
        flags: Sequence[NDArray[np.float64] | None] = p_wrong if p_wrong is not None else [None] * len(golds)
        results = [partial_tree(gold, parses, tree, model.weights(), config.partial, p_wrong=scores,
                                min_p_wrong=config.flag_detector if scores is not None else None)
                   for gold, parses, tree, scores in zip(golds, member_parses, ensemble_parses, flags,
                                                         strict=True)]
    else:
        by_name = {name: [parses[m] for parses in member_parses] for m, name in enumerate(model.names)}

        def reparse(indices: Sequence[int], constraints: Sequence[Constraints]
                    ) -> tuple[list[list[Parse]], list[Parse]]:
            unconstrained = ({name: [parses[i] for i in indices] for name, parses in by_name.items()},
                             [ensemble_parses[i] for i in indices])
            return model.reparse([hidden[i] for i in indices], constraints, unconstrained)

        assert config.partial is not None  # interactive needs a share threshold (__post_init__)
        results = interactive_partial_trees(golds, member_parses, ensemble_parses, model.weights(),
                                            config.partial, reparse)
    if config.oracle_fill:  # the bound: whole true trees, the touched words' cost
        results = [(gold, touched) for gold, (_, touched) in zip(golds, results, strict=True)]
    return [(tree, int(touched.sum())) for tree, touched in results]


def _refill(model: RoundModel, trees: dict[int, Sentence], hidden: Mapping[int, Sentence],
            indices: Sequence[int]) -> None:
    """Fill the parser arcs of the partial trees ``trees[i]`` (``i`` in ``indices``) again with
    ``model``, around their human arcs, in place."""
    if not indices:
        return
    by_name, ensemble_parses = model.parse([hidden[i] for i in indices])
    weights = model.weights()
    for k, i in enumerate(indices):
        trees[i] = refill(trees[i], [by_name[name][k] for name in model.names], ensemble_parses[k], weights)


def _automatic(config: SimulationConfig, number: int, rest: Sequence[Sentence],
               member_parses: Mapping[str, Sequence[Parse]], ensemble_parses: Sequence[Parse],
               n_human: int, weights: Sequence[float]) -> dict[str, list[Sentence]]:
    """This round's automatic trees from the part of the pool nobody annotated."""
    settings = config.self_training_config(random_state=config.seed * 1000 + number)
    chosen = select_candidates(settings, rest, list(member_parses.values()), ensemble_parses, n_human,
                               weights=weights)
    return automatic_trees(settings.source, rest, member_parses, ensemble_parses, chosen)


def learning_curve_svg(result: Mapping[str, Any], *, title: str | None = None) -> str:
    """The ensemble's and every member's dev LAS against annotated tokens, as an SVG chart."""
    rounds = list(result.get("rounds", []))
    series: dict[str, list[tuple[float, float]]] = {
        "ensemble": [(float(r["annotated_tokens"]), float(r["dev_las"])) for r in rounds]
    }
    for r in rounds:
        for name, scores in r["members"].items():
            series.setdefault(name, []).append((float(r["annotated_tokens"]), float(scores["las"])))
    config = result.get("config", {})
    heading = title or f"Dev LAS by annotated tokens ({config.get('strategy', '?')} selection)"
    return line_chart_svg(series, title=heading, x_label="annotated tokens", y_label="dev LAS (%)",
                          highlight="ensemble")
