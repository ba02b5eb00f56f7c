"""External parsers voting in a round's ensemble (issue #16): an uploaded parse or a plugin's trees
join the arc vote of the members (:mod:`parsing.ensemble.extra_voters`).

A pre-annotation opts in per round (``params["externals"]``, the pre-annotate panel's
checkboxes, ``treebank preannotate --external LABEL``). Only methods whose tree is a weighted
arc vote take external voters (:attr:`~parsing.ensemble.registry.MethodSpec.votes`: the vote-*
methods and fuzzy-pos); the others combine their members' scores or features, which an
external parser does not have.

Weights (:func:`plan_voters`): with ``vote-uniform`` one vote like each member. With a weighted
method (``vote-accuracy``, ``-power``, ``-rank``) the external parser's dev UAS, scored like
the members' on the dev split's trees it has a parse of, goes through the same scheme; without
a dev split, or without a parse of any dev sentence, it votes as an average member (the mean of
the members' weights; with fuzzy-pos, per word, the mean of the members' per-UPOS weights).
On a sentence it has no tree for it abstains: the vote there is the members' own.

The round's own scores (``TrainingRound.scores``, on dev or a held-out slice) stay those of the
members' ensemble: an external voter's weight comes from dev, so its vote there would flatter
it; the scoreboard scores the ensemble trees it helped make on test or reviewed trees. A
re-parse around an annotator's arcs in the editor (:mod:`app.services.reparse`) combines the
members only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import select

from app.models import Treebank
from app.parser_models import ExternalParser
from app.services import DbSession
from app.services.parsing_adapter import with_trees
from app.services.sources import parse_of_version, split_sentence_ids
from app.services.trees import latest_versions
from parsing.ensemble.base import member_accuracy
from parsing.ensemble.extra_voters import extra_voter_weight, member_vote_weights, voters
from parsing.ensemble.registry import method_spec
from parsing.ensemble.voting import combine_votes, ensemble_label_weights
from parsing.pipeline import ModelBundle
from parsing.types import Parse
from parsing.types import Sentence as ParsingSentence


class VoterError(ValueError):
    """External voters a round cannot take; the message names which and why."""


@dataclass
class ExternalVoter:
    """One external parser voting in a round: its weight (None: an average member's), its dev
    UAS (a fraction, None when unknown) and how many sentences it voted on so far."""

    label: str
    weight: float | None
    dev_uas: float | None
    sentences: int = 0

    def to_json(self) -> dict[str, Any]:
        """The ``TrainingRound.external_voters`` entry."""
        return {"label": self.label, "weight": self.weight, "dev_uas": self.dev_uas,
                "sentences": self.sentences}


@dataclass
class Ballot:
    """Every voter's parse of one sentence (members first, then the external parsers that have
    one) and their weights, shape ``(V, n+1)``: what the vote shares are computed from."""

    parses: list[Parse]
    weights: np.ndarray
    externals: list[str] = field(default_factory=list)


def check_voters(session: DbSession, treebank: Treebank, labels: Sequence[str], method: str) -> list[str]:
    """``labels`` (deduplicated) when each names an external parser of ``treebank`` and ``method``
    votes.

    :raise VoterError: naming the unknown label or the method that does not vote.
    """
    chosen = [str(label) for label in dict.fromkeys(labels)]
    if not chosen:
        return []
    if not method_spec(method).votes:
        raise VoterError(f"ensemble {method} does not vote over trees, so external parsers cannot join it: "
                         "choose a vote-* method or fuzzy-pos")
    known = set(session.scalars(select(ExternalParser.label)
                                .where(ExternalParser.treebank_id == treebank.id)))
    unknown = [label for label in chosen if label not in known]
    if unknown:
        raise VoterError(f"{', '.join(unknown)}: no external parser of {treebank.name} has this label "
                         f"(known: {', '.join(sorted(known)) or 'none'})")
    return chosen


def dev_accuracy(session: DbSession, treebank: Treebank, label: str) -> float | None:
    """UAS (a fraction) of ``label``'s newest trees on the dev split's trees (corrected, else gold),
    over the dev sentences it has a tree of; None without any."""
    ids = split_sentence_ids(session, treebank, "dev")
    if not ids:
        return None
    trees = latest_versions(session, ids, label)
    gold = [(sid, s) for sid, s in with_trees(session, [sid for sid in ids if sid in trees])
            if len(trees[sid].heads) == len(s)]
    if not gold:
        return None
    parses = [parse_of_version(trees[sid]) for sid, _ in gold]
    return float(member_accuracy([s for _, s in gold], [parses])[0])


def plan_voters(session: DbSession, treebank: Treebank, bundle: ModelBundle, labels: Sequence[str]
                ) -> list[ExternalVoter]:
    """The round's external voters with their weights (module docstring)."""
    ensemble = bundle.ensemble
    weighting = _weighting(ensemble)
    accuracies = getattr(ensemble, "accuracies_", None)
    exponent = float(getattr(ensemble, "exponent_", getattr(ensemble, "exponent", 10.0)))  # tuned k
    planned = []
    for label in labels:
        accuracy = dev_accuracy(session, treebank, label)
        weight = extra_voter_weight(weighting, accuracy, accuracies, exponent=exponent)
        planned.append(ExternalVoter(label, weight, accuracy))
    return planned


def _weighting(ensemble: object) -> str:
    """The scheme an external voter's weight follows: the arc vote's ``weighting``; ``explicit``
    (weights given by hand) and ``per-tag`` (fuzzy-pos) make it an average member."""
    if getattr(ensemble, "weights", None) is not None:
        return "explicit"
    return str(getattr(ensemble, "weighting", "per-tag"))


def prepare_voters(session: DbSession, treebank: Treebank, bundle: ModelBundle, labels: Sequence[str], *,
                   run_plugins: Callable[[Sequence[int]], object]) -> list[ExternalVoter]:
    """:func:`plan_voters` after ``run_plugins`` ran the plugins over the dev split's sentence ids
    when ``labels`` has a plugin (so their dev UAS is known): the caller's function, run where
    no transaction is open (:mod:`app.jobs.plugin_runs`)."""
    plugins = set(session.scalars(select(ExternalParser.label).where(
        ExternalParser.treebank_id == treebank.id, ExternalParser.label.in_(list(labels)),
        (ExternalParser.command.is_not(None)) | (ExternalParser.url.is_not(None)))))
    if plugins:
        dev = split_sentence_ids(session, treebank, "dev")
        run_plugins(dev)
    return plan_voters(session, treebank, bundle, labels)


def external_parses(session: DbSession, labels: Sequence[str], sentence_ids: Sequence[int]
                    ) -> dict[str, dict[int, Parse]]:
    """The newest tree of each external parser ``label`` for each sentence that has one."""
    return {label: {sid: parse_of_version(tree)
                    for sid, tree in latest_versions(session, sentence_ids, label).items()}
            for label in labels}


def revote(
    bundle: ModelBundle, sentence: ParsingSentence, members: Mapping[str, Parse], combined: Parse,
    voters_: Sequence[ExternalVoter], external: Mapping[str, Parse | None],
) -> tuple[Parse, Ballot]:
    """The ensemble tree of one sentence with the external voters that have a parse of it (the
    others abstain), and the ballot its vote shares come from; counts each voter's sentences.

    ``members``: the ensemble members' parses by name; ``combined``: the members-only tree (whose
    predicted UPOS, if any, the new tree keeps).
    """
    names = list(bundle.ensemble_members)
    parses = [members[name] for name in names]
    weights = member_vote_weights(bundle.ensemble, sentence)
    extra = [external.get(v.label) if _fits(external.get(v.label), combined) else None for v in voters_]
    kept, matrix = voters(parses, weights, extra, [v.weight for v in voters_])
    present = [v for v, parse in zip(voters_, extra, strict=True) if parse is not None]
    for voter in present:
        voter.sentences += 1
    if not present:
        return combined, Ballot(parses, matrix)
    label_weights = ensemble_label_weights(bundle.ensemble)  # tuned label votes: a voter labels as
    if label_weights is not None:  # an average member
        label_weights = np.concatenate([label_weights, np.full(len(present), label_weights.mean())])
    tree = combine_votes(kept, matrix, projective=bool(getattr(bundle.ensemble, "projective", False)),
                         single_root=bool(getattr(bundle.ensemble, "single_root", True)),
                         label_weights=label_weights)
    tree.upos = combined.upos
    return tree, Ballot(kept, matrix, [v.label for v in present])


def _fits(parse: Parse | None, combined: Parse) -> bool:
    """Whether an external parse covers the same words (an older upload of an edited sentence
    may not): a parse that does not fit abstains."""
    return parse is not None and len(parse.heads) == len(combined.heads)


def cast_ballots(
    session: DbSession, bundle: ModelBundle, voters_: Sequence[ExternalVoter], sentence_ids: Sequence[int],
    sentences: Sequence[ParsingSentence], members: Mapping[str, Sequence[Parse]], combined: Sequence[Parse],
    weights: Sequence[float],
) -> tuple[list[Parse], list[Ballot]]:
    """The ensemble trees of a batch and their ballots. Without external voters: the members'
    trees and parses with the round's vote ``weights``, unchanged; with them, :func:`revote` of
    every sentence (an external parser without a tree of it abstains).

    ``members``: every parser's parses by name, one per sentence, as
    :meth:`~parsing.pipeline.ModelBundle.parse_with_ensemble` gives them.
    """
    names = list(bundle.parsers)
    if not voters_:
        plain = np.asarray(weights, dtype=np.float64)
        return list(combined), [Ballot([members[name][i] for name in names], plain)
                                for i in range(len(combined))]
    found = external_parses(session, [v.label for v in voters_], sentence_ids)
    trees, ballots = [], []
    for i, sentence_id in enumerate(sentence_ids):
        tagged = combined[i].upos  # predicted tags: the UPOS fuzzy-pos weighed the members by
        sentence = sentences[i] if tagged is None else replace(sentences[i], upos=list(tagged))
        tree, ballot = revote(bundle, sentence, {name: members[name][i] for name in names}, combined[i],
                              voters_, {v.label: found[v.label].get(sentence_id) for v in voters_})
        trees.append(tree)
        ballots.append(ballot)
    return trees, ballots
