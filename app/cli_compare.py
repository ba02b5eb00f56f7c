"""``flask --app app treebank add-parse|scoreboard|plugin``: external parses in, scores out (issue #16).

The names and the ``--json`` shape are a contract scripts depend on::

    flask --app app treebank add-parse NAME FILE --parser LABEL
    flask --app app treebank scoreboard NAME [--split S] [--against gold|reviewed] [--json]
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import current_app

from app.cli import _acting_user, _treebank_for
from app.extensions import db
from app.models import SPLITS
from app.services.external import UploadError, add_parse, allowed_hosts, set_plugin
from app.services.scoreboard import SUMMARY_HEADER, scoreboard, summary_rows
from app.services.sources import REFERENCES, SourceError
from app.wording import counted
from parsing.conllu_io import ConlluError


@click.command("add-parse")
@click.argument("name")
@click.argument("path", metavar="FILE", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--parser", "label", required=True, help="The external parser's label (e.g. udpipe2).")
@click.option("--user", "username", default="admin", show_default=True,
              help="Act as this user (needs 'import' on the treebank; recorded as the uploader).")
def add_parse_command(name: str, path: Path, label: str, username: str) -> None:
    """Store another parser's CoNLL-U output for treebank NAME as external parser LABEL.

    Sentences are matched by sent_id, else text, else words; a sentence with other tokens refuses
    the whole file and nothing is stored.
    """
    user = _acting_user(username)
    treebank = _treebank_for(name, user, "import")
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if path.stat().st_size > limit:
        raise click.ClickException(f"{path.name}: file is larger than the {limit // 2**20} MB limit")
    try:
        result = add_parse(db.session, treebank, data=path.read_bytes(), filename=path.name, label=label,
                           user=user, max_bytes=limit)
    except (UploadError, ConlluError) as error:
        db.session.rollback()
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"Stored {counted(result.sentences, 'tree')} of {label} in {treebank.name}.")


@click.command("scoreboard")
@click.argument("name")
@click.option("--split", type=click.Choice(SPLITS), default=None, help="Only this split (default: all).")
@click.option("--against", type=click.Choice(REFERENCES), default="gold", show_default=True,
              help="Score against the imported gold trees or the reviewed trees.")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"against": ..., "sources": {LABEL: {"UAS", "LAS", "CLAS", "words"}}} (in %).')
@click.option("--user", "username", default="admin", show_default=True,
              help="Act as this user (needs 'read').")
def scoreboard_command(name: str, split: str | None, against: str, as_json: bool,
                       username: str = "admin") -> None:
    """Score every parser, the ensemble, the oracle and the external parsers of treebank NAME
    (CoNLL 2018 conventions, as `python -m parsing evaluate`)."""
    try:
        board = scoreboard(db.session, _treebank_for(name, _acting_user(username), "read"), split=split,
                           against=against)
    except SourceError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(board.to_json(), sort_keys=True))
        return
    if not board.sources:
        click.echo(f"Nothing to score: no sentence of {name} ({split or 'all splits'}) has both a {against} "
                   "tree and a parser's tree.")
        return
    where = split or "all splits"
    click.echo(f"{name} · {where} · against {against} ({counted(board.reference_sentences, 'sentence')})")
    click.echo("\t".join(SUMMARY_HEADER))
    for row in summary_rows(board):
        click.echo("\t".join(str(cell) for cell in row))


@click.command("plugin")
@click.argument("name")
@click.argument("label")
@click.option("--command", default=None,
              help="The parser's command line: CoNLL-U on stdin, CoNLL-U with trees on stdout.")
@click.option("--url", default=None,
              help="Or an HTTP endpoint (http/https): CoNLL-U POSTed, CoNLL-U with trees in the reply.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds per batch of sentences.")
@click.option("--remove", is_flag=True, help="Stop running LABEL (its trees stay).")
@click.option("--user", "username", default="admin", show_default=True,
              help="Act as this user (needs 'manage' on the treebank).")
def plugin_command(
    name: str, label: str, command: str | None, timeout: float, remove: bool, username: str,
    url: str | None = None,
) -> None:
    """Run external parser LABEL during every pre-annotation of treebank NAME, like a member.

    The command runs without a shell (the endpoint gets one POST), once per batch, stopped after
    --timeout seconds; when it fails or returns other tokens the job's result says so and the round
    goes on without it.
    """
    if [bool(command), bool(url), remove].count(True) != 1:
        raise click.ClickException("give --command, --url, or --remove")
    try:
        user = _acting_user(username)
        set_plugin(db.session, _treebank_for(name, user, "manage"), label=label, url=url,
                   command=None if remove else command, timeout=timeout, user=user,
                   allowed=allowed_hosts(current_app.config))
    except UploadError as error:
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"{label} {'no longer runs' if remove else 'runs'} during pre-annotation of {name}.")
