"""Fan-out: on a real queue, a round's members and its tagger's jackknife folds run as jobs of
their own, on any free worker.

The round's job writes each piece's data as JSON beside its staging directory (a member:
:class:`parsing.member_fit.MemberJob`; a tagger fit: :class:`parsing.tagger.folds.TagFoldJob`),
adds one child job per piece (``train_member``, ``tag_fold``) and queues them. Then it works
too: it claims the child jobs itself from the back of the list (with the same one-winner claim
as any worker: :func:`app.jobs.run_job`) while other workers take them from the front, and
waits for the rest. With one worker the round's job does every piece itself; with N, up to N
run at once. A child that fails (or whose worker died) fails the round; a round that stops
cancels its children still queued or running.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from flask import Flask
from sqlalchemy import select, update

from app.job_models import Job
from app.jobs import JobCancelled, JobFailed, Progress, create_job, run_job, submit
from app.models import User
from app.services import DbSession
from parsing.member_fit import Fitted, MemberJob, MemberRunner
from parsing.tagger.folds import FoldRunner, TagFoldJob, TaggedFold
from parsing.types import Sentence

MEMBER_KIND = "train_member"
TAG_FOLD_KIND = "tag_fold"
POLL_SECONDS = 0.3


def sentence_to_json(sentence: Sentence) -> dict[str, Any]:
    """A :class:`~parsing.types.Sentence` as JSON-ready columns (a partial tree's ``annotated``
    mask included: members leave the arcs nobody set out of their loss)."""
    annotated = None if sentence.annotated is None else [bool(a) for a in sentence.annotated]
    return {"forms": sentence.forms, "lemmas": sentence.lemmas, "upos": sentence.upos, "xpos": sentence.xpos,
            "feats": sentence.feats, "heads": [int(h) for h in sentence.heads], "deprels": sentence.deprels,
            "sent_id": sentence.sent_id, "annotated": annotated}


def sentence_from_json(data: dict[str, Any]) -> Sentence:
    """The inverse of :func:`sentence_to_json`."""
    annotated = data.get("annotated")
    return Sentence(forms=data["forms"], lemmas=data["lemmas"], upos=data["upos"], xpos=data["xpos"],
                    feats=data["feats"], heads=np.asarray(data["heads"], dtype=np.int64),
                    deprels=data["deprels"], sent_id=data["sent_id"],
                    annotated=None if annotated is None else np.asarray(annotated, dtype=bool))


def member_job_to_json(job: MemberJob) -> dict[str, Any]:
    """What a worker needs to fit ``job`` (paths as strings, trees as columns)."""
    return {"name": job.name, "path": str(job.path), "random_state": job.random_state,
            "params": dict(job.params), "warm": str(job.warm) if job.warm else None,
            "train": [sentence_to_json(s) for s in job.train],
            "dev": None if job.dev is None else [sentence_to_json(s) for s in job.dev]}


def member_job_from_json(data: dict[str, Any]) -> MemberJob:
    """The inverse of :func:`member_job_to_json`."""
    return MemberJob(name=data["name"], train=[sentence_from_json(s) for s in data["train"]],
                     dev=None if data["dev"] is None else [sentence_from_json(s) for s in data["dev"]],
                     path=Path(data["path"]), random_state=int(data["random_state"]), params=data["params"],
                     warm=Path(data["warm"]) if data["warm"] else None)


def tag_fold_to_json(job: TagFoldJob) -> dict[str, Any]:
    """What a worker needs to do ``job`` (the kept tagger's path as a string, trees as columns)."""
    return {"name": job.name, "params": dict(job.params),
            "save_to": str(job.save_to) if job.save_to else None,
            "train": [sentence_to_json(s) for s in job.train],
            "held_out": [sentence_to_json(s) for s in job.held_out],
            "dev": None if job.dev is None else [sentence_to_json(s) for s in job.dev]}


def tag_fold_from_json(data: dict[str, Any]) -> TagFoldJob:
    """The inverse of :func:`tag_fold_to_json`."""
    return TagFoldJob(name=data["name"], params=data["params"],
                      train=[sentence_from_json(s) for s in data["train"]],
                      held_out=[sentence_from_json(s) for s in data["held_out"]],
                      dev=None if data["dev"] is None else [sentence_from_json(s) for s in data["dev"]],
                      save_to=Path(data["save_to"]) if data["save_to"] else None)


def _has_workers(app: Flask) -> bool:
    """Whether ``JOB_QUEUE`` has workers (inline, thread: the pieces run in this process)."""
    return app.config.get("JOB_QUEUE", "sqlite") in ("sqlite", "redis")


def queue_runner(app: Flask, session: DbSession, parent: Job, data_dir: Path,
                 progress: Progress) -> MemberRunner | None:
    """A member runner spreading ``parent``'s members over the queue's workers; None when
    ``JOB_QUEUE`` has no workers (inline, thread: the members train in this process)."""
    if not _has_workers(app):
        return None

    def run(jobs: Sequence[MemberJob]) -> Iterator[Fitted]:
        # labelled by the model file ("biaffine", "biaffine-0"): a round's fold copies of a member
        # (parsing.member_folds) share its name, and each piece needs its own spec file
        specs = [(job.path.stem, member_job_to_json(job)) for job in jobs]
        for result in _fan_out(app, session, parent, data_dir, MEMBER_KIND, specs, progress):
            yield str(result["member"]), float(result["seconds"]), bool(result["warm"])
    return run


def queue_fold_runner(app: Flask, session: DbSession, parent: Job, data_dir: Path,
                      progress: Progress) -> FoldRunner | None:
    """A fold runner spreading ``parent``'s tagger fits (:mod:`parsing.tagger.folds`) over the
    queue's workers; None when ``JOB_QUEUE`` has no workers."""
    if not _has_workers(app):
        return None

    def run(jobs: Sequence[TagFoldJob]) -> Iterator[TaggedFold]:
        specs = [(job.name, tag_fold_to_json(job)) for job in jobs]
        for result in _fan_out(app, session, parent, data_dir, TAG_FOLD_KIND, specs, progress):
            tagged = json.loads(Path(result["tagged"]).read_text(encoding="utf-8"))
            yield str(result["fold"]), [sentence_from_json(s) for s in tagged]
    return run


def _fan_out(app: Flask, session: DbSession, parent: Job, data_dir: Path, kind: str,
             specs: Sequence[tuple[str, dict[str, Any]]], progress: Progress) -> Iterator[dict[str, Any]]:
    """Run one child job of ``kind`` per ``(label, spec)``; yield each one's result as it ends."""
    children: dict[int, str] = {}
    try:
        children.update(_queue_children(app, session, parent, data_dir, kind, specs))
        yield from _collect(app, session, parent, children, progress, CHILD_KINDS[kind])
    except BaseException:  # the round stops (failed, cancelled, closed): so do its children
        session.rollback()
        _stop_unfinished(session, list(children))
        raise
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


CHILD_KINDS = {MEMBER_KIND: ("member", "training"), TAG_FOLD_KIND: ("fold", "tagger fit")}
"""By child kind: the ``params`` key naming the piece, and what the round is doing with it."""


def _queue_children(app: Flask, session: DbSession, parent: Job, data_dir: Path, kind: str,
                    specs: Sequence[tuple[str, dict[str, Any]]]) -> dict[int, str]:
    """Write each piece's spec, add and queue one job each: ``{job id: label}``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    user = session.get(User, parent.user_id)
    assert user is not None
    key = CHILD_KINDS[kind][0]
    children: dict[int, str] = {}
    for label, data in specs:
        spec = data_dir / f"{label}.json"
        spec.write_text(json.dumps(data), encoding="utf-8")
        child = create_job(session, kind=kind, user=user,
                           params={"parent": parent.id, key: label, "spec": str(spec)})
        children[child.id] = label
    session.commit()
    for child_id in children:
        submit(app, child_id)
    return children


def _collect(app: Flask, session: DbSession, parent: Job, children: dict[int, str],
             progress: Progress, kind: tuple[str, str]) -> Iterator[dict[str, Any]]:
    """Claim and run children from the back, yield each finished one's result, fail on a failed one."""
    key, doing = kind
    reported: set[int] = set()
    to_claim = list(reversed(children))
    while len(reported) < len(children):
        if to_claim:
            child_id = to_claim.pop(0)
            progress(f"{doing} {children[child_id]}")
            run_job(app, child_id)  # a no-op when another worker claimed it first
        else:
            time.sleep(POLL_SECONDS)
            if session.scalar(select(Job.cancel_requested_at).where(Job.id == parent.id)) is not None:
                raise JobCancelled(f"waiting for the {key}s other workers run")
        rows = session.execute(select(Job.id, Job.state, Job.result, Job.error)
                               .where(Job.id.in_(list(children)))).all()
        session.commit()  # end the read: the next poll sees other workers' commits
        for child_id, state, result, error in rows:
            if child_id in reported or state in ("queued", "running"):
                continue
            if state != "done" or not result:
                raise JobFailed(f"{doing} {key} {children[child_id]} {state}: {error or 'no result'}")
            reported.add(child_id)
            yield dict(result)


def _stop_unfinished(session: DbSession, child_ids: list[int]) -> None:
    """Cancel the child jobs still queued, ask the running ones to stop (commits)."""
    if not child_ids:
        return
    now = datetime.now(UTC)
    session.execute(update(Job).where(Job.id.in_(child_ids), Job.state == "queued")
                    .values(state="cancelled", finished_at=now, message="its round stopped"))
    session.execute(update(Job).where(Job.id.in_(child_ids), Job.state == "running")
                    .values(cancel_requested_at=now))
    session.commit()


def parent_is_running(session: DbSession, job: Job) -> bool:
    """Whether the round of child job ``job`` still runs (else its piece need not run)."""
    parent_id = (job.params or {}).get("parent")
    return session.scalar(select(Job.state).where(Job.id == parent_id)) == "running"
