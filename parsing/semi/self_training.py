"""Self-training: automatically parsed pool sentences as extra training trees.

Green (2013) §3.3 (digest 003 §2.4(d), §4.5) retrains every member on pool sentences parsed
automatically, labelled either by the member itself (scenario A, ``source="own"``) or by
the ensemble (scenario B, ``source="ensemble"``); scenario B helped all seven members.
Which parsed sentences to trust (``select``):

* ``random``: any pool sentence (Green's setting);
* ``agreement``: whole trees, heads and labels, on which at least ``agreement_k`` members
  agree (all of them by default), tri-training style (Søgaard & Rishøj 2010);
* ``confidence``: the ensemble tree's mean vote share over the words is at least
  ``min_confidence`` (Yu, Elkaref & Bohnet 2015).

Agreement and confidence favour short sentences (Li, Zhang & Chen 2014: agreed sentences
averaged 18 words), so with ``stratify_by_length`` the selected sentences follow the pool's
length distribution (quantile bins). At most ``min(max_automatic, max_share * n_human)``
automatic trees are chosen; human trees are never dropped or replaced: the caller trains
on human trees *plus* these (:func:`parsing.pipeline.train_plan`'s ``extra_train``).

:class:`SelfTrainingBundle` wraps it all as a meta-estimator: train on the human trees,
parse the pool, select, retrain.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from parsing.ensemble.base import stack_heads
from parsing.ensemble.registry import DEFAULT_METHOD
from parsing.ensemble.voting import ensemble_vote_weights, vote_share
from parsing.pipeline import load_models, train_plan
from parsing.plan import TrainingPlan
from parsing.types import Parse, Sentence

__all__ = [
    "LABEL_SOURCES",
    "SELECTIONS",
    "SelfTrainingBundle",
    "SelfTrainingConfig",
    "automatic_trees",
    "ensemble_vote_weights",
    "length_bins",
    "mean_vote_shares",
    "select_automatic",
    "select_candidates",
    "tree_agreement",
]

LABEL_SOURCES: tuple[str, ...] = ("own", "ensemble")
"""Whose trees a member learns from: its own output (Green's scenario A) or the ensemble's (B)."""

SELECTIONS: tuple[str, ...] = ("random", "agreement", "confidence")
"""Which automatically parsed sentences are trusted (module docstring)."""


def _is_count(value: object, minimum: int) -> bool:
    """``value`` is an integer (not a bool) of at least ``minimum``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


@dataclass(frozen=True, slots=True)
class SelfTrainingConfig:
    """How many automatic trees, from whom, chosen how.

    Attributes:
        source: one of :data:`LABEL_SOURCES`.
        select: one of :data:`SELECTIONS`.
        max_automatic: at most this many automatic trees (``None``: no fixed cap).
        max_share: at most ``max_share`` times as many automatic trees as human ones.
        agreement_k: ``agreement`` keeps trees on which at least this many members agree
            (``None``: all members).
        min_confidence: ``confidence`` keeps trees whose mean vote share is at least this.
        stratify_by_length: draw so the selection's length distribution follows the pool's.
        length_bins: how many length quantile bins stratification uses.
        random_state: seed of every random draw.
    """

    source: str = "ensemble"
    select: str = "confidence"
    max_automatic: int | None = None
    max_share: float = 1.0
    agreement_k: int | None = None
    min_confidence: float = 0.9
    stratify_by_length: bool = True
    length_bins: int = 4
    random_state: int = 0

    def __post_init__(self) -> None:
        if self.source not in LABEL_SOURCES:
            raise ValueError(f"self-training source must be one of {', '.join(LABEL_SOURCES)}, "
                             f"got {self.source!r}")
        if self.select not in SELECTIONS:
            raise ValueError(f"self-training selection must be one of {', '.join(SELECTIONS)}, "
                             f"got {self.select!r}")
        if self.max_automatic is not None and not _is_count(self.max_automatic, 0):
            raise ValueError(f"max_automatic must be None or an integer >= 0, got {self.max_automatic!r}")
        if not (isinstance(self.max_share, int | float) and math.isfinite(self.max_share)
                and self.max_share >= 0):
            raise ValueError(f"max_share must be a finite number >= 0, got {self.max_share!r}")
        if self.agreement_k is not None and not _is_count(self.agreement_k, 1):
            raise ValueError(f"agreement_k must be None or an integer >= 1, got {self.agreement_k!r}")
        if not (isinstance(self.min_confidence, int | float) and 0.0 <= self.min_confidence <= 1.0):
            raise ValueError(f"min_confidence must lie in [0, 1], got {self.min_confidence!r}")
        if not _is_count(self.length_bins, 1):
            raise ValueError(f"length_bins must be an integer >= 1, got {self.length_bins!r}")

    def bound(self, n_human: int) -> int:
        """The most automatic trees allowed beside ``n_human`` human trees.

        Examples:
            >>> SelfTrainingConfig(max_share=0.5).bound(30), SelfTrainingConfig(max_automatic=7).bound(30)
            (15, 7)
        """
        by_share = math.floor(self.max_share * n_human + 1e-9)
        return by_share if self.max_automatic is None else min(self.max_automatic, by_share)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings."""
        return asdict(self)


# --------------------------------------------------------------------------- pure helpers


def tree_agreement(member_parses: Sequence[Sequence[Parse]]) -> NDArray[np.intp]:
    """For each sentence, how many members share the most common whole tree (heads and labels).

    Args:
        member_parses: ``M`` lists of ``S`` parses.

    Returns:
        shape ``(S,)``, values in ``1..M``.

    Examples:
        >>> a = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> b = Parse(np.array([-1, 0, 1]), ["", "root", "nsubj"])
        >>> tree_agreement([[a, a], [a, b], [a, a]]).tolist()
        [3, 2]
    """
    if not member_parses:
        raise ValueError("tree agreement needs at least one member's parses")
    sizes = {len(member) for member in member_parses}
    if len(sizes) != 1:
        raise ValueError(f"members parsed different numbers of sentences: {sorted(sizes)}")
    counts = np.zeros(sizes.pop(), dtype=np.intp)
    for s, parses in enumerate(zip(*member_parses, strict=True)):
        trees: dict[tuple[tuple[int, ...], tuple[str, ...]], int] = {}
        for parse in parses:
            key = (tuple(int(h) for h in parse.heads), tuple(parse.deprels))
            trees[key] = trees.get(key, 0) + 1
        counts[s] = max(trees.values())
    return counts


def mean_vote_shares(
    member_parses: Sequence[Sequence[Parse]],
    ensemble_parses: Sequence[Parse],
    weights: Sequence[float] | None = None,
) -> NDArray[np.float64]:
    """Mean vote share of the ensemble's heads over each sentence's words, shape ``(S,)``.

    Args:
        member_parses: ``M`` lists of ``S`` parses.
        ensemble_parses: ``S`` parses.
        weights: member weights, shape ``(M,)`` (uniform when ``None``).
    """
    weight = np.ones(len(member_parses)) if weights is None else np.asarray(weights, dtype=np.float64)
    means = np.ones(len(ensemble_parses))
    for s, parse in enumerate(ensemble_parses):
        share = vote_share(stack_heads([member[s] for member in member_parses]), weight, parse.heads)[1:]
        if share.size:
            means[s] = float(share.mean())
    return means


def length_bins(lengths: Sequence[int], n_bins: int) -> NDArray[np.intp]:
    """The quantile bin (``0..B-1``, ``B <= n_bins``) of every length, shape ``(S,)``.

    Examples:
        >>> length_bins([3, 5, 8, 13, 21, 34, 55, 89], 4).tolist()
        [0, 0, 1, 1, 2, 2, 3, 3]
        >>> length_bins([4, 4, 4], 4).tolist()
        [0, 0, 0]
    """
    values = np.asarray(lengths, dtype=np.float64)
    if values.size == 0:
        return np.zeros(0, dtype=np.intp)
    edges = np.unique(np.quantile(values, np.linspace(0.0, 1.0, n_bins + 1))[1:-1])
    bins: NDArray[np.intp] = np.searchsorted(edges, values, side="left").astype(np.intp)
    return bins


def _quotas(bound: int, shares: NDArray[np.float64]) -> NDArray[np.intp]:
    """``bound`` split by ``shares`` (summing to 1) with largest remainders."""
    exact = bound * shares
    quotas = np.floor(exact).astype(np.intp)
    order = np.argsort(-(exact - quotas), kind="stable")
    quotas[order[: bound - int(quotas.sum())]] += 1
    return quotas


def _stratified(candidates: NDArray[np.intp], bins: NDArray[np.intp], bound: int,
                rng: np.random.Generator) -> list[int]:
    """Up to ``bound`` candidates, each pool length bin getting its share of ``bound``.

    A bin short of candidates gives fewer; the others do not make up for it (that would
    tilt the sample back towards the bins agreement favours)."""
    n_bins = int(bins.max()) + 1
    pool_share = np.bincount(bins, minlength=n_bins) / bins.size
    chosen: list[int] = []
    for b, quota in enumerate(_quotas(bound, pool_share)):
        in_bin = candidates[bins[candidates] == b]
        chosen.extend(int(i) for i in rng.permutation(in_bin)[:quota])
    return sorted(chosen)


def select_candidates(
    config: SelfTrainingConfig,
    pool: Sequence[Sentence],
    member_parses: Sequence[Sequence[Parse]],
    ensemble_parses: Sequence[Parse] | None,
    n_human: int,
    *,
    weights: Sequence[float] | None = None,
) -> list[int]:
    """Positions in ``pool`` of the sentences whose automatic trees to train on (sorted).

    Args:
        config: the self-training settings.
        pool: the ``S`` automatically parsed sentences.
        member_parses: ``M`` lists of ``S`` parses.
        ensemble_parses: ``S`` parses (needed by ``confidence``; ``None`` otherwise allowed).
        n_human: how many human trees the automatic ones join (bounds their number).
        weights: member weights for vote shares, shape ``(M,)``.

    Raises:
        ValueError: ``agreement_k`` above the number of members, or missing parses.
    """
    size = len(pool)
    bound = min(config.bound(n_human), size)
    if bound == 0:
        return []
    rng = np.random.default_rng(config.random_state)
    if config.select == "random":
        keep = np.ones(size, dtype=bool)
    elif config.select == "agreement":
        k = len(member_parses) if config.agreement_k is None else config.agreement_k
        if k > len(member_parses):
            raise ValueError(f"agreement_k={k} but only {len(member_parses)} members parsed the pool")
        keep = tree_agreement(member_parses) >= k
    else:
        if ensemble_parses is None:
            raise ValueError("confidence selection needs the ensemble's parses")
        keep = mean_vote_shares(member_parses, ensemble_parses, weights) >= config.min_confidence - 1e-12
    candidates = np.flatnonzero(keep).astype(np.intp)
    if config.stratify_by_length:
        return _stratified(candidates, length_bins([len(s) for s in pool], config.length_bins), bound, rng)
    return sorted(int(i) for i in rng.permutation(candidates)[:bound])


def _with_tree(sentence: Sentence, parse: Parse) -> Sentence:
    if len(parse.heads) != len(sentence.forms):
        raise ValueError(f"a parse of {len(parse)} words for a sentence of {len(sentence)} words")
    return replace(sentence, heads=np.asarray(parse.heads, dtype=np.intp).copy(), deprels=list(parse.deprels))


def select_automatic(
    config: SelfTrainingConfig,
    pool: Sequence[Sentence],
    member_parses: Mapping[str, Sequence[Parse]],
    ensemble_parses: Sequence[Parse] | None,
    n_human: int,
    *,
    weights: Mapping[str, float] | None = None,
) -> dict[str, list[Sentence]]:
    """Every member's automatic training sentences.

    The selected pool sentences (:func:`select_candidates`, the same for every member) are
    copied with the chosen tree: the member's own parse (``source="own"``) or the
    ensemble's (``"ensemble"``). The pool sentences are not modified.

    Args:
        member_parses: each member's ``S`` parses of ``pool``, by name.
        ensemble_parses: the ensemble's ``S`` parses (needed by ``source="ensemble"`` and
            ``select="confidence"``).
        weights: member weights for vote shares, by name (1 for a member not named).

    Returns:
        name -> automatic sentences, for every member in ``member_parses``.
    """
    names = list(member_parses)
    if config.source == "ensemble" and ensemble_parses is None:
        raise ValueError("ensemble labels need the ensemble's parses")
    vector = [float((weights or {}).get(name, 1.0)) for name in names]
    chosen = select_candidates(config, pool, [member_parses[name] for name in names], ensemble_parses,
                               n_human, weights=vector)
    return automatic_trees(config.source, pool, member_parses, ensemble_parses, chosen)


def automatic_trees(
    source: str,
    pool: Sequence[Sentence],
    member_parses: Mapping[str, Sequence[Parse]],
    ensemble_parses: Sequence[Parse] | None,
    chosen: Sequence[int],
) -> dict[str, list[Sentence]]:
    """Copies of the ``chosen`` pool sentences carrying each member's training tree: its own
    parse (``source="own"``) or the ensemble's (``"ensemble"``, one shared copy per sentence)."""
    if source not in LABEL_SOURCES:
        raise ValueError(f"self-training source must be one of {', '.join(LABEL_SOURCES)}, got {source!r}")
    names = list(member_parses)
    if source == "ensemble":
        if ensemble_parses is None:
            raise ValueError("ensemble labels need the ensemble's parses")
        shared = [_with_tree(pool[i], ensemble_parses[i]) for i in chosen]
        return {name: list(shared) for name in names}
    return {name: [_with_tree(pool[i], member_parses[name][i]) for i in chosen] for name in names}


# --------------------------------------------------------------------------- meta-estimator


class SelfTrainingBundle(BaseEstimator):  # type: ignore[misc]
    """Train members and an ensemble, parse a pool, retrain with automatic trees.

    A scikit-learn style meta-estimator around :func:`parsing.pipeline.train_plan` (one
    :class:`~parsing.plan.TrainingPlan` for both trainings).

    Args:
        parsers: member names (default: every member).
        config: the self-training settings (default: :class:`SelfTrainingConfig()` with
            this estimator's ``random_state``).
        ensemble: combination method fitted over the members (labels and vote shares).
        params: member hyperparameters by name (``{"eager": {"epochs": 3}}``).
        tags: ``"gold"`` or ``"predicted"`` UPOS, as in :func:`~parsing.pipeline.train_plan`.
        jobs: members trained and parsed in parallel processes.
        random_state: seed of the members and the ensemble.

    Attributes:
        model_dir_: the retrained model directory (load it with
            :func:`parsing.pipeline.load_models`).
        automatic_ids_: pool positions of the sentences chosen as automatic trees.
        n_automatic_: automatic trees each member was retrained with.
        seed_seconds_, seconds_: training seconds of the first and the final training.

    Examples:
        >>> SelfTrainingBundle(parsers=("graph1", "eager")).get_params()["ensemble"]
        'vote-uniform'
    """

    def __init__(
        self,
        parsers: Sequence[str] | None = None,
        *,
        config: SelfTrainingConfig | None = None,
        ensemble: str = DEFAULT_METHOD,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        tags: str = "gold",
        jobs: int = 1,
        random_state: int = 0,
    ) -> None:
        self.parsers = parsers
        self.config = config
        self.ensemble = ensemble
        self.params = params
        self.tags = tags
        self.jobs = jobs
        self.random_state = random_state

    def fit(self, train: Sequence[Sentence], dev: Sequence[Sentence] | None, pool: Sequence[Sentence],
            out_dir: str | Path) -> Self:
        """Train on ``train`` (human trees), parse ``pool``, select automatic trees, retrain
        into ``out_dir`` on ``train`` plus them. The ensemble is fitted on human trees only."""
        config = self.config or SelfTrainingConfig(random_state=self.random_state)
        names = list(self.parsers) if self.parsers else None
        tags = "predicted" if self.tags == "predicted" else "gold"
        plan = TrainingPlan.from_options(names=names, tags=tags, jobs=self.jobs,
                                         random_state=self.random_state, params=self.params,
                                         ensemble=self.ensemble)
        with tempfile.TemporaryDirectory(prefix="self-training-") as seed_dir:
            self.seed_seconds_ = train_plan(plan, train, dev, seed_dir)
            seed = load_models(seed_dir)
            members, combined = seed.parse_with_ensemble(pool, jobs=self.jobs)
            weights = ensemble_vote_weights(seed.ensemble, seed.ensemble_members, list(seed.parsers))
        by_name = {name: members[name] for name in seed.parsers}
        vector = [weights[name] for name in by_name]
        self.automatic_ids_ = select_candidates(config, pool, list(by_name.values()), combined,
                                                len(train), weights=vector)
        automatic = automatic_trees(config.source, pool, by_name, combined, self.automatic_ids_)
        self.n_automatic_ = {name: len(trees) for name, trees in automatic.items()}
        self.seconds_ = train_plan(plan, train, dev, out_dir, extra_train=automatic)
        self.model_dir_ = Path(out_dir)
        return self
