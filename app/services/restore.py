"""Restore a treebank from a backup (:mod:`app.services.backup` describes the format).

:func:`restore_backup` reads every line first and writes nothing until the whole file is
valid; it then adds the treebank in the caller's transaction (it flushes, never commits), so a
bad file leaves no half-written treebank. Users are matched by name; a user the instance does
not have is created **deactivated** with no usable password (an admin activates them and
makes a reset link). Only a site admin restores (the backup brings accounts and roles), and only
under a name no treebank has yet.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from werkzeug.security import generate_password_hash

from app.models import Token, Treebank, User
from app.services import DbSession
from app.services.audit import record
from app.services.backup import FORMAT, HEADER_FIELDS, SENTENCE_LISTS, SETTINGS_FIELDS, SPECS, TOKEN_FIELDS
from app.team_models import AUDIT_ACTIONS

KINDS = ("backup", *SPECS)
Records = dict[str, list[dict[str, Any]]]


class BackupError(ValueError):
    """The file is not a backup this version can restore (the message names the line)."""


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def read_backup(lines: Iterable[str | bytes]) -> Records:
    """The file's records by type, checked for shape.

    :raise BackupError: not JSON, an unknown type or format, a header not first.
    """
    records: Records = {kind: [] for kind in KINDS}
    for number, raw in enumerate(lines, start=1):
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        if not text.strip():
            continue
        try:
            entry = json.loads(text)
        except ValueError as error:
            raise BackupError(f"line {number}: not JSON ({error})") from None
        if not isinstance(entry, dict) or entry.get("type") not in KINDS:
            raise BackupError(f"line {number}: not a backup record")
        if (number == 1) != (entry["type"] == "backup"):
            raise BackupError(f"line {number}: a backup starts with one 'backup' line")
        entry["_line"] = number
        records[entry["type"]].append(entry)
    if not records["backup"]:
        raise BackupError("the file is empty")
    if (found := records["backup"][0].get("format")) != FORMAT:
        raise BackupError(f"line 1: backup format {found!r}; this version reads {FORMAT}")
    return records


def restore_backup(session: DbSession, lines: Iterable[str | bytes], *, user: User,
                   name: str | None = None) -> Treebank:
    """Add the backed-up treebank (as ``name`` if given) and everything in it.

    :raise BackupError: an invalid file, a treebank of that name exists, ``user`` is no admin.
    """
    if not user.is_admin:
        raise BackupError("only a site administrator restores a backup (it brings accounts and roles)")
    records = read_backup(lines)
    header = records["backup"][0]["treebank"]
    name = (name or header["name"]).strip()
    if session.scalar(select(Treebank.id).where(Treebank.name == name)) is not None:
        raise BackupError(f"a treebank called {name!r} exists: restore under another name")
    if bad := [e["_line"] for e in records["event"] if e.get("action") not in AUDIT_ACTIONS]:
        raise BackupError(f"line {bad[0]}: unknown event action")
    try:
        return _Restore(session, records).run(header, name, user)
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, BackupError):
            raise
        raise BackupError(f"a record lacks a field or has a bad value: {error!r}") from None


class _Restore:
    """One restore: users by name (unknown names become deactivated accounts), refs → new ids."""

    def __init__(self, session: DbSession, records: Records) -> None:
        self.session, self.records = session, records
        self.by_name = {u.username: u for u in session.scalars(select(User))}
        self.created: list[str] = []
        self.ids: dict[str, dict[int, int]] = {"document": {}, "sentence": {}, "tree": {}}

    def user_id(self, name: str | None, optional: bool = False) -> int | None:
        if name is None:
            if optional:
                return None
            raise BackupError("a record names no user where one is needed")
        if name not in self.by_name:
            user = User(username=name, password_hash=generate_password_hash(secrets.token_urlsafe(32)),
                        active=False)
            self.session.add(user)
            self.session.flush()
            self.by_name[name] = user
            self.created.append(name)
        return self.by_name[name].id

    def add(self, record_type: str, entry: dict[str, Any], **columns: Any) -> Any:
        """Insert the row of one record (its ``SPECS`` columns plus ``columns``); flushes."""
        spec = SPECS[record_type]
        values = {name: entry[name] for name in spec.fields}
        values |= {name: _time(entry[name]) for name in spec.times}
        values |= {column: self.user_id(entry[name], name in spec.optional_users)
                   for name, column in spec.users.items()}
        row = spec.model(**values, **columns)
        self.session.add(row)
        self.session.flush()
        if record_type in self.ids:
            self.ids[record_type][entry["ref"]] = row.id
        return row

    def ref(self, record_type: str, ref: int | None) -> int | None:
        return None if ref is None else self.ids[record_type][ref]

    def run(self, header: dict[str, Any], name: str, user: User) -> Treebank:
        fields = {key: header[key] for key in HEADER_FIELDS if key != "name"}
        fields |= {key: header.get(key, default) for key, default in SETTINGS_FIELDS.items()}
        treebank = Treebank(name=name, **fields,
            created_at=_time(header["created_at"]), archived_at=_time(header["archived_at"]),
            created_by_id=self.user_id(header["created_by"]))
        self.session.add(treebank)
        self.session.flush()
        records = self.records
        for entry in records["membership"]:
            self.add("membership", entry, treebank_id=treebank.id)
        for entry in records["document"]:
            self.add("document", entry, treebank_id=treebank.id)
        for entry in records["sentence"]:
            sentence = self.add("sentence", entry, document_id=self.ref("document", entry["document"]))
            self.session.add_all(Token(sentence_id=sentence.id, position=position,
                                       **dict(zip(TOKEN_FIELDS, values, strict=True)))
                                 for position, values in enumerate(entry["tokens"], start=1))
        for entry in records["tree"]:
            self.add("tree", entry, sentence_id=self.ref("sentence", entry["sentence"]),
                     based_on_id=self.ref("tree", entry["based_on"]))
        for record_type in ("state", "note", "assignment"):
            for entry in records[record_type]:
                self.add(record_type, entry, sentence_id=self.ref("sentence", entry["sentence"]))
        edits = {}
        for entry in records["token_edit"]:  # (backups before issue #32's token edits have none)
            edits[entry["ref"]] = self.add(
                "token_edit", entry, sentence_id=self.ref("sentence", entry["sentence"]),
                params=entry["params"], before={}, last_tree_id=self.ref("tree", entry["last_tree"]) or 0,
                written=[self.ref("tree", ref) for ref in entry["written"]])
        for entry in records["token_edit"]:
            if entry["undone_by"] is not None:
                edits[entry["ref"]].undone_by_id = edits[entry["undone_by"]].id
        self.session.flush()
        for entry in records["round"]:
            self.add("round", entry, treebank_id=treebank.id, **{
                key: None if entry[key] is None else [self.ref("sentence", r) for r in entry[key]]
                for key in SENTENCE_LISTS})
        for entry in records["parser"]:  # (backups before issue #31 have none)
            self.add("parser", entry, treebank_id=treebank.id)
        for entry in records["query"]:  # (backups before issue #32's named queries have none)
            self.add("query", entry, treebank_id=treebank.id)
        for entry in records["event"]:
            self.add("event", entry, treebank_id=treebank.id,
                     sentence_id=self.ref("sentence", entry["sentence"]))
        record(self.session, "restore-backup", user=user, treebank=treebank,
               sentences=len(self.ids["sentence"]), trees=len(self.ids["tree"]), created_users=self.created)
        return treebank
