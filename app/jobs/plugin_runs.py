"""A round's plugins run with no database transaction open (issue #31).

A plugin is a program or a server outside the worker's process and may take its whole timeout.
A transaction held meanwhile would hold SQLite's write lock (once anything was written) or a
PostgreSQL connection "idle in transaction", stalling every save of the instance and the job's
own heartbeat. So: read what the plugins need, end the transaction, run them, then store their
trees in one short transaction of their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from flask import current_app

from app.models import Treebank, User
from app.services import DbSession
from app.services.external import Outcome, allowed_hosts, call_plugins, plugin_calls, store_plugin_parses


def run_plugins_outside_transactions(session: DbSession, treebank: Treebank, sentence_ids: Sequence[int], *,
                                     user: User, outcome: Outcome) -> None:
    """Parse ``sentence_ids`` with every plugin of ``treebank`` and store their trees (commits).

    Called where the round has nothing half-written (between its batches): the commit before the
    plugins run only ends the reading transaction. ``outcome``: as
    :func:`app.services.external.call_plugins` keeps it, across the round's batches.
    """
    calls, raws = plugin_calls(session, treebank, sentence_ids, outcome)
    if not calls:
        return
    treebank_id, user_id = treebank.id, user.id
    session.commit()  # no transaction while the plugins run
    parsed = call_plugins(calls, raws, outcome, allowed=allowed_hosts(current_app.config))
    if parsed:
        store_plugin_parses(session, session.get(Treebank, treebank_id) or treebank, sentence_ids, parsed,
                            user=session.get(User, user_id) or user, outcome=outcome)
        session.commit()
