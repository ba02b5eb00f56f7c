"""Pre-annotation: train the members and the ensemble on a treebank, parse its pool.

1. :func:`training_data`: the train split (newest correction, else gold) plus pool sentences
   already reviewed; the dev split (gold or corrected) tunes the ensemble's member weights and
   scores the round. Without a dev split a fixed slice of those trees is held out instead
   (:func:`held_out_slice`): never trained on, it only scores the round.
2. :func:`new_round` makes a :class:`~app.models.TrainingRound` (added by the job once it
   finished); :func:`round_plan` says what it trains (a :class:`parsing.plan.TrainingPlan`,
   recorded as ``round_.plan``); :func:`train_round`
   fits every member and the round's ensemble method (default: the measured default,
   :func:`parsing.ensemble.registry.default_method` of its tags) into its model directory (no database
   work), the weights of the vote shares shown to annotators (:func:`vote_weights`), and
   records what the round trained on and how every member and the ensemble scored
   (:func:`evaluation_scores`).
3. :func:`parse_batch` parses sentences with every member and the ensemble and stores each
   member's tree (``parser``), the ensemble's (``ensemble``, vote share as ``scores``) and the
   sentence's disagreement; the caller commits each batch as one transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import func, select

from app.models import Document, Sentence, SentenceState, Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.detector import fit_round_detector, round_detector, score_parsed
from app.services.external_votes import ExternalVoter, cast_ballots
from app.services.parsing_adapter import load_sentences, partial_trees, tree_of_parse, with_trees
from app.services.round_scores import evaluation_scores
from app.services.stable_trees import Stability, stabilise
from app.services.tag_checks import require_tags
from app.services.token_columns import predicted_attributes
from app.services.trees import latest_versions
from parsing.detect.model import ArcDetector
from parsing.ensemble.base import member_accuracy, stack_heads
from parsing.ensemble.confidence import SentenceConfidence, sentence_confidence
from parsing.ensemble.registry import default_method, method_spec
from parsing.forked import ParserPool
from parsing.member_fit import MemberRunner
from parsing.members import member_names, missing_requirement
from parsing.pipeline import ModelBundle, TagMode, load_models, read_manifest, train_plan
from parsing.plan import TrainingPlan
from parsing.tag_source import tagging_summary
from parsing.tagger.folds import FoldRunner
from parsing.types import Parse
from parsing.types import Sentence as ParsingSentence
from parsing.word_columns import column_source, member_columns

FAST_MEMBER_PARAMS: dict[str, dict[str, Any]] = {
    "graph1": {"max_iter": 2}, "graph2": {"max_iter": 2}, "neural": {"max_epochs": 2},
    **{name: {"epochs": 2} for name in ("eager", "eager-rtl", "swap", "swap-rtl", "hybrid", "hybrid-rtl")},
    **{name: {"max_iter": 2}
       for name in ("graph1-brown", "graph1-context1", "graph1-context2", "graph1-meta")},
    **{name: {"epochs": 2} for name in ("eager-brown", "eager-context1", "eager-context2")},
    "neural-rerank": {"k": 4, "rates": [1.0], "epochs": 1, "neural_params": {"max_epochs": 2}},
    "isbn": {"max_epochs": 6, "hidden": 32, "beam_size": 2, "learning_rate": 0.01},
    "isbn-rerank": {"k": 4, "rates": [1.0], "epochs": 1,
                    "isbn_params": {"max_epochs": 6, "hidden": 32, "beam_size": 2, "learning_rate": 0.01}},
    **{name: {"word_dim": 16, "char_dim": 8, "char_hidden": 16, "hidden": 32, "layers": 1, "arc_dim": 32,
              "label_dim": 16, "max_epochs": 3, "max_seconds": 60.0, "batch_size": 8}
       for name in ("biaffine", "biaffine-b")},
    "lstm-hybrid": {"word_dim": 16, "char_dim": 8, "char_hidden": 16, "tag_dim": 8, "hidden": 32, "layers": 1,
                    "mlp_dim": 32, "dropout": 0.1, "word_dropout": 0.1, "max_epochs": 8, "patience": 8,
                    "max_seconds": 60.0, "batch_size": 8, "learning_rate": 1e-2},
}
"""Cheap settings (``MEMBER_PARAMS``) for tests and quick trials: a few epochs each."""

FAST_ENSEMBLE_PARAMS: dict[str, dict[str, Any]] = {"stack": {"max_iter": 2}}
"""Cheap settings (``ENSEMBLE_PARAMS``, by method) for tests and quick trials."""

HELD_OUT_EVERY = 10
"""Without a dev split, sentences whose id is a multiple of this are held out to score rounds."""

MIN_HELD_OUT = 3
"""The held-out slice has at least this many sentences (topped up by id order, see :func:`held_out_slice`)."""

MIN_TREES_TO_HOLD_OUT = 10
"""Fewer training trees than this and no dev split: nothing is held out and the round is not scored."""

Say = Callable[[str, float], None]


@dataclass
class TrainedRound:
    """The fitted members and ensemble (a bundle), the members' vote weights, external voters,
    and the forked processes its members parse in when a round pre-annotates on several cores."""

    bundle: ModelBundle
    weights: list[float]
    voters: list[ExternalVoter] = field(default_factory=list)
    pool: ParserPool | None = None
    stability: Stability | None = field(default_factory=Stability)
    """How a round keeps the previous ensemble trees (:mod:`app.services.stable_trees`); None: off."""
    detector: ArcDetector | None = None
    """The round's arc error detector (:mod:`app.services.detector`), when it could fit one."""


@dataclass
class TrainingData:
    """What a round learns from and what scores it.

    ``train``: the trees to train on (``train_ids`` in the same order), of which ``gold``
    are imported trees and ``corrected`` annotation versions (``partial`` of them partial
    trees: pool sentences saved with only some arcs human, never held out); ``dev``: the dev split's trees
    (they tune the ensemble); ``evaluation``: the trees that score the round (``dev``, or the
    ``held_out_ids`` slice of the training trees when there is no dev split) and
    ``evaluation_source`` (``"dev"``, ``"held-out"`` or None: nothing to score on).
    """

    train: list[ParsingSentence]
    dev: list[ParsingSentence]
    train_ids: list[int] = field(default_factory=list)
    gold: int = 0
    corrected: int = 0
    evaluation: list[ParsingSentence] = field(default_factory=list)
    evaluation_source: str | None = None
    held_out_ids: list[int] = field(default_factory=list)
    evaluation_ids: list[int] = field(default_factory=list)
    """Database ids of ``evaluation``'s sentences, in order (pairs two rounds' per-sentence scores)."""
    partial: int = 0

    @property
    def annotated_tokens(self) -> int:
        """Human words in the trees trained on (gold, corrected, a partial tree's human arcs):
        the learning curve's x."""
        return sum(int(np.count_nonzero(s.annotated[1:])) if s.annotated is not None else len(s)
                   for s in self.train)


def training_data(session: DbSession, treebank: Treebank) -> TrainingData:
    """Trees to learn from (corrections win over gold), tuning trees and the trees that score
    the round (the dev split, else the :func:`held_out_slice` of the training trees)."""
    def ids(where: Any) -> list[int]:
        return list(session.scalars(
            select(Sentence.id).join(Document).outerjoin(SentenceState)
            .where(Document.treebank_id == treebank.id, where)
            .order_by(Document.position, Sentence.position)
        ))

    train_ids = ids(Document.split == "train") + ids(
        (Document.split == "pool") & (SentenceState.status == "reviewed"))
    trees = latest_versions(session, train_ids, "latest")
    pairs = with_trees(session, train_ids, trees)
    dev_pairs = with_trees(session, ids(Document.split == "dev"))
    dev = [sentence for _, sentence in dev_pairs]
    held_out = [] if dev else held_out_slice([sid for sid, _ in pairs])
    excluded = set(held_out)
    kept = [(sid, sentence) for sid, sentence in pairs if sid not in excluded]
    partial = partial_trees(session, ids((Document.split == "pool") & (
        SentenceState.status.is_(None) | (SentenceState.status != "reviewed"))))
    corrected = sum(trees[sid].kind == "annotation" for sid, _ in kept) + len(partial)
    kept += partial
    by_id = dict(pairs)
    return TrainingData(
        train=[sentence for _, sentence in kept], dev=dev, train_ids=[sid for sid, _ in kept],
        gold=len(kept) - corrected, corrected=corrected,
        evaluation=dev or [by_id[sid] for sid in held_out],
        evaluation_source="dev" if dev else "held-out" if held_out else None, held_out_ids=held_out,
        evaluation_ids=[sid for sid, _ in dev_pairs] if dev else list(held_out),
        partial=len(partial),
    )


def held_out_slice(sentence_ids: Sequence[int]) -> list[int]:
    """The sentences a treebank without a dev split holds out to score a round, sorted.

    Every sentence whose id is a multiple of :data:`HELD_OUT_EVERY` (the same sentences round
    after round), topped up to :data:`MIN_HELD_OUT` by the smallest ``(id % HELD_OUT_EVERY, id)``;
    none when there are fewer than :data:`MIN_TREES_TO_HOLD_OUT` sentences.
    """
    ordered = sorted(set(sentence_ids))
    if len(ordered) < MIN_TREES_TO_HOLD_OUT:
        return []
    chosen = [sid for sid in ordered if sid % HELD_OUT_EVERY == 0]
    others = sorted((sid for sid in ordered if sid % HELD_OUT_EVERY),
                    key=lambda sid: (sid % HELD_OUT_EVERY, sid))
    return sorted(chosen + others[:max(0, MIN_HELD_OUT - len(chosen))])


def pool_targets(session: DbSession, treebank: Treebank, *, unparsed: bool = False) -> list[int]:
    """Pool sentences nobody has annotated yet, in document order; with ``unparsed``, only those no
    round has pre-annotated either (text imported since the last round)."""
    skipped = ("annotation", "ensemble") if unparsed else ("annotation",)
    done = select(TreeVersion.sentence_id).where(TreeVersion.kind.in_(skipped))
    return list(session.scalars(
        select(Sentence.id).join(Document)
        .where(Document.treebank_id == treebank.id, Document.split == "pool",
               Sentence.n_words > 0, Sentence.id.not_in(done))
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


def warm_start_round(session: DbSession, treebank: Treebank, round_: TrainingRound) -> TrainingRound | None:
    """The newest earlier round of ``treebank`` with the same tags whose models are on disk: what
    a warm ``round_`` continues from (None: nothing to continue, the round trains cold)."""
    earlier = session.scalars(select(TrainingRound).where(
        TrainingRound.treebank_id == treebank.id, TrainingRound.number < round_.number,
        TrainingRound.tags == round_.tags).order_by(TrainingRound.number.desc()))
    return next((r for r in earlier if (Path(r.model_dir) / "manifest.json").is_file()), None)


def require_installed(parsers: Sequence[str]) -> None:
    """Refuse members that cannot train here: an optional module they need (PyTorch for
    ``biaffine``) is not installed.

    Raises:
        ValueError: naming each such member, what it needs and how to install it.
    """
    reasons = [reason for name in parsers if (reason := missing_requirement(name))]
    if reasons:
        raise ValueError("; ".join(reasons))


def new_round(
    session: DbSession, treebank: Treebank, *, parsers: Sequence[str], tags: str, user: User,
    models_dir: str | Path, ensemble: str | None = None,
) -> TrainingRound:
    """The next training round of ``treebank`` (its models go in a new directory), not yet in
    the session: the caller adds it once the round finished, so an interrupted round is never
    registered (see :mod:`app.jobs.model_files`)."""
    member_names(",".join(parsers))  # raises ValueError on an unknown name
    require_installed(parsers)
    if tags not in ("gold", "predicted"):
        raise ValueError(f"tags must be gold or predicted, not {tags!r}")
    ensemble = ensemble or default_method(tags)
    if not method_spec(ensemble).uses(list(parsers)):
        raise ValueError(f"ensemble {ensemble} combines none of {', '.join(parsers)}")
    number = (session.scalar(select(func.max(TrainingRound.number))
                             .where(TrainingRound.treebank_id == treebank.id)) or 0) + 1
    directory = model_root(models_dir, treebank) / str(number)
    round_ = TrainingRound(treebank_id=treebank.id, number=number, parsers=list(parsers), tags=tags,
                           ensemble=ensemble, model_dir=str(directory), user_id=user.id,
                           started_at=datetime.now(UTC))
    return round_


def round_plan(
    round_: TrainingRound,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    ensemble_params: Mapping[str, Mapping[str, Any]] | None = None,
    warm_from: TrainingRound | None = None,
    member_runner: MemberRunner | None = None,
    fold_runner: FoldRunner | None = None,
) -> TrainingPlan:
    """What ``round_`` trains (:class:`parsing.plan.TrainingPlan`): its members, tags and
    ensemble method (default: the measured default of its tags).

    ``params`` overrides member hyperparameters by name (the app's ``MEMBER_PARAMS``: settings
    of members the round does not train are left out), ``ensemble_params`` the ensemble
    method's, by method name. ``warm_from`` (an earlier round, :func:`warm_start_round`)
    makes a warm round: members that can continue from that round's weights do.
    ``member_runner`` fits the members elsewhere (the job queue's workers:
    :mod:`app.jobs.fanout`), ``fold_runner`` the tagger and its jackknife folds (predicted tags).

    Raises:
        ValueError: a setting a member or the method does not take, or a file a setting names
            that is not there, naming the setting.
    """
    tags: TagMode = "predicted" if round_.tags == "predicted" else "gold"
    method = round_.ensemble or default_method(round_.tags)
    try:
        plan = TrainingPlan.from_options(
            names=list(round_.parsers), tags=tags, params=params, ensemble=method,
            ensemble_params=(ensemble_params or {}).get(method),
            warm_from=warm_from.model_dir if warm_from else None,
            member_runner=member_runner, fold_runner=fold_runner)
    except ValueError as error:
        raise ValueError(f"the round cannot be trained as planned: {error} (member and ensemble settings "
                         "come from the server's MEMBER_PARAMS and ENSEMBLE_PARAMS)") from None
    missing = [f"{name}.{setting}" for name, setting, _ in plan.missing_files()]
    if missing:  # the path stays in the server's configuration, not in a message users see
        raise ValueError(f"the server's member settings name files that are not there: {', '.join(missing)} "
                         "(MEMBER_PARAMS); ask an administrator")
    if requirements := plan.missing_requirements():
        raise ValueError(f"the server's member settings need what is not installed: "
                         f"{'; '.join(requirements)}")
    return plan


def train_round(
    round_: TrainingRound,
    data: TrainingData,
    plan: TrainingPlan,
    *,
    say: Say | None = None,
    automatic: Mapping[str, Sequence[ParsingSentence]] | None = None,
    self_training: Mapping[str, Any] | None = None,
    warm_from: TrainingRound | None = None,
) -> TrainedRound:
    """Fit what ``plan`` says (:func:`round_plan`) into ``round_.model_dir``; fill in
    ``round_``'s weights and record (the plan, training trees by origin, evaluation source and
    scores).

    ``automatic`` adds self-training's trees to each member's training data (by member name;
    see :mod:`app.services.self_training`), recorded with the ``self_training`` settings.
    ``warm_from``: the earlier round the plan continues (recorded as ``round_.warm``).

    Raises:
        ValueError: no training trees, or a plan that continues another round than ``warm_from``.
    """
    train, dev = data.train, data.dev
    if not train:
        raise ValueError("no trees to train on: import a train split with trees first")
    if plan.warm_from != (warm_from.model_dir if warm_from else None):
        raise ValueError("the plan continues another round than the one given as warm_from")
    report = say or (lambda message, fraction: None)
    out = Path(round_.model_dir)
    train_plan(plan, train, dev or None, out,
               progress=lambda message, done: report(message, 0.02 + 0.58 * done), extra_train=automatic)
    round_.plan = plan.to_json() if plan.json_ready() else None
    bundle = load_models(out)
    manifest = read_manifest(out)
    continued = [str(name) for name in manifest.get("warm_members", [])]
    round_.warm = None if warm_from is None else {"from_round": warm_from.number, "members": continued}
    report(f"scoring the members and the ensemble on {data.evaluation_source}" if data.evaluation_source
           else "no dev split and too few trees to hold some out: the round is not scored", 0.6)
    names = list(bundle.parsers)
    scores, member_parses = evaluation_scores(bundle, data.evaluation, data.evaluation_ids)
    round_.dev_uas = None
    if dev:  # the same parses as the scores: data.evaluation is dev
        round_.dev_uas = [float(a) for a in member_accuracy(dev, [member_parses[name] for name in names])]
    round_.weights = vote_weights(bundle, round_.dev_uas)
    detector = None
    if data.evaluation:
        report(f"fitting the arc error detector on the {data.evaluation_source} parses", 0.6)
        fitted = fit_round_detector(out, bundle, train, data.evaluation, member_parses)
        detector = round_detector(out) if "skipped" not in fitted else None
    round_.train_sentences, round_.dev_sentences = len(train), len(dev)
    round_.gold_sentences, round_.corrected_sentences = data.gold, data.corrected
    round_.automatic_sentences = max((len(trees) for trees in (automatic or {}).values()), default=0)
    round_.self_training = dict(self_training) if self_training else None
    round_.annotated_tokens = data.annotated_tokens
    round_.evaluation, round_.held_out_ids = data.evaluation_source, list(data.held_out_ids)
    if scores is not None and (tagging := tagging_summary(manifest)):  # whose UPOS the members used
        scores["tagging"] = tagging
    round_.scores = scores
    return TrainedRound(bundle, list(round_.weights), detector=detector)


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


def parse_batch(
    session: DbSession, trained: TrainedRound, sentence_ids: Sequence[int], *, user: User
) -> int:
    """Parse ``sentence_ids``, store member, ensemble and disagreement rows (flushes); external
    voters vote where they have a tree (:func:`app.services.external_votes.cast_ballots`).

    With a round trained on predicted tags every stored version keeps the UPOS its parser
    used (``TreeVersion.upos``); with gold tags that is ``None`` and untagged sentences are
    refused (:func:`require_tags`). With predicted tags and a self-tagging member
    (:func:`parsing.word_columns.column_source`) its version and the ensemble's also keep its
    XPOS, lemmas and FEATS (:func:`~app.services.token_columns.predicted_attributes`): the only
    member that predicts them, so raw text gets every column (the editor shows them for words
    imported without tags, and an export of those versions writes them).
    """
    require_tags(session, sentence_ids, trained.bundle.tags)
    sentences = load_sentences(session, sentence_ids)
    by_name, combined = trained.bundle.parse_with_ensemble(sentences, pool=trained.pool)
    sentence_ids, sentences, by_name, combined = _still_tokenized(session, sentence_ids, sentences, by_name,
                                                                  combined)
    combined, ballots = cast_ballots(session, trained.bundle, trained.voters, sentence_ids, sentences,
                                     by_name, combined, trained.weights)
    if trained.stability is not None:
        weights = dict(zip(trained.bundle.parsers, trained.weights, strict=True))
        combined = stabilise(session, sentence_ids, combined, ballots, weights, trained.stability)
    suspicion = (score_parsed(trained.detector, sentences, by_name, combined)
                 if trained.detector is not None else None)
    source = column_source(list(by_name)) if trained.bundle.tags == "predicted" else None
    columns = member_columns(by_name, [source]) if source is not None else None
    for i, sentence_id in enumerate(sentence_ids):
        for name, parses in by_name.items():
            heads, deprels, scores = tree_of_parse(parses[i])
            own = predicted_attributes(columns[i], None) if columns is not None and name == source else {}
            session.add(_version(session, sentence_id, "parser", name, heads, deprels, scores, user,
                                 upos=_tags(parses[i]), **own))
        confidence = ensemble_confidence(ballots[i].parses, ballots[i].weights, combined[i])
        heads, deprels, _ = tree_of_parse(combined[i])
        shares: list[float | None] = [round(float(token.vote_share), 6) for token in confidence.tokens]
        tags = _tags(combined[i])
        session.add(_version(session, sentence_id, "ensemble", "", heads, deprels, shares, user, upos=tags,
                             **(predicted_attributes(columns[i], tags) if columns is not None else {})))
        state = session.get(SentenceState, sentence_id) or SentenceState(sentence_id=sentence_id)
        state.disagreement = confidence.disagreement
        state.entropy = float(sum(token.entropy for token in confidence.tokens))
        state.p_wrong = suspicion[i] if suspicion is not None else None
        state.suspicion = round(sum(suspicion[i]), 6) if suspicion is not None else None
        if state.status is None:
            state.status = "todo"
        session.add(state)
    session.flush()
    return len(sentence_ids)


def _still_tokenized(
    session: DbSession, sentence_ids: Sequence[int], sentences: Sequence[ParsingSentence],
    by_name: Mapping[str, Sequence[Parse]], combined: Sequence[Parse],
) -> tuple[list[int], list[ParsingSentence], dict[str, list[Parse]], list[Parse]]:
    """The sentences (and their parses) whose words are still the ones parsed: a sentence split,
    merged or removed by a token edit (:mod:`app.services.token_edits`) while the members parsed
    it gets no tree of the old words (the next round parses it again)."""
    words = {row.id: row.n_words for row in session.execute(
        select(Sentence.id, Sentence.n_words).where(Sentence.id.in_(list(sentence_ids))))}
    keep = [i for i, sentence_id in enumerate(sentence_ids)
            if words.get(sentence_id) == len(sentences[i])]
    return ([sentence_ids[i] for i in keep], [sentences[i] for i in keep],
            {name: [parses[i] for i in keep] for name, parses in by_name.items()},
            [combined[i] for i in keep])


def ensemble_confidence(parses: Sequence[Parse], weights: Sequence[float] | np.ndarray, combined: Parse
                        ) -> SentenceConfidence:
    """Vote shares (and disagreement) of the ensemble tree ``combined`` among the members'
    ``parses`` (one per member, weighted by ``weights``, shape ``(M,)``): what annotators see."""
    return sentence_confidence(stack_heads(parses), [p.deprels for p in parses], weights,
                               combined.heads, combined.deprels)


def _tags(parse: Parse) -> list[str] | None:
    """The UPOS (words 1..n) a parse was made with when its parser tagged, else None."""
    return None if parse.upos is None else [str(tag) for tag in parse.upos[1:]]


def _version(
    session: DbSession, sentence_id: int, kind: str, name: str, heads: list[int], deprels: list[str],
    scores: list[float | None] | None, user: User, *, upos: list[str] | None = None,
    xpos: list[str] | None = None, lemmas: list[str] | None = None, feats: list[str] | None = None,
) -> TreeVersion:
    current = session.scalar(select(func.max(TreeVersion.version)).where(
        TreeVersion.sentence_id == sentence_id, TreeVersion.kind == kind, TreeVersion.name == name))
    return TreeVersion(sentence_id=sentence_id, kind=kind, name=name, version=(current or 0) + 1,
                       heads=heads, deprels=deprels, scores=scores, upos=upos, xpos=xpos, lemmas=lemmas,
                       feats=feats, user_id=user.id)
