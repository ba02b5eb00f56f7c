"""One simulated round's model: its fitted members and ensemble, how it is trained and scored.

:mod:`parsing.semi.simulate` trains one :class:`RoundModel` per round
(:func:`train_round`), parses the pool with it, re-parses under an annotator's arcs
(:meth:`RoundModel.reparse`) and scores it on dev with the CoNLL 2018 scorer
(:func:`score_round`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from parsing.base import BaseParser
from parsing.constraints import Constraints
from parsing.ensemble.base import Ensemble
from parsing.ensemble.registry import combine, fit_ensemble
from parsing.ensemble.reparse import reparse_under_constraints
from parsing.ensemble.voting import ensemble_vote_weights
from parsing.members import build_member, member_seed
from parsing.plan import TrainingPlan
from parsing.scorer.metrics import evaluate
from parsing.types import Parse, Sentence

__all__ = ["RoundModel", "score_round", "train_round"]


@dataclass
class RoundModel:
    """One round's fitted members and ensemble.

    Attributes:
        names: the members, in the order every per-member list follows.
        members: the fitted members by name; ensemble: the fitted combination of the
            members named in ``combined``; warm: the members that continued the previous
            round's weights.
    """

    names: list[str]
    members: dict[str, BaseParser]
    ensemble: Ensemble
    combined: list[str]
    warm: list[str]

    def parse(self, sentences: Sequence[Sentence]) -> tuple[dict[str, list[Parse]], list[Parse]]:
        """Every member's parses and the ensemble's."""
        parses = {name: self.members[name].predict(sentences) for name in self.names}
        return parses, combine(self.ensemble, self.combined, sentences, parses)

    def reparse(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                unconstrained: tuple[Mapping[str, Sequence[Parse]], Sequence[Parse]]
                ) -> tuple[list[list[Parse]], list[Parse]]:
        """Each sentence's member parses (in :attr:`names` order) and ensemble tree under
        ``constraints`` (:func:`~parsing.ensemble.reparse.reparse_under_constraints`)."""
        parses, trees = reparse_under_constraints(self.members, self.ensemble, self.combined, sentences,
                                                  constraints, unconstrained)
        return [[parses[name][i] for name in self.names] for i in range(len(sentences))], trees

    def weights(self) -> list[float]:
        """Each member's weight in vote shares (the voting ensemble's own, else 1)."""
        by_name = ensemble_vote_weights(self.ensemble, self.combined, self.names)
        return [by_name[name] for name in self.names]


def train_round(plan: TrainingPlan, human: Sequence[Sentence], dev: Sequence[Sentence],
                automatic: Mapping[str, Sequence[Sentence]], *,
                previous: RoundModel | None = None) -> RoundModel:
    """Fit the plan's members on human + automatic trees and its ensemble on human trees only.

    Args:
        plan: the members, their settings, the ensemble method and its settings, the seed
            (every member's ``random_state`` unless its settings say otherwise) and ``warm``
            (:class:`~parsing.plan.TrainingPlan`). The members take the plan's settings as
            they are, without the tag mode's (the simulation reads the treebank's own tags and
            a self-tagging member parses from the tags it predicts, as it always has here).
        human: the annotated trees; ``automatic``: extra trees by member name (self-training).
        dev: given to the members to pick their epochs, and to the ensemble.
        previous: the previous round's model; with ``plan.warm``, a member whose
            hyperparameters include ``warm_start`` continues from its weights, the others
            start cold.

    Raises:
        ValueError: a plan without an ensemble method.
    """
    if plan.ensemble is None:
        raise ValueError("a simulated round needs an ensemble method in its plan")
    names = list(plan.members)
    members: dict[str, BaseParser] = {}
    warmed: list[str] = []
    for name in names:
        parser: BaseParser | None = None
        if plan.warm and previous is not None:
            candidate = previous.members[name]
            if "warm_start" in candidate.get_params():
                candidate.set_params(warm_start=True)
                parser = candidate
                warmed.append(name)
        if parser is None:
            params = {"random_state": member_seed(name, plan.seed), **plan.settings.get(name, {})}
            parser = build_member(name, **params)
        more = automatic.get(name, ())
        parser.fit([*human, *more] if more else list(human), dev)
        members[name] = parser
    fitted, combined = fit_ensemble(plan.ensemble, members, human, dev, random_state=plan.seed,
                                    params=plan.ensemble_settings or None)
    return RoundModel(names, members, fitted, combined, warmed)


def _percent(fraction: float) -> float:
    return round(100.0 * fraction, 2)


def score_round(dev: Sequence[Sentence],
                model: RoundModel) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The ensemble's and every member's dev UAS/LAS in %."""
    parses, combined = model.parse(dev)
    scores = evaluate(dev, combined)
    members = {}
    for name in model.names:
        member = evaluate(dev, parses[name])
        members[name] = {"uas": _percent(member.uas.f1), "las": _percent(member.las.f1)}
    return {"dev_uas": _percent(scores.uas.f1), "dev_las": _percent(scores.las.f1)}, members
