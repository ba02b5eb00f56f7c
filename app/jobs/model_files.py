"""A round's model directory appears whole or not at all.

A round trains into a staging directory beside its final one (``.staging-<number>-job<id>``),
then :func:`publish` records the sha256 of every file and renames the directory into place in
one step. The round's database row is added only after that, in the transaction that marks the
job done, so a killed job leaves at most a staging directory (or a renamed directory no round
row points to), which :func:`clear_leftovers` removes before the treebank's next round trains.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

STAGING_PREFIX = ".staging-"
CHUNK = 1 << 20


def staging_dir(final: Path, job_id: int) -> Path:
    """Where round ``final.name`` of job ``job_id`` trains before :func:`publish`."""
    return final.parent / f"{STAGING_PREFIX}{final.name}-job{job_id}"


def clear_leftovers(final: Path) -> list[Path]:
    """Remove the staging directories beside ``final`` and ``final`` itself if it exists.

    Safe only while this treebank's round is the one running (the round guard of
    :func:`app.jobs.create_job`) and no round row points to ``final`` (its number is the next one).
    Returns the removed paths.
    """
    if not final.parent.is_dir():
        return []
    removed = [path for path in final.parent.iterdir() if path.name.startswith(STAGING_PREFIX)]
    removed += [final] if final.exists() else []
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def file_checksums(directory: Path) -> dict[str, str]:
    """``{relative path: sha256 hex}`` of every file under ``directory`` (POSIX separators)."""
    sums: dict[str, str] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            while block := handle.read(CHUNK):
                digest.update(block)
        sums[path.relative_to(directory).as_posix()] = digest.hexdigest()
    return sums


def publish(staging: Path, final: Path) -> dict[str, str]:
    """Checksum ``staging``'s files, then rename it to ``final`` (which must not exist).

    :return: the checksums (:func:`file_checksums`), to record on the round.
    """
    sums = file_checksums(staging)
    os.rename(staging, final)  # atomic on one file system; fails if final exists
    return sums


def changed_files(directory: Path, expected: dict[str, str]) -> list[str]:
    """Files of ``expected`` that are missing from ``directory`` or whose sha256 differs."""
    found = file_checksums(directory) if directory.is_dir() else {}
    return sorted(name for name, digest in expected.items() if found.get(name) != digest)


class ModelFilesChanged(ValueError):
    """A registered round's model files differ from the checksums recorded when it finished."""


def check_unchanged(directory: Path, expected: dict[str, str] | None) -> None:
    """Refuse a model directory whose files differ from ``expected`` (a round's checksums;
    ``None``: rounds registered before checksums were kept, not checked).

    Raises:
        ModelFilesChanged: a file is missing or its sha256 differs, naming the files.
    """
    if not expected:
        return
    changed = changed_files(directory, expected)
    if changed:
        raise ModelFilesChanged(
            f"the model files of {directory} changed since the round was registered "
            f"({', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}): they are not loaded; "
            "train a new round")
