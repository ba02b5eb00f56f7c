"""gunicorn's settings for arcvote, read from the working directory (``make run`` and the
commands in docs/operators-guide.md start gunicorn in the repository root).

Each web worker builds the UD validators of the treebanks' languages before it serves
(:func:`app.services.ud_checks.warm_validators`): otherwise the first sentence opened in each
worker waits 1–2 s for them, and every request behind it too.
"""

from typing import Any


def post_worker_init(worker: Any) -> None:
    """Called by gunicorn in each worker once the app is loaded, before it accepts requests."""
    from app.services.ud_checks import warm_validators

    warm_validators(worker.wsgi)
