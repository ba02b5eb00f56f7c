"""Pre-annotation: train the members and the ensemble on a treebank, parse its pool.

1. :func:`training_data`: the train split (newest correction, else gold) plus pool sentences
   already reviewed; the dev split (gold or corrected) tunes the ensemble's member weights.
2. :func:`new_round` records a :class:`~app.models.TrainingRound`; :func:`train_round`
   fits every member and the round's ensemble method (default: the measured default,
   :data:`parsing.ensemble.registry.DEFAULT_METHOD`) into its model directory (no database
   work), and the weights of the vote shares shown to annotators (:func:`vote_weights`).
3. :func:`parse_batch` parses sentences with every member and the ensemble and stores each
   member's tree (``parser``), the ensemble's (``ensemble``, vote share as ``scores``) and the
   sentence's disagreement; the caller commits each batch as one transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import func, select

from app.models import Document, Sentence, SentenceState, Token, TrainingRound, Treebank, TreeVersion, User
from app.services import DbSession
from app.services.parsing_adapter import load_sentences, tree_of_parse
from app.services.trees import latest_versions
from parsing.ensemble.base import member_accuracy, stack_heads
from parsing.ensemble.confidence import sentence_confidence
from parsing.ensemble.registry import DEFAULT_METHOD, method_spec
from parsing.members import member_names
from parsing.pipeline import ModelBundle, TagMode, load_models, train_models
from parsing.types import Parse as ParsingParse
from parsing.types import Sentence as ParsingSentence

DEFAULT_PARSERS = ("graph1", "eager", "hybrid")
"""Members trained when none are named (the fast, finished ones)."""

FAST_MEMBER_PARAMS: dict[str, dict[str, Any]] = {
    "graph1": {"max_iter": 2}, "eager": {"epochs": 2}, "hybrid": {"epochs": 2},
}
"""Cheap settings (``MEMBER_PARAMS``) for tests and quick trials: a few epochs each."""

FAST_ENSEMBLE_PARAMS: dict[str, dict[str, Any]] = {"stack": {"max_iter": 2}}
"""Cheap settings (``ENSEMBLE_PARAMS``, by method) for tests and quick trials."""

Say = Callable[[str, float], None]


@dataclass
class TrainedRound:
    """The fitted members and ensemble (as a bundle), and the members' vote weights."""

    bundle: ModelBundle
    weights: list[float]


def training_data(
    session: DbSession, treebank: Treebank
) -> tuple[list[ParsingSentence], list[ParsingSentence]]:
    """``(train, dev)``: trees to learn from (corrections win over gold) and tuning trees."""
    def ids(where: Any) -> list[int]:
        return list(session.scalars(
            select(Sentence.id).join(Document).outerjoin(SentenceState)
            .where(Document.treebank_id == treebank.id, where)
            .order_by(Document.position, Sentence.position)
        ))

    train_ids = ids(Document.split == "train") + ids(
        (Document.split == "pool") & (SentenceState.status == "reviewed"))
    dev_ids = ids(Document.split == "dev")
    return _with_trees(session, train_ids), _with_trees(session, dev_ids)


def _with_trees(session: DbSession, sentence_ids: list[int]) -> list[ParsingSentence]:
    trees = latest_versions(session, sentence_ids, "latest")
    usable = [sid for sid in sentence_ids if sid in trees]
    return [s for s in load_sentences(session, usable, trees) if len(s) and s.has_tree]


def pool_targets(session: DbSession, treebank: Treebank) -> list[int]:
    """Pool sentences nobody has annotated yet, in document order."""
    annotated = select(TreeVersion.sentence_id).where(TreeVersion.kind == "annotation")
    return list(session.scalars(
        select(Sentence.id).join(Document)
        .where(Document.treebank_id == treebank.id, Document.split == "pool",
               Sentence.n_words > 0, Sentence.id.not_in(annotated))
        .order_by(Document.position, Sentence.position)
    ))


def chosen_targets(session: DbSession, treebank: Treebank, sentence_ids: Sequence[int]) -> list[int]:
    """The given sentences that belong to ``treebank`` and have words (others are ignored)."""
    found = set(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Sentence.n_words > 0, Sentence.id.in_(list(sentence_ids)))))
    return [sid for sid in dict.fromkeys(sentence_ids) if sid in found]


def model_root(models_dir: str | Path, treebank: Treebank) -> Path:
    """``MODELS_DIR/<treebank name>-<id>/``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", treebank.name).strip("_") or "treebank"
    return Path(models_dir) / f"{slug}-{treebank.id}"


def new_round(
    session: DbSession, treebank: Treebank, *, parsers: Sequence[str], tags: str, user: User,
    models_dir: str | Path, ensemble: str = DEFAULT_METHOD,
) -> TrainingRound:
    """Record the next training round of ``treebank`` (its models go in a new directory)."""
    member_names(",".join(parsers))  # raises ValueError on an unknown name
    if not method_spec(ensemble).uses(list(parsers)):
        raise ValueError(f"ensemble {ensemble} combines none of {', '.join(parsers)}")
    if tags not in ("gold", "predicted"):
        raise ValueError(f"tags must be gold or predicted, not {tags!r}")
    number = (session.scalar(select(func.max(TrainingRound.number))
                             .where(TrainingRound.treebank_id == treebank.id)) or 0) + 1
    directory = model_root(models_dir, treebank) / str(number)
    round_ = TrainingRound(treebank_id=treebank.id, number=number, parsers=list(parsers), tags=tags,
                           ensemble=ensemble, model_dir=str(directory), user_id=user.id)
    session.add(round_)
    session.flush()
    return round_


def train_round(
    round_: TrainingRound,
    train: Sequence[ParsingSentence],
    dev: Sequence[ParsingSentence],
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    ensemble_params: Mapping[str, Mapping[str, Any]] | None = None,
    say: Say | None = None,
) -> TrainedRound:
    """Fit the members and the ensemble into ``round_.model_dir``; fill in ``round_``.

    ``params`` overrides member hyperparameters by name (e.g. fewer epochs in tests),
    ``ensemble_params`` the ensemble method's, by method name.
    """
    if not train:
        raise ValueError("no trees to train on: import a train split with trees first")
    report = say or (lambda message, fraction: None)
    out = Path(round_.model_dir)
    tags: TagMode = "predicted" if round_.tags == "predicted" else "gold"
    method = round_.ensemble or DEFAULT_METHOD
    train_models(train, dev or None, out, names=list(round_.parsers), tags=tags, params=params,
                 ensemble=method, ensemble_params=(ensemble_params or {}).get(method),
                 progress=lambda message, done: report(message, 0.02 + 0.58 * done))
    bundle = load_models(out)
    report("measuring the members on dev", 0.6)
    names = list(bundle.parsers)
    round_.dev_uas = None
    if dev:
        accuracies = member_accuracy(dev, [bundle.parse(dev)[name] for name in names])
        round_.dev_uas = [float(a) for a in accuracies]
    round_.weights = vote_weights(bundle, round_.dev_uas)
    round_.train_sentences, round_.dev_sentences = len(train), len(dev)
    return TrainedRound(bundle, list(round_.weights))


def vote_weights(bundle: ModelBundle, dev_uas: Sequence[float] | None) -> list[float]:
    """Each member's weight in the vote shares annotators see: the voting ensemble's own
    weights when the round's method votes (so a shown share is the ensemble's), else the
    members' dev UAS, else one each."""
    names = list(bundle.parsers)
    learned = getattr(bundle.ensemble, "weights_", None)
    if learned is not None and len(learned) == len(bundle.ensemble_members) and bundle.ensemble_members:
        by_name = dict(zip(bundle.ensemble_members, (float(w) for w in learned), strict=True))
        if set(by_name) == set(names):
            return [by_name[name] for name in names]
    if dev_uas is not None:
        return [float(a) for a in dev_uas]
    return [1.0] * len(names)


def require_tags(session: DbSession, sentence_ids: Sequence[int], tags: str) -> None:
    """Refuse gold-tag parsing of sentences that have words without UPOS (``_``).

    Parsers trained on gold tags read the UPOS column; on ``_`` they would parse garbage.

    :raise ValueError: naming how many such sentences there are and one of them.
    """
    if tags != "gold" or not sentence_ids:
        return
    untagged: list[int] = []
    for start in range(0, len(sentence_ids), 5000):
        chunk = list(sentence_ids[start:start + 5000])
        untagged.extend(session.scalars(select(Token.sentence_id).distinct().where(
            Token.sentence_id.in_(chunk), Token.word.is_not(None), Token.upos == "_")))
    if untagged:
        example = session.get(Sentence, untagged[0])
        name = (example.sent_id if example is not None else None) or f"#{untagged[0]}"
        raise ValueError(f"{len(untagged)} of the {len(sentence_ids)} sentences to parse have words without "
                         f"UPOS (e.g. {name}): pre-annotate with predicted tags, which tag them first")


def pool_has_untagged(session: DbSession, treebank: Treebank) -> bool:
    """Whether a pool sentence still to annotate has a word without UPOS (raw text): then
    pre-annotation needs predicted tags (:func:`require_tags`)."""
    annotated = select(TreeVersion.sentence_id).where(TreeVersion.kind == "annotation")
    return session.scalar(
        select(Token.id).join(Sentence).join(Document)
        .where(Document.treebank_id == treebank.id, Document.split == "pool", Token.word.is_not(None),
               Token.upos == "_", Sentence.id.not_in(annotated)).limit(1)
    ) is not None


def parse_batch(
    session: DbSession, trained: TrainedRound, sentence_ids: Sequence[int], *, user: User
) -> int:
    """Parse ``sentence_ids`` and store member, ensemble and disagreement rows (flushes).

    With a round trained on predicted tags every stored version keeps the UPOS its parser
    used (``TreeVersion.upos``); with gold tags that is ``None`` and untagged sentences are
    refused (:func:`require_tags`).
    """
    require_tags(session, sentence_ids, trained.bundle.tags)
    sentences = load_sentences(session, sentence_ids)
    by_name, combined = trained.bundle.parse_with_ensemble(sentences)
    names = list(trained.bundle.parsers)
    member_parses = [by_name[name] for name in names]
    weights = np.asarray(trained.weights, dtype=np.float64)
    for i, sentence_id in enumerate(sentence_ids):
        parses = [member[i] for member in member_parses]
        for name, parse in zip(names, parses, strict=True):
            heads, deprels, scores = tree_of_parse(parse)
            session.add(_version(session, sentence_id, "parser", name, heads, deprels, scores, user,
                                 upos=_tags(parse)))
        confidence = sentence_confidence(
            stack_heads(parses), [p.deprels for p in parses], weights,
            combined[i].heads, combined[i].deprels)
        heads, deprels, _ = tree_of_parse(combined[i])
        shares: list[float | None] = [round(float(token.vote_share), 6) for token in confidence.tokens]
        session.add(_version(session, sentence_id, "ensemble", "", heads, deprels, shares, user,
                             upos=_tags(combined[i])))
        state = session.get(SentenceState, sentence_id) or SentenceState(sentence_id=sentence_id)
        state.disagreement = confidence.disagreement
        if state.status is None:
            state.status = "todo"
        session.add(state)
    session.flush()
    return len(sentence_ids)


def _tags(parse: ParsingParse) -> list[str] | None:
    """The UPOS (words 1..n) a parse was made with when its parser tagged, else None."""
    return None if parse.upos is None else [str(tag) for tag in parse.upos[1:]]


def _version(
    session: DbSession, sentence_id: int, kind: str, name: str, heads: list[int], deprels: list[str],
    scores: list[float | None] | None, user: User, *, upos: list[str] | None = None,
) -> TreeVersion:
    current = session.scalar(select(func.max(TreeVersion.version)).where(
        TreeVersion.sentence_id == sentence_id, TreeVersion.kind == kind, TreeVersion.name == name))
    return TreeVersion(sentence_id=sentence_id, kind=kind, name=name, version=(current or 0) + 1,
                       heads=heads, deprels=deprels, scores=scores, upos=upos, user_id=user.id)
