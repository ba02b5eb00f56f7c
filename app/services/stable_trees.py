"""Stable pre-annotation across rounds: a round keeps a pool sentence's previous ensemble arcs
unless its members, with the previous round's members keeping a share of the vote, back new
ones by more than a margin (issue #30 item 4: one corrected tree used to rewrite most
pre-annotations). The rule is :func:`parsing.ensemble.stability.keep_previous`; the settings
were chosen on dev sentences with ``bench/churn.py`` (the user guide gives churn and cost).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.external_votes import Ballot
from app.services.parsing_adapter import parse_of_tree
from app.services.trees import latest_versions
from parsing.ensemble.stability import (
    DEFAULT_MARGIN,
    DEFAULT_PREVIOUS_WEIGHT,
    keep_previous,
    with_previous_votes,
)
from parsing.types import Parse


@dataclass(frozen=True)
class Stability:
    """``margin``: the share of the vote a new arc must lead the previous one by;
    ``previous_share``: the share of the vote the previous round's members keep."""

    margin: float = DEFAULT_MARGIN
    previous_share: float = DEFAULT_PREVIOUS_WEIGHT


def stabilise(session: DbSession, sentence_ids: Sequence[int], combined: Sequence[Parse],
              ballots: Sequence[Ballot], weights: Mapping[str, float], stability: Stability) -> list[Parse]:
    """This round's ensemble trees (``combined``, one per sentence id) with the previous
    ensemble tree's arcs kept where the vote does not clearly lead elsewhere. ``weights``: this
    round's member weights by name, given to each member's previous tree too. Read before the
    round stores its own trees (the previous versions are the newest ones)."""
    previous = latest_versions(session, list(sentence_ids), "ensemble")
    earlier = {name: latest_versions(session, list(sentence_ids), name) for name in weights}
    out = []
    for i, sentence_id in enumerate(sentence_ids):
        n = len(combined[i].heads) - 1
        tree = previous.get(sentence_id)
        if tree is None or len(tree.heads) != n:
            out.append(combined[i])
            continue
        before = [(name, version) for name in weights
                  if (version := earlier[name].get(sentence_id)) is not None and len(version.heads) == n]
        voters, vote = with_previous_votes(
            ballots[i].parses, ballots[i].weights, [parse_of_tree(v.heads, v.deprels) for _, v in before],
            [weights[name] for name, _ in before], stability.previous_share)
        out.append(keep_previous(voters, vote, combined[i], [-1, *tree.heads], ["", *tree.deprels],
                                 stability.margin))
    return out


MAX_GROWTH = 0.05
"""A round keeps previous trees only when it trains on at most this much more than the last one:
after +20% of trees (Wolof, 270 + 54) the fresh trees gain 1.9 dev LAS and the kept ones 0.4."""


def same_setup(session: DbSession, round_: TrainingRound, externals: Sequence[str]) -> bool:
    """Whether ``round_`` should keep the previous trees: it votes with the same members, method,
    tags and external voters as the newest earlier round of its treebank, and trains on at most
    :data:`MAX_GROWTH` more trees (``round_.train_sentences``, once trained). A round with other
    voters or much more data is meant to change the trees; keeping them would hide what it learnt."""
    previous = session.scalar(select(TrainingRound).where(
        TrainingRound.treebank_id == round_.treebank_id, TrainingRound.number < round_.number)
        .order_by(TrainingRound.number.desc()).limit(1))
    if previous is None:
        return True  # no earlier trees to keep anyway
    voters = {str(v.get("label")) for v in previous.external_voters or []}
    grew = (round_.train_sentences or 0) > (1 + MAX_GROWTH) * (previous.train_sentences or 0)
    return (sorted(previous.parsers) == sorted(round_.parsers) and previous.ensemble == round_.ensemble
            and previous.tags == round_.tags and voters == set(externals) and not grew)
