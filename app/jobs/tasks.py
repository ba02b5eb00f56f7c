"""The job tasks: what each ``Job.kind`` does (see :mod:`app.jobs`)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from flask import current_app
from threadpoolctl import threadpool_limits

from app.job_models import Job
from app.jobs import JobCancelled, Progress, task
from app.jobs.check_tasks import KIND as VALIDATE_KIND  # noqa: F401  (registers the validate job)
from app.jobs.fanout import (
    MEMBER_KIND,
    TAG_FOLD_KIND,
    member_job_from_json,
    parent_is_running,
    queue_fold_runner,
    queue_runner,
    sentence_to_json,
    tag_fold_from_json,
)
from app.jobs.file_tasks import IMPORT_BATCH  # noqa: F401  (registers the import and export jobs)
from app.jobs.model_files import check_unchanged, clear_leftovers, publish, staging_dir
from app.jobs.plugin_runs import run_plugins_outside_transactions
from app.models import Treebank, User
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.external import public_outcome
from app.services.external_votes import check_voters, prepare_voters
from app.services.parse_with_round import reusable_round, trained_from_disk, unparsed_pool_targets
from app.services.preannotate import (
    chosen_targets,
    new_round,
    parse_batch,
    pool_targets,
    round_plan,
    train_round,
    training_data,
    warm_start_round,
)
from app.services.raw_text_rounds import (
    check_raw_text,
    raw_text_members,
    raw_text_params,
    write_pool_text,
)
from app.services.rounds import changed_between, ensemble_trees, finish_round
from app.services.self_training import automatic_training_trees
from app.services.sources import split_sentence_ids
from app.services.stable_trees import same_setup
from app.services.tag_checks import require_tags
from app.wording import counted
from parsing.ensemble.registry import default_method
from parsing.forked import ParserPool, may_have_children
from parsing.member_fit import fit_member
from parsing.tagger.folds import run_tag_fold

BATCH = 25
"""Sentences parsed and stored per transaction."""


@task("preannotate")
def preannotate(session: DbSession, job: Job, progress: Progress) -> dict[str, Any]:
    """Train a round on the treebank, then parse the pool (or ``params["sentences"]``) in batches.

    The models are trained in a staging directory and renamed into place with their checksums
    (:mod:`app.jobs.model_files`); the round's row is added only at the end, so a failed,
    cancelled or killed job registers no round (the parsed batches it committed stay, each whole).

    Params: ``parsers`` (member names), ``tags`` (``gold``/``predicted``), optional
    ``ensemble`` (method name; default: the measured default), ``sentences`` (ids to parse;
    default: every unannotated pool sentence), ``self_training`` (settings of
    :func:`app.services.self_training.parse_settings`, or None), ``warm`` (continue the
    members from the newest earlier round's weights where they can), ``externals`` (labels of
    external parsers voting in the ensemble: :mod:`app.services.external_votes`),
    ``score_splits`` (``dev``/``test``: parse their sentences too, for the scoreboard) and
    ``raw_text`` (the cluster and meta-feature members learn from the pool's text:
    :mod:`app.services.raw_text_rounds`).
    """
    treebank = session.get(Treebank, job.treebank_id)
    user = session.get(User, job.user_id)
    if treebank is None or user is None:
        raise ValueError("the treebank or user of this job no longer exists")
    params = job.params or {}
    if params.get("with_round") is not None:
        return _parse_with_round(session, job, progress, treebank, user, int(params["with_round"]))
    round_ = new_round(session, treebank, parsers=params["parsers"], tags=params.get("tags", "gold"),
                       user=user, models_dir=current_app.config["MODELS_DIR"],
                       ensemble=params.get("ensemble") or default_method(params.get("tags", "gold")))
    final = Path(round_.model_dir)
    clear_leftovers(final)  # of a killed earlier attempt: no round row points there
    round_.model_dir = str(staging_dir(final, job.id))
    try:
        with threadpool_limits(limits=1, user_api="blas"):  # small matrices: see parsing.cli
            return _preannotate(session, job, progress, treebank, user, round_, final)
    except BaseException:
        clear_leftovers(final)  # the round is not registered: nothing may point to its models
        raise


def _preannotate(session: DbSession, job: Job, progress: Progress, treebank: Treebank, user: User,
                 round_: TrainingRound, final: Path) -> dict[str, Any]:
    params = job.params or {}
    chosen = [int(i) for i in params.get("sentences") or []]
    targets = chosen_targets(session, treebank, chosen) if chosen else pool_targets(session, treebank)
    for split in params.get("score_splits") or []:  # parsed for the scoreboard (dev, test)
        seen = set(targets)
        targets += [sid for sid in split_sentence_ids(session, treebank, split) if sid not in seen]
    method = round_.ensemble or default_method(round_.tags)
    externals = check_voters(session, treebank, params.get("externals") or [], method)
    require_tags(session, targets, round_.tags)  # before hours of training, not after
    if params.get("raw_text"):
        check_raw_text(session, treebank, round_.parsers)
    warm_from = warm_start_round(session, treebank, round_) if params.get("warm") else None
    if warm_from is not None:  # its files are loaded to continue: refuse any changed since
        check_unchanged(Path(warm_from.model_dir), warm_from.checksums)
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    text_file = Path(f"{round_.model_dir}-raw-text.txt")
    member_params = current_app.config.get("MEMBER_PARAMS") or {}
    if params.get("raw_text"):  # the cluster and meta members learn from the pool's text
        member_params = raw_text_params(round_.parsers, text_file, member_params)
    plan = round_plan(  # what the round trains, checked before anything is read or trained
        round_, params=member_params, ensemble_params=current_app.config.get("ENSEMBLE_PARAMS") or {},
        warm_from=warm_from,
        member_runner=queue_runner(app, session, job, Path(f"{round_.model_dir}-members"), progress),
        fold_runner=queue_fold_runner(app, session, job, Path(f"{round_.model_dir}-tag-folds"), progress))
    progress("reading training trees", 0.01)
    data = training_data(session, treebank)
    settings = params.get("self_training")
    automatic = None
    if settings:
        progress("choosing automatic trees for self-training", 0.015)
        automatic = automatic_training_trees(
            session, treebank, pool_targets(session, treebank), round_.parsers, settings,
            n_human=len(data.train), round_number=round_.number)
    try:
        if params.get("raw_text"):
            progress("writing the pool's raw text for the cluster and meta-feature members", 0.018)
            round_.raw_text = {**write_pool_text(session, treebank, text_file),
                               "members": raw_text_members(round_.parsers)}
        trained = train_round(round_, data, plan, say=progress, automatic=automatic, self_training=settings,
                              warm_from=warm_from)
    finally:
        text_file.unlink(missing_ok=True)
    round_.checksums = publish(Path(round_.model_dir), final)
    round_.model_dir = str(final)
    progress(f"round {round_.number} trained", 0.6)
    done, compared = 0, 0
    changed: list[int] = []
    plugins: dict[str, dict[str, Any]] = {}
    if externals:
        def on_dev(dev: Sequence[int]) -> None:
            run_plugins_outside_transactions(session, treebank, dev, user=user, outcome=plugins)
        trained.voters = prepare_voters(session, treebank, trained.bundle, externals, run_plugins=on_dev)
    # a process worker (`worker --workers N`, N > 1) may not fork: its round parses in it alone
    processes = int(current_app.config.get("PREANNOTATE_PROCESSES") or 1) if may_have_children() else 1
    trained.pool = ParserPool(trained.bundle.parsers, processes) if processes > 1 else None
    if not same_setup(session, round_, externals):  # other voters: their trees are meant to differ
        trained.stability = None
    with trained.pool or nullcontext():  # the members parse in that many processes, forked once
        for start in range(0, len(targets), BATCH):
            batch = targets[start:start + BATCH]
            before = ensemble_trees(session, batch)  # the previous round's trees
            # external parsers (#16), with no transaction open while they run (#31)
            run_plugins_outside_transactions(session, treebank, batch, user=user, outcome=plugins)
            done += parse_batch(session, trained, batch, user=user)
            batch_compared, batch_changed = changed_between(before, ensemble_trees(session, batch))
            compared, changed = compared + batch_compared, changed + batch_changed
            progress(f"parsed {done} of {counted(len(targets), 'sentence')}", 0.6 + 0.4 * done / len(targets))
    if not targets:
        progress("nothing to parse: every pool sentence is annotated", 1.0)
    finish_round(round_, compared=compared, changed=changed)
    round_.external_voters = [voter.to_json() for voter in trained.voters] or None
    session.add(round_)  # registered in the commit that marks the job done (app.jobs.run_job)
    return {"round": round_.number, "parsed": done, "parsers": list(round_.parsers),
            "ensemble": round_.ensemble,
            "weights": round_.weights, "dev_uas": round_.dev_uas,
            "train_sentences": len(data.train), "dev_sentences": len(data.dev),
            "partial_sentences": data.partial, "raw_text": round_.raw_text,
            "evaluation": round_.evaluation, "scores": round_.scores,
            "changed_sentences": len(changed), "plugins": public_outcome(plugins),
            "plugin_details": {label: state["detail"] for label, state in plugins.items()
                               if state.get("detail")},
            "external_voters": round_.external_voters}


def _parse_with_round(session: DbSession, job: Job, progress: Progress, treebank: Treebank, user: User,
                      number: int) -> dict[str, Any]:
    """Parse without training (``params["with_round"]``): round ``number``'s models, checked
    unchanged, parse ``params["sentences"]`` or the pool sentences no round has parsed yet (text
    imported since), stored as that round would have stored them. No round is registered."""
    round_ = reusable_round(session, treebank, number)
    check_unchanged(Path(round_.model_dir), round_.checksums)
    chosen = [int(i) for i in (job.params or {}).get("sentences") or []]
    targets = (chosen_targets(session, treebank, chosen) if chosen
               else unparsed_pool_targets(session, treebank))
    require_tags(session, targets, round_.tags)
    progress(f"loading round {number}'s models", 0.02)
    trained = trained_from_disk(round_)
    done = 0
    for start in range(0, len(targets), BATCH):
        done += parse_batch(session, trained, targets[start:start + BATCH], user=user)
        progress(f"parsed {done} of {counted(len(targets), 'sentence')} with round {number}'s models",
                 0.05 + 0.95 * done / len(targets))
    if not targets:
        progress("nothing to parse: every pool sentence is pre-annotated or annotated", 1.0)
    return {"round": number, "parse_only": True, "parsed": done, "parsers": list(round_.parsers),
            "ensemble": round_.ensemble}


@task(MEMBER_KIND)
def train_member(session: DbSession, job: Job, progress: Progress) -> dict[str, Any]:
    """Fit one member of a round (:mod:`app.jobs.fanout`): ``params`` ``parent`` (the round's
    job), ``member`` and ``spec`` (the JSON file of its :class:`~parsing.member_fit.MemberJob`)."""
    if not parent_is_running(session, job):
        raise JobCancelled("its round is no longer running")
    spec = member_job_from_json(json.loads(Path(job.params["spec"]).read_text(encoding="utf-8")))
    progress(f"training {spec.name} for round job {job.params['parent']}", 0.0)
    with threadpool_limits(limits=1, user_api="blas"):
        name, seconds, warm = fit_member(spec)
    return {"member": name, "seconds": seconds, "warm": warm}


@task(TAG_FOLD_KIND)
def tag_fold(session: DbSession, job: Job, progress: Progress) -> dict[str, Any]:
    """Fit one tagger of a predicted-tags round (:mod:`app.jobs.fanout`: the kept one, or a
    jackknife fold's) and tag its held-out sentences: ``params`` ``parent``, ``fold`` and
    ``spec`` (the JSON file of its :class:`~parsing.tagger.folds.TagFoldJob`). The tagged
    sentences go to a file beside the spec; the result names it."""
    if not parent_is_running(session, job):
        raise JobCancelled("its round is no longer running")
    spec_path = Path(job.params["spec"])
    spec = tag_fold_from_json(json.loads(spec_path.read_text(encoding="utf-8")))
    progress(f"tagger fit {spec.name} for round job {job.params['parent']}", 0.0)
    started = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        name, tagged = run_tag_fold(spec)
    out = spec_path.with_suffix(".tagged.json")
    out.write_text(json.dumps([sentence_to_json(s) for s in tagged]), encoding="utf-8")
    return {"fold": name, "seconds": time.perf_counter() - started, "tagged": str(out)}
