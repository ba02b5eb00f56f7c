"""Fan-out: on a real queue, a round's members train as jobs of their own, on any free worker.

The round's job writes each member's training data (:class:`parsing.member_fit.MemberJob` as
JSON) beside its staging directory, adds one ``train_member`` job per member and queues them.
Then it works too: it claims the member jobs itself from the back of the list (with the same
one-winner claim as any worker: :func:`app.jobs.run_job`) while other workers take them from
the front, and waits for the rest. With one worker the round's job trains every member itself;
with N, up to N members train at once. A member job that fails (or whose worker died) fails the
round; a round that stops cancels its member jobs still queued or running.
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
from parsing.types import Sentence

MEMBER_KIND = "train_member"
POLL_SECONDS = 0.3


def sentence_to_json(sentence: Sentence) -> dict[str, Any]:
    """A :class:`~parsing.types.Sentence` as JSON-ready columns."""
    return {"forms": sentence.forms, "lemmas": sentence.lemmas, "upos": sentence.upos, "xpos": sentence.xpos,
            "feats": sentence.feats, "heads": [int(h) for h in sentence.heads], "deprels": sentence.deprels,
            "sent_id": sentence.sent_id}


def sentence_from_json(data: dict[str, Any]) -> Sentence:
    """The inverse of :func:`sentence_to_json`."""
    return Sentence(forms=data["forms"], lemmas=data["lemmas"], upos=data["upos"], xpos=data["xpos"],
                    feats=data["feats"], heads=np.asarray(data["heads"], dtype=np.int64),
                    deprels=data["deprels"], sent_id=data["sent_id"])


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


def queue_runner(app: Flask, session: DbSession, parent: Job, data_dir: Path,
                 progress: Progress) -> MemberRunner | None:
    """A member runner spreading ``parent``'s members over the queue's workers; None when
    ``JOB_QUEUE`` has no workers (inline, thread: the members train in this process)."""
    if app.config.get("JOB_QUEUE", "sqlite") not in ("sqlite", "redis"):
        return None

    def run(jobs: Sequence[MemberJob]) -> Iterator[Fitted]:
        children: dict[int, str] = {}
        try:
            children.update(_queue_members(app, session, parent, data_dir, jobs))
            yield from _collect(app, session, parent, children, progress)
        except BaseException:  # the round stops (failed, cancelled, closed): so do its members
            session.rollback()
            _stop_unfinished(session, list(children))
            raise
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)
    return run


def _queue_members(app: Flask, session: DbSession, parent: Job, data_dir: Path,
                   jobs: Sequence[MemberJob]) -> dict[int, str]:
    """Write the members' data, add and queue one job each: ``{job id: member name}``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    user = session.get(User, parent.user_id)
    assert user is not None
    children: dict[int, str] = {}
    for job in jobs:
        spec = data_dir / f"{job.name}.json"
        spec.write_text(json.dumps(member_job_to_json(job)), encoding="utf-8")
        child = create_job(session, kind=MEMBER_KIND, user=user,
                           params={"parent": parent.id, "member": job.name, "spec": str(spec)})
        children[child.id] = job.name
    session.commit()
    for child_id in children:
        submit(app, child_id)
    return children


def _collect(app: Flask, session: DbSession, parent: Job, children: dict[int, str],
             progress: Progress) -> Iterator[Fitted]:
    """Claim and run members from the back, yield each finished one, fail on a failed one."""
    reported: set[int] = set()
    to_claim = list(reversed(children))
    while len(reported) < len(children):
        if to_claim:
            child_id = to_claim.pop(0)
            progress(f"training {children[child_id]}")
            run_job(app, child_id)  # a no-op when another worker claimed it first
        else:
            time.sleep(POLL_SECONDS)
            if session.scalar(select(Job.cancel_requested_at).where(Job.id == parent.id)) is not None:
                raise JobCancelled("waiting for members trained by other workers")
        rows = session.execute(select(Job.id, Job.state, Job.result, Job.error)
                               .where(Job.id.in_(list(children)))).all()
        session.commit()  # end the read: the next poll sees other workers' commits
        for child_id, state, result, error in rows:
            if child_id in reported or state in ("queued", "running"):
                continue
            if state != "done" or not result:
                raise JobFailed(f"training member {children[child_id]} {state}: {error or 'no result'}")
            reported.add(child_id)
            yield str(result["member"]), float(result["seconds"]), bool(result["warm"])


def _stop_unfinished(session: DbSession, child_ids: list[int]) -> None:
    """Cancel the member jobs still queued, ask the running ones to stop (commits)."""
    if not child_ids:
        return
    now = datetime.now(UTC)
    session.execute(update(Job).where(Job.id.in_(child_ids), Job.state == "queued")
                    .values(state="cancelled", finished_at=now, message="its round stopped"))
    session.execute(update(Job).where(Job.id.in_(child_ids), Job.state == "running")
                    .values(cancel_requested_at=now))
    session.commit()


def parent_is_running(session: DbSession, job: Job) -> bool:
    """Whether the round of member job ``job`` still runs (else the member need not train)."""
    parent_id = (job.params or {}).get("parent")
    return session.scalar(select(Job.state).where(Job.id == parent_id)) == "running"
