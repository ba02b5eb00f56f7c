"""Structured job logs: one JSON object per line on stderr (logger ``arcvote.jobs``).

Every line has ``time`` (ISO 8601, UTC), ``level``, ``event`` (``job.queued``, ``job.started``,
``job.progress``, ``job.done``, ``job.failed``, ``job.cancelled``, ``job.reaped``,
``worker.started``, ...) and the event's fields (``job``, ``kind``, ``treebank``, ``worker``,
``message``, ``progress``, ``error``...), so a log shipper can index them without parsing text.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

LOGGER = logging.getLogger("arcvote.jobs")


class JsonLines(logging.Formatter):
    """Formats a record as one JSON object: time, level, event and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "event": record.getMessage(),
        }
        line.update(getattr(record, "fields", {}))
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_job_logging() -> None:
    """Send ``arcvote.jobs`` to stderr as JSON lines (once per process; not through the root logger)."""
    if any(isinstance(handler.formatter, JsonLines) for handler in LOGGER.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False


def log_event(event: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """Log ``event`` with ``fields`` (JSON-ready values; others are written with ``str``)."""
    LOGGER.log(level, event, extra={"fields": fields})
