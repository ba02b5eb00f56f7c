"""``flask --app app treebank search``: Grew-match search over a treebank's trees (issue #32).

The name and the ``--json`` shape are a contract scripts depend on::

    flask --app app treebank search NAME 'pattern { ... }' [--source S] [--split S] [--json]
      → {"matches": N, "sentences": N, "hits": [{"sent_id": ..., "nodes": {"N": word_id, ...}}]}

Searching needs ``read`` on the treebank. A malformed pattern or an unknown source exits with
status 1 and the message (a pattern's names its line and column).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from app.cli import _acting_user, _treebank_for
from app.extensions import db
from app.models import SPLITS
from app.services.search import search_treebank
from app.services.sources import SourceError
from parsing.grew import GrewSyntaxError


def tree_source_options(command: Callable[..., None]) -> Callable[..., None]:
    """``--source``, ``--split``, ``--json`` and ``--user``: the options of every command that
    reads one source's trees of a treebank (``search``, ``validate``)."""
    for option in reversed((
        click.option("--source", default="gold", show_default=True,
                     help="gold, reviewed, latest, ensemble, a parser's name, or ensemble@ROUND."),
        click.option("--split", type=click.Choice(SPLITS), default=None, help="Only this split."),
        click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
        click.option("--user", "username", default="admin", show_default=True, help="Act as this user."),
    )):
        command = option(command)
    return command


@click.command("search")
@click.argument("name")
@click.argument("pattern")
@tree_source_options
def search_command(name: str, pattern: str, source: str, split: str | None, as_json: bool,
                   username: str) -> None:
    """Find the Grew-match PATTERN in the SOURCE trees of treebank NAME."""
    user = _acting_user(username)
    treebank = _treebank_for(name, user, "read")
    try:
        result = search_treebank(db.session, treebank, pattern, source=source, split=split)
    except GrewSyntaxError as error:
        raise click.ClickException(f"pattern: {error}") from None
    except SourceError as error:
        raise click.ClickException(str(error)) from None
    finally:
        db.session.rollback()  # reading only: nothing to keep
    if as_json:
        click.echo(json.dumps(result.as_json(), ensure_ascii=False))
        return
    for hit in result.hits:
        click.echo(f"{hit.sent_id}\t" + " ".join(f"{node}={word}" for node, word in hit.nodes.items()))
    click.echo(f"{result.matches} matches in {len(result.sentence_ids)} sentences "
               f"({result.searched} searched, source {source}).")
