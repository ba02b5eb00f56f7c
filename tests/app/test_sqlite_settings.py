"""The embedded SQLite default survives simultaneous writers: write-ahead log and a busy timeout."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from app import SQLITE_BUSY_TIMEOUT_MS


def test_sqlite_connections_use_wal_and_wait_for_the_writer(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'x.sqlite'}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() == SQLITE_BUSY_TIMEOUT_MS
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
    engine.dispose()


def test_a_write_waits_for_a_long_writer_instead_of_failing(tmp_path: Path) -> None:
    """Another writer holds the lock for 6 s (longer than sqlite3's default 5 s): the app's write
    waits and succeeds, and reads never wait (WAL)."""
    path = tmp_path / "x.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
    locked = threading.Event()

    def long_writer() -> None:
        other = sqlite3.connect(path, timeout=0)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO t VALUES (1)")
        locked.set()
        time.sleep(6)
        other.commit()
        other.close()

    thread = threading.Thread(target=long_writer)
    thread.start()
    assert locked.wait(5)
    started = time.monotonic()
    with engine.connect() as reader:  # reads go on while the writer holds the lock
        assert reader.execute(text("SELECT count(*) FROM t")).scalar() == 0
    assert time.monotonic() - started < 1
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t VALUES (2)"))
    assert time.monotonic() - started == pytest.approx(6, abs=2)
    thread.join()
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM t")).scalar() == 2
    engine.dispose()
