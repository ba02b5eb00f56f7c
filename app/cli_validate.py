"""``flask --app app treebank validate``: the UD validator over a whole treebank (issue #32)::

    flask --app app treebank validate NAME [--source S] [--split S] [--json] [--user U]
      → the report: {"source", "split", "language", "levels", "sentences", "without_tree",
         "total", "truncated", "tests": [{"test", "level", "count", "sentences"}],
         "incidents": [{"sentence_id", "sent_id", "word", "form", "test", "level", "message"}]}

It runs as a ``validate`` job in this process (so the validation page shows its report too) and
needs ``curate`` on the treebank. An unknown source or split exits with status 1 and the message.
"""

from __future__ import annotations

import json

import click
from flask import current_app
from flask.cli import with_appcontext

from app.cli import _acting_user, _treebank_for
from app.cli_search import tree_source_options
from app.extensions import db
from app.job_models import Job
from app.jobs import create_job, run_job
from app.jobs.check_tasks import KIND
from app.services.search import check_source
from app.services.sources import SourceError


@click.command("validate")
@click.argument("name")
@tree_source_options
@with_appcontext
def validate_command(name: str, source: str, split: str | None, as_json: bool, username: str) -> None:
    """Validate the SOURCE trees of treebank NAME with the UD validator."""
    user = _acting_user(username)
    treebank = _treebank_for(name, user, "curate")
    try:
        check_source(db.session, treebank, source)
    except SourceError as error:
        raise click.ClickException(str(error)) from None
    job = create_job(db.session, kind=KIND, user=user, treebank_id=treebank.id,
                     params={"source": source, "split": split})
    db.session.commit()
    job_id = job.id
    run_job(current_app._get_current_object(), job_id)  # type: ignore[attr-defined]
    db.session.expire_all()  # the job ran in its own session
    done = db.session.get(Job, job_id)
    if done is None or done.state != "done" or done.result is None:
        raise click.ClickException(f"validation job {job_id} {done.state if done else 'vanished'}: "
                                   f"{done.error if done else ''}")
    report = done.result
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    for test in report["tests"]:
        click.echo(f"L{test['level']}\t{test['test']}\t{test['count']} errors "
                   f"in {test['sentences']} sentences")
    click.echo(f"{report['total']} errors in {report['sentences']} sentences checked "
               f"(source {source}, levels 1-{report['levels']}; job {job_id}).")
