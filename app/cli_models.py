"""``flask --app app models prune``: delete old rounds' model directories by the retention rule."""

from __future__ import annotations

import click
from flask import current_app
from flask.cli import AppGroup

from app.extensions import db
from app.services.retention import prune_models, retention

models_cli = AppGroup("models", help="Manage trained rounds' model files.")


@models_cli.command("prune")
@click.option("--keep", type=click.IntRange(0), default=None,
              help="Newest rounds per treebank whose models stay (default: MODEL_RETENTION, else 3; "
                   "0 keeps all). The newest round of each tag mode always stays.")
def prune_command(keep: int | None) -> None:
    """Delete the model directories of old rounds (their rows and scores stay)."""
    try:
        chosen = retention(current_app.config.get("MODEL_RETENTION") if keep is None else keep)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    pruned = prune_models(db.session, current_app.config["MODELS_DIR"], chosen)
    for item in pruned:
        click.echo(f"pruned treebank {item.treebank_id} round {item.number}: {item.model_dir}")
    click.echo(f"{len(pruned)} model director{'y' if len(pruned) == 1 else 'ies'} pruned "
               f"(keeping the {chosen} newest rounds per treebank)" if chosen else
               "MODEL_RETENTION is 0: every round's models are kept")
