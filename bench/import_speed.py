"""How fast CoNLL-U import (and export) runs, on SQLite and PostgreSQL.

Imports the largest file under ``../shared/ud`` and a 20,000-sentence file made by
concatenating UD files (sent_ids renamed to stay unique; written to a temporary folder),
each into a freshly migrated database, timing ``import_conllu`` + commit and ``export_conllu``.

    .venv/bin/python bench/import_speed.py [--postgres URL] [--no-postgres]

PostgreSQL defaults to ``postgresql://postgres@127.0.0.1:5432/arcvote_bench`` (created when
missing); it is skipped with a message when no server answers.
"""

from __future__ import annotations

import argparse
import secrets
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from flask_migrate import upgrade
from sqlalchemy import MetaData, create_engine, text
from sqlalchemy.engine import make_url

from app import create_app, normalise_database_url
from app.extensions import db
from app.services.exports import export_conllu
from app.services.imports import import_conllu
from app.services.users import create_user

UD = Path(__file__).resolve().parents[1] / ".." / "shared" / "ud"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/arcvote_bench"


def twenty_thousand(folder: Path, target: int = 20_000) -> Path:
    """Write a file of ``target`` sentences from the UD files, renaming sent_ids."""
    out = folder / "ud-20k.conllu"
    with out.open("w", encoding="utf-8") as handle:
        for count, block in enumerate(_blocks(), start=1):
            handle.write(block)
            if count == target:
                return out
    raise AssertionError("unreachable")


def _blocks() -> Iterator[str]:
    files = sorted(UD.glob("*/*.conllu"))
    for round_number in range(1, 100):
        for path in files:
            for block in path.read_text(encoding="utf-8").split("\n\n"):
                if block.strip():
                    yield block.replace("# sent_id = ", f"# sent_id = r{round_number}-", 1) + "\n\n"


def fresh_app(url: str):  # type: ignore[no-untyped-def]
    """An app on an emptied, migrated database ``url``."""
    url = normalise_database_url(url)
    if url.startswith("postgresql"):
        _create_database(url)
    engine = create_engine(url)
    metadata = MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "SECRET_KEY": secrets.token_hex(32)})
    with app.app_context():
        upgrade()
    return app


def _create_database(url: str) -> None:
    parsed = make_url(url)
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        exists = connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"),
                                   {"name": parsed.database})
        if not exists:
            connection.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    admin.dispose()


def measure(url: str, path: Path) -> tuple[int, int, float, float]:
    """(sentences, words, import seconds, export seconds) for ``path`` into ``url``."""
    app = fresh_app(url)
    data = path.read_bytes()
    with app.app_context():
        user = create_user(db.session, "bench", "bench-password")
        db.session.commit()
        start = time.perf_counter()
        result = import_conllu(db.session, data=data, filename=path.name, treebank_name="bench",
                               split="train", user=user)
        db.session.commit()
        imported = time.perf_counter() - start
        start = time.perf_counter()
        exported = export_conllu(db.session, result.treebank)
        export_seconds = time.perf_counter() - start
        assert exported.encode("utf-8") == data, "round trip changed the file"
        counts = result.sentences, result.words
        db.session.remove()
        db.engine.dispose()
    return counts[0], counts[1], imported, export_seconds


def main() -> None:
    """Print a markdown table of import and export speeds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_PG)
    parser.add_argument("--no-postgres", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        largest = max(UD.glob("*/*.conllu"), key=lambda path: path.stat().st_size)
        files = [largest, twenty_thousand(Path(folder))]
        databases = [("SQLite", f"sqlite:///{Path(folder) / 'bench.sqlite'}")]
        if not options.no_postgres:
            databases.append(("PostgreSQL", options.postgres))
        print("| database | file | sentences | words | import s | sentences/s | words/s | export s |")
        print("|---|---|---|---|---|---|---|---|")
        for label, url in databases:
            for path in files:
                try:
                    sentences, words, seconds, export_seconds = measure(url, path)
                except Exception as error:  # noqa: BLE001 - report and go on (no server)
                    print(f"| {label} | {path.name} | skipped: {type(error).__name__}: "
                          f"{str(error).splitlines()[0]} |")
                    break
                print(f"| {label} | {path.name} | {sentences:,} | {words:,} | {seconds:.2f} | "
                      f"{sentences / seconds:,.0f} | {words / seconds:,.0f} | {export_seconds:.2f} |")


if __name__ == "__main__":
    main()
