"""Named queries of a treebank: list, save (or replace by name), delete. Saving checks the
pattern parses; callers check ``curate`` (save, delete) and ``read`` (list, run) first. Saving and
deleting are audit events (``query-save``, ``query-delete``, with the name and pattern); the
queries are part of the treebank's backup (:mod:`app.services.backup`)."""

from __future__ import annotations

from sqlalchemy import delete, select

from app.models import Treebank, User
from app.search_models import QUERY_NAME_LENGTH, QUERY_PATTERN_LENGTH, SavedQuery
from app.services import DbSession
from app.services.audit import record
from parsing.grew import parse_request


class QueryError(ValueError):
    """A query that cannot be saved: the message says which field and why."""


def saved_queries(session: DbSession, treebank: Treebank) -> list[SavedQuery]:
    """The treebank's named queries, by name."""
    return list(session.scalars(select(SavedQuery).where(SavedQuery.treebank_id == treebank.id)
                                .order_by(SavedQuery.name)))


def save_query(session: DbSession, treebank: Treebank, *, name: str, pattern: str, user: User) -> SavedQuery:
    """Save ``pattern`` as ``name`` (replacing the query of that name); flushes.

    :raise QueryError: an empty or too long name or pattern.
    :raise GrewSyntaxError: a pattern that does not parse (line and column in the message).
    """
    name, pattern = name.strip(), pattern.strip()
    if not name or len(name) > QUERY_NAME_LENGTH:
        raise QueryError(f"name: give a name of 1 to {QUERY_NAME_LENGTH} characters")
    if not pattern or len(pattern) > QUERY_PATTERN_LENGTH:
        raise QueryError(f"pattern: give a pattern of 1 to {QUERY_PATTERN_LENGTH} characters")
    parse_request(pattern)
    query = session.scalar(select(SavedQuery).where(SavedQuery.treebank_id == treebank.id,
                                                    SavedQuery.name == name))
    previous = None if query is None else query.pattern
    if query is None:
        query = SavedQuery(treebank_id=treebank.id, name=name, pattern=pattern, created_by_id=user.id)
        session.add(query)
    else:
        query.pattern, query.created_by_id = pattern, user.id
    session.flush()
    record(session, "query-save", user=user, treebank=treebank, name=name, pattern=pattern,
           replaced=previous)
    return query


def delete_query(session: DbSession, treebank: Treebank, query_id: int, *, user: User) -> bool:
    """Delete the treebank's query ``query_id`` (an audit event by ``user``); False when it has
    no such query."""
    query = session.scalar(select(SavedQuery).where(SavedQuery.id == query_id,
                                                    SavedQuery.treebank_id == treebank.id))
    if query is None:
        return False
    name, pattern = query.name, query.pattern
    session.execute(delete(SavedQuery).where(SavedQuery.id == query.id))
    session.expunge(query)
    session.flush()
    record(session, "query-delete", user=user, treebank=treebank, name=name, pattern=pattern)
    return True
