"""Staging files of background imports and exports, under ``<instance>/staging/``.

* ``imports/job-<id>.<ext>``: an uploaded file too large to import inside the request
  (``IMPORT_INLINE_MAX_BYTES``); the ``import`` job reads it. It is removed when the job is
  done; a failed or cancelled job keeps it for a retry (the retry reads the same file) until
  ``STAGING_RETENTION_SECONDS`` have passed.
* ``exports/job-<id>.conllu``: the file an ``export`` job wrote, downloaded from the job page;
  removed when the treebank's next export job finishes, or after ``STAGING_RETENTION_SECONDS``.

Old files are swept whenever a new one is staged (:func:`sweep`), so nothing piles up even
when nobody retries or downloads. Paths are built from job ids only, never from user input.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from flask import Flask

IMPORT_INLINE_MAX_BYTES = 2 * 2**20
"""Default: uploads up to 2 MB are imported inside the request; larger ones become a job."""
EXPORT_INLINE_MAX_SENTENCES = 20_000
"""Default: exports of up to this many sentences are written inside the request."""
STAGING_RETENTION_SECONDS = 24 * 3600
"""Default: how long a staged upload (for retries) or an export file (for download) is kept."""

KINDS = ("imports", "exports")


def staging_dir(app: Flask, kind: str) -> Path:
    """``<instance>/staging/<kind>`` (created), ``kind`` one of :data:`KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"unknown staging kind {kind!r}")
    folder = Path(app.config.get("STAGING_DIR") or Path(app.instance_path) / "staging") / kind
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def staged_path(app: Flask, kind: str, job_id: int, suffix: str) -> Path:
    """The staging file of job ``job_id`` (``suffix`` like ``.conllu``; only letters kept)."""
    clean = "".join(char for char in suffix.lstrip(".") if char.isalnum())[:12] or "dat"
    return staging_dir(app, kind) / f"job-{int(job_id)}.{clean}"


def retention_seconds(app: Flask) -> float:
    """How long staged files are kept (``STAGING_RETENTION_SECONDS``)."""
    return float(app.config.get("STAGING_RETENTION_SECONDS", STAGING_RETENTION_SECONDS))


def sweep(app: Flask, kind: str, *, now: float | None = None) -> list[Path]:
    """Remove the ``kind`` staging files older than the retention time; returns them."""
    limit = (now if now is not None else time.time()) - retention_seconds(app)
    removed = []
    for path in staging_dir(app, kind).glob("job-*"):
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mtime < limit:
                path.unlink()
                removed.append(path)
    return removed


def remove(path: Path | str | None) -> None:
    """Delete a staging file if it is there."""
    if path:
        Path(path).unlink(missing_ok=True)
