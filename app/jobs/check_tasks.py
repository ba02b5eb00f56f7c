"""The ``validate`` job: the UD validator over a whole treebank (:mod:`app.services.treebank_checks`).

Params: ``source`` (default ``gold``) and ``split`` (None: all). The job's result is the
report the validation page draws (:mod:`app.views.checks`). It only reads: nothing to undo.
"""

from __future__ import annotations

from typing import Any

from app.job_models import Job
from app.jobs import Progress, task
from app.models import Treebank, User
from app.services import DbSession
from app.services.permissions import PermissionDenied, require
from app.services.sources import SourceError
from app.services.treebank_checks import validate_treebank
from app.wording import counted

KIND = "validate"


@task(KIND)
def validate(session: DbSession, job: Job, progress: Progress) -> dict[str, Any]:
    """Validate the job's treebank (see the module docstring)."""
    treebank = session.get(Treebank, job.treebank_id)
    user = session.get(User, job.user_id)
    if treebank is None or user is None:
        raise ValueError("the treebank or user of this validation no longer exists")
    try:
        require(user, "read", treebank)
    except PermissionDenied as denied:
        raise ValueError(str(denied)) from None
    params = job.params or {}
    progress(f"validating the {params.get('source', 'gold')} trees of {treebank.name}", 0.01)

    def report(done: int, total: int) -> None:
        progress(f"checked {done:,} of {counted(total, 'sentence')}", 0.01 + 0.98 * done / max(total, 1))

    try:
        return validate_treebank(session, treebank, source=str(params.get("source") or "gold"),
                                 split=params.get("split") or None, progress=report)
    except SourceError as error:
        raise ValueError(str(error)) from None
