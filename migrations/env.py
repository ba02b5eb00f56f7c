"""Alembic environment for arcvote (run through Flask-Migrate: ``flask --app app db ...``).

The database URL and the metadata come from the Flask app (``app.extensions.db``);
``render_as_batch`` is on so that ALTERs also work on SQLite.
"""

import logging
from logging.config import fileConfig

from alembic import context
from flask import current_app

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)
logger = logging.getLogger("alembic.env")

target_db = current_app.extensions["migrate"].db


def _engine_url() -> str:
    return target_db.engine.url.render_as_string(hide_password=False).replace("%", "%%")


config.set_main_option("sqlalchemy.url", _engine_url())


def run_migrations_offline() -> None:
    """Emit SQL for the migrations without a database connection (``--sql``)."""
    context.configure(url=config.get_main_option("sqlalchemy.url"),
                      target_metadata=target_db.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on the app's engine."""

    def process_revision_directives(context, revision, directives):  # type: ignore[no-untyped-def]
        if getattr(config.cmd_opts, "autogenerate", False) and directives[0].upgrade_ops.is_empty():
            directives[:] = []
            logger.info("No changes in schema detected.")

    conf_args = dict(current_app.extensions["migrate"].configure_args)
    conf_args.setdefault("process_revision_directives", process_revision_directives)
    with target_db.engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_db.metadata, **conf_args)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
