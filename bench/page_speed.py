"""Server time of the sentence page (test client, no network) for a ~40-word sentence.

Imports ``en_ewt-ud-dev.conllu`` from ``../shared/ud`` into a fresh database, signs in, and
requests the page of the sentence whose length is closest to 40 words N times; prints the
median and 90th percentile. Also times the sentence list and a search.

    .venv/bin/python bench/page_speed.py [-n 50] [--database URL]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_speed import UD, fresh_app  # noqa: E402

from app.extensions import db  # noqa: E402
from app.models import Sentence  # noqa: E402
from app.services.imports import import_conllu  # noqa: E402
from app.services.users import create_user  # noqa: E402


def timed(client, url: str, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Milliseconds for ``n`` GETs of ``url`` (after one warm-up request)."""
    assert client.get(url).status_code == 200
    times = []
    for _ in range(n):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    return times


def signed_in_client(app: Flask) -> FlaskClient:
    """A test client signed in as the bench user (CSRF off: the bench posts the form plainly)."""
    app.config["WTF_CSRF_ENABLED"] = False
    client = app.test_client()
    client.post("/auth/login", data={"username": "bench", "password": "bench-password"})
    return client


def print_timings(client: FlaskClient, pages: dict[str, str], n: int, database_uri: str) -> None:
    """A Markdown table of median and p90 milliseconds for each page (``label: url``)."""
    print(f"database: {database_uri.split(':')[0]}, n={n}")
    print("| request | median ms | p90 ms |")
    print("|---|---|---|")
    for label, url in pages.items():
        times = sorted(timed(client, url, n))
        print(f"| {label} | {statistics.median(times):.1f} | {times[int(0.9 * (len(times) - 1))]:.1f} |")


def main() -> None:
    """Print median and p90 server times."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--database", default=None, help="default: a temporary SQLite file")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        app = fresh_app(options.database or f"sqlite:///{Path(folder) / 'page.sqlite'}")
        path = UD / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
        with app.app_context():
            user = create_user(db.session, "bench", "bench-password")
            result = import_conllu(db.session, data=path.read_bytes(), filename=path.name,
                                   treebank_name="EWT", split="dev", user=user)
            db.session.commit()
            sentence = db.session.scalars(
                select(Sentence).order_by(func.abs(Sentence.n_words - 40), Sentence.id).limit(1)
            ).one()
            sentence_id, words, treebank_id = sentence.id, sentence.n_words, result.treebank.id
        client = signed_in_client(app)
        pages = {
            f"sentence page ({words} words)": f"/sentences/{sentence_id}",
            "sentence list (page 1 of 2,001 sentences)": f"/treebanks/{treebank_id}/sentences",
            "search form=the": f"/treebanks/{treebank_id}/sentences?q=the&field=form",
        }
        print_timings(client, pages, options.n, app.config["SQLALCHEMY_DATABASE_URI"])


if __name__ == "__main__":
    main()
