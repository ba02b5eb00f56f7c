"""Command-line interface: ``flask --app app treebank|user|demo ...``.

Each command is one transaction: it calls services, then commits once (or rolls back).
Commands that touch a treebank act as ``--user`` (default ``admin``) and ask
:mod:`app.services.permissions` like the web pages do: a treebank that user may not read is
reported as missing, an action they may not do is refused with the reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click
from flask import current_app
from flask.cli import AppGroup

from app.extensions import db
from app.models import ROLES, SPLITS, Treebank, User
from app.services.audit import record
from app.services.backup import backup_lines
from app.services.exports import export_treebank
from app.services.imports import import_conllu, import_text
from app.services.members import MemberError, set_role
from app.services.permissions import PermissionDenied, require
from app.services.restore import BackupError, restore_backup
from app.services.users import UserExistsError, create_user, ensure_admin, find_user
from app.wording import counted
from parsing.conllu_io import ConlluError

treebank_cli = AppGroup("treebank", help="Import and export treebanks.")
user_cli = AppGroup("user", help="Manage user accounts.")
demo_cli = AppGroup("demo", help="Set up the demo treebank.")


def _acting_user(username: str) -> User:
    user = find_user(db.session, username)
    if user is None:
        raise click.ClickException(
            f"no user {username!r}: create one with `flask --app app user create {username}`"
        )
    if not user.active:
        raise click.ClickException(f"user {username!r} is deactivated")
    return user


def _treebank_for(name: str, user: User, action: str) -> Treebank:
    """The treebank called ``name`` if ``user`` may do ``action`` on it, else a ClickException
    (a treebank they may not read is reported as missing)."""
    treebank: Treebank | None = db.session.scalar(db.select(Treebank).where(Treebank.name == name))
    if treebank is None:
        raise click.ClickException(f"no treebank called {name!r}")
    try:
        require(user, action, treebank)
    except PermissionDenied as denied:
        raise click.ClickException(str(denied)) from None
    return treebank


@treebank_cli.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", required=True, help="Treebank name (created when new).")
@click.option("--split", type=click.Choice(SPLITS), default=None,
              help="Default: train for CoNLL-U, pool for text (text and sentences without trees: pool only).")
@click.option("--format", "file_format", type=click.Choice(["conllu", "text"]), default="conllu",
              show_default=True, help="text: plain UTF-8 text, tokenized into the pool.")
@click.option("--one-per-line", is_flag=True,
              help="With --format text: one sentence per line (default: running text, split into sentences).")
@click.option("--language", default=None, help="Language code (default: from a UD file name).")
@click.option("--user", "username", default="admin", show_default=True,
              help="The user recorded as the importer.")
def import_command(path: Path, name: str, split: str | None, file_format: str, one_per_line: bool,
                   language: str | None, username: str) -> None:
    """Import a CoNLL-U or plain-text file; a malformed file is refused and nothing is stored."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if path.stat().st_size > limit:
        raise click.ClickException(
            f"{path.name}: file is larger than the {limit // 2**20} MB limit"
        )
    chosen_split = split or ("pool" if file_format == "text" else "train")
    user, data = _acting_user(username), path.read_bytes()
    try:
        if file_format == "text":
            result = import_text(db.session, data=data, filename=path.name, treebank_name=name,
                                 split=chosen_split, user=user, one_per_line=one_per_line,
                                 language=language, max_bytes=limit)
        else:
            result = import_conllu(db.session, data=data, filename=path.name, treebank_name=name,
                                   split=chosen_split, user=user, language=language, max_bytes=limit)
    except (ConlluError, ValueError, PermissionDenied) as error:
        db.session.rollback()
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"Imported {counted(result.sentences, 'sentence')} ({counted(result.words, 'word')}, "
               f"{counted(result.trees, 'tree')}) into {result.treebank.name} [{chosen_split}].")


@treebank_cli.command("export")
@click.argument("name")
@click.option("--source", default="gold", show_default=True,
              help="gold, latest (newest correction, else gold), ensemble or a parser's name.")
@click.option("--split", type=click.Choice(SPLITS), default=None, help="Only this split.")
@click.option("--reviewed-only", is_flag=True,
              help="Only reviewed sentences (and the gold trees of train/dev/test).")
@click.option("--provenance", is_flag=True,
              help="Add each annotated arc's source to MISC: ArcSource=human or ArcSource=parser.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file (default: standard output).")
@click.option("--user", "username", default="admin", show_default=True, help="Act as this user.")
def export_command(name: str, source: str, split: str | None, reviewed_only: bool, provenance: bool,
                   output: Path | None, username: str = "admin") -> None:
    """Write a treebank as CoNLL-U with the trees of one source.

    Sentences without a tree from SOURCE are left out; their number is reported on stderr.
    """
    user = _acting_user(username)
    treebank = _treebank_for(name, user, "read")
    try:
        export = export_treebank(db.session, treebank, source=source, split=split,
                                 reviewed_only=reviewed_only, provenance=provenance)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    record(db.session, "export", user=user, treebank=treebank, source=source, split=split,
           reviewed_only=reviewed_only, provenance=provenance, sentences=export.sentences, via="cli")
    db.session.commit()
    if output is None:
        sys.stdout.write(export.text)
    else:
        output.write_bytes(export.text.encode("utf-8"))
        click.echo(f"Wrote {counted(export.sentences, 'sentence')} to {output}.", err=True)
    if export.omitted:
        click.echo(f"{counted(export.omitted, 'sentence')} without a tree from {source} left out.", err=True)


@treebank_cli.command("backup")
@click.argument("name")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The backup file to write (JSON lines; see app/services/backup.py).")
@click.option("--user", "username", default="admin", show_default=True, help="Act as this user (an owner).")
def backup_command(name: str, output: Path, username: str) -> None:
    """Back up a whole treebank: every version, note, state, assignment, round record, member and event."""
    user = _acting_user(username)
    treebank = _treebank_for(name, user, "manage")
    record(db.session, "backup", user=user, treebank=treebank, via="cli")
    with output.open("w", encoding="utf-8") as out:
        lines = sum(out.write(line) > 0 for line in backup_lines(db.session, treebank))
    db.session.commit()
    click.echo(f"Wrote {lines} records of {treebank.name} to {output}.", err=True)


@treebank_cli.command("restore")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", default=None, help="Restore under this name (default: the backed-up name).")
@click.option("--user", "username", default="admin", show_default=True, help="Act as this user (an admin).")
def restore_command(path: Path, name: str | None, username: str) -> None:
    """Restore a treebank from a backup into this instance (nothing is written if the file is bad)."""
    user = _acting_user(username)
    try:
        with path.open("r", encoding="utf-8") as lines:
            treebank = restore_backup(db.session, lines, user=user, name=name)
    except (BackupError, UnicodeDecodeError) as error:
        db.session.rollback()
        raise click.ClickException(f"{path.name}: {error}") from None
    db.session.commit()
    click.echo(f"Restored {treebank.name}.", err=True)


def _sentence_ids(text: str | None) -> list[int]:
    """``--sentences``' comma-separated ids (none: an empty list)."""
    try:
        return [int(part) for part in (text or "").split(",") if part.strip()]
    except ValueError:
        raise click.ClickException("--sentences takes comma-separated sentence ids") from None


def _run_to_end(job_id: int) -> dict[str, Any]:
    """Run job ``job_id`` here and now; its result, or a ClickException with its error."""
    from app.job_models import Job
    from app.jobs import run_job

    run_job(current_app._get_current_object(), job_id)  # type: ignore[attr-defined]
    db.session.expire_all()
    done = db.session.get(Job, job_id)
    if done is None or done.state != "done":
        raise click.ClickException(f"job {job_id} failed: {done.error if done else 'vanished'}")
    return dict(done.result or {})


@treebank_cli.command("preannotate")
@click.argument("name")
@click.option("--parsers", default=None,
              help="Comma-separated members (default: parsing.members.default_members for the tags).")
@click.option("--tags", type=click.Choice(["gold", "predicted"]), default="gold", show_default=True)
@click.option("--ensemble", default=None,
              help="Combination method (default: the measured one; see `python -m parsing list-parsers`).")
@click.option("--sentences", "sentence_ids", default=None,
              help="Comma-separated sentence ids to parse (default: every unannotated pool sentence).")
@click.option("--self-training", "self_training", type=click.Choice(["none", "own", "ensemble"]),
              default="none", show_default=True,
              help="Train also on pool trees of the last pre-annotation.")
@click.option("--self-training-select", type=click.Choice(["confidence", "agreement", "random"]),
              default="confidence", show_default=True, help="Which automatic trees are trusted.")
@click.option("--self-training-sentences", type=click.IntRange(0), default=None,
              help="At most this many automatic trees (default: as many as human trees).")
@click.option("--warm", is_flag=True, help="Continue members from the last round's weights where they can.")
@click.option("--raw-text", is_flag=True,
              help="The cluster and meta-feature members learn from the pool's text too.")
@click.option("--external", "externals", multiple=True, metavar="LABEL",
              help="An external parser voting in the ensemble (repeat; a voting method only).")
@click.option("--score-split", "score_splits", multiple=True, type=click.Choice(["dev", "test"]),
              help="Parse this split's sentences too, for the scoreboard (repeat).")
@click.option("--with-round", "with_round", type=click.IntRange(1), default=None, metavar="N",
              help="No training: parse with round N's models the pool sentences no round has parsed "
                   "(text imported since; or --sentences). The other options are ignored.")
@click.option("--user", "username", default="admin", show_default=True, help="Act as this user.")
def preannotate_command(
    name: str, parsers: str | None, tags: str, username: str, sentence_ids: str | None = None,
    ensemble: str | None = None, self_training: str = "none", self_training_select: str = "confidence",
    self_training_sentences: int | None = None, warm: bool = False, externals: tuple[str, ...] = (),
    score_splits: tuple[str, ...] = (), raw_text: bool = False, with_round: int | None = None,
) -> None:
    """Train a round on NAME's trees and pre-annotate its unannotated pool sentences (with
    --with-round: parse new text with an earlier round's models, no training)."""
    from app.jobs import RoundBusy, create_job
    from app.services.external_votes import VoterError, check_voters
    from app.services.parse_with_round import reusable_round
    from app.services.preannotate import require_installed
    from app.services.raw_text_rounds import check_raw_text
    from app.services.self_training import parse_settings
    from parsing.ensemble.registry import default_method, method_spec
    from parsing.members import default_members, member_names

    user = _acting_user(username)
    treebank = _treebank_for(name, user, "train")
    chosen_ids = _sentence_ids(sentence_ids)
    if with_round is not None:
        try:
            reusable_round(db.session, treebank, with_round)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
        picked = {"sentences": chosen_ids} if chosen_ids else {}
        try:
            job = create_job(db.session, kind="preannotate", user=user, treebank_id=treebank.id,
                             params={"with_round": with_round, **picked})
        except RoundBusy as busy:
            raise click.ClickException(str(busy)) from None
        db.session.commit()
        click.echo(f"Parsing {name!r} with round {with_round}'s models (no training), job {job.id}...")
        result = _run_to_end(job.id)
        parsed = counted(int(result.get("parsed") or 0), "sentence")
        click.echo(f"Round {with_round}'s models parsed {parsed}.")
        return
    method = ensemble or default_method(tags)
    try:
        chosen = member_names(parsers or ",".join(default_members(tags)))
        require_installed(chosen)
        if not method_spec(method).uses(chosen):
            raise ValueError(f"ensemble {method} combines none of {', '.join(chosen)}")
        voters = check_voters(db.session, treebank, externals, method)
        if raw_text:
            check_raw_text(db.session, treebank, chosen)
    except (ValueError, VoterError) as error:
        raise click.ClickException(str(error)) from None
    params: dict[str, object] = {"parsers": chosen, "tags": tags, "ensemble": method,
                                 "self_training": parse_settings({
                                     "source": self_training, "select": self_training_select,
                                     "sentences": self_training_sentences}),
                                 "warm": warm, "externals": voters, "score_splits": list(score_splits),
                                 "raw_text": raw_text}
    if chosen_ids:
        params["sentences"] = chosen_ids
    try:
        job = create_job(db.session, kind="preannotate", user=user, treebank_id=treebank.id, params=params)
    except RoundBusy as busy:
        raise click.ClickException(str(busy)) from None
    db.session.commit()
    click.echo(f"Pre-annotating {name!r} with {', '.join(chosen)} ({tags} tags, {method} ensemble), "
               f"job {job.id}...")
    result = _run_to_end(job.id)
    click.echo(f"Round {result.get('round')}: parsed {counted(int(result.get('parsed') or 0), 'sentence')} "
               f"(trained on {result.get('train_sentences')}, tuned on {result.get('dev_sentences')}).")


@treebank_cli.command("role")
@click.argument("name")
@click.argument("member")
@click.argument("role", type=click.Choice(ROLES))
@click.option("--user", "username", default="admin", show_default=True, help="Act as this user.")
def role_command(name: str, member: str, role: str, username: str) -> None:
    """Give user MEMBER the ROLE on treebank NAME (needs the owner's ``manage`` permission)."""
    user = _acting_user(username)
    treebank = _treebank_for(name, user, "manage")
    try:
        set_role(db.session, treebank, member, role, by=user)
    except MemberError as error:
        db.session.rollback()
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"{member} is {role} of {name}.")


@user_cli.command("create")
@click.argument("username")
@click.option("--admin", is_flag=True, help="Give the user admin rights.")
@click.password_option(envvar="ARCVOTE_PASSWORD", help="Password (prompted when not given).")
def create_user_command(username: str, admin: bool, password: str) -> None:
    """Create a user account."""
    try:
        create_user(db.session, username, password, admin=admin)
    except (UserExistsError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"Created {'admin ' if admin else ''}user {username}.")


ADMIN_LINE = "Admin account:"
"""How the line of ``user ensure-admin`` that says how to sign in starts (``make run`` names it)."""


@user_cli.command("ensure-admin")
@click.option("--username", default="admin", show_default=True)
@click.option("--line-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the 'Admin account:' line to this file (owner-only), for `make run` to "
                   "print it again once setup's logs are done.")
def ensure_admin_command(username: str, line_file: Path | None = None) -> None:
    """Create the admin account if missing (password from ARCVOTE_ADMIN_PASSWORD or random) and
    print one line, starting with :data:`ADMIN_LINE`, that says how to sign in."""
    try:
        user, password = ensure_admin(db.session, username, os.environ.get("ARCVOTE_ADMIN_PASSWORD"))
    except ValueError as error:  # a password too short, say
        raise click.ClickException(f"ARCVOTE_ADMIN_PASSWORD: {error}") from None
    db.session.commit()
    from_environment = bool(os.environ.get("ARCVOTE_ADMIN_PASSWORD"))
    line = admin_line(user.username, password, from_environment=from_environment)
    click.echo(line)
    if line_file is not None:  # a new file, readable by its owner only: it may hold the password
        line_file.unlink(missing_ok=True)
        descriptor = os.open(line_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(line + "\n")


def admin_line(username: str, password: str | None, *, from_environment: bool) -> str:
    """The sign-in line: the new random ``password`` (shown only this once), the one in
    ARCVOTE_ADMIN_PASSWORD, or, for an account that exists, how to set a new one."""
    reset = "to set a new one: ARCVOTE_ADMIN_PASSWORD=... make run (or flask --app app user ensure-admin)"
    if password and not from_environment:
        return (f"{ADMIN_LINE} sign in as {username!r} with password: {password} — shown only this once; "
                f"{reset}.")
    if password:
        return f"{ADMIN_LINE} sign in as {username!r} with the password in ARCVOTE_ADMIN_PASSWORD."
    return (f"{ADMIN_LINE} {username!r} already exists (password unchanged): sign in with the password "
            f"printed when it was created; {reset}.")


@demo_cli.command("setup")
@click.option("--sentences", default=300, show_default=True, help="Demo sentences for train, dev and pool.")
@click.option("--test-sentences", default=60, show_default=True,
              help="The sentences after them, as a test split with gold trees (for the scoreboard).")
@click.option("--user", "username", default="admin", show_default=True)
def demo_setup_command(sentences: int, username: str, test_sentences: int = 60) -> None:
    """Import the demo treebank (idempotent); `demo preannotate` trains on it and parses its pool
    and test split."""
    from app.services.demo import DEMO_NAME, setup_demo

    try:
        result = setup_demo(db.session, user=_acting_user(username), sentences=sentences,
                            test_sentences=test_sentences)
    except PermissionDenied as denied:
        raise click.ClickException(str(denied)) from None
    db.session.commit()
    if result is None:
        click.echo(f"Demo treebank {DEMO_NAME!r} is already imported.")
    else:
        click.echo(f"Imported demo treebank {DEMO_NAME!r}: " + ", ".join(
            f"{split} {count}" for split, count in result.items()) + " sentences.")


@demo_cli.command("preannotate")
@click.option("--parsers", default="graph1,eager,hybrid", show_default=True)
@click.option("--user", "username", default="admin", show_default=True)
@click.pass_context
def demo_preannotate_command(ctx: click.Context, parsers: str, username: str) -> None:
    """Train the fast members (gold tags) on the demo treebank and pre-annotate its pool, once; its
    test split is parsed too, so that the scoreboard scores every parser against gold."""
    from app.job_models import Job
    from app.services.demo import DEMO_NAME

    treebank = db.session.scalar(db.select(Treebank).where(Treebank.name == DEMO_NAME))
    if treebank is None:
        raise click.ClickException("import the demo first: flask --app app demo setup")
    _treebank_for(DEMO_NAME, _acting_user(username), "train")
    if db.session.scalar(db.select(Job.id).where(Job.treebank_id == treebank.id, Job.state == "done",
                                                 Job.kind == "preannotate")):
        click.echo(f"Demo treebank {DEMO_NAME!r} is already pre-annotated.")
        return
    ctx.invoke(preannotate_command, name=DEMO_NAME, parsers=parsers, tags="gold", username=username,
               score_splits=("test",))
