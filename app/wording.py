"""Words for counts in messages and pages: ``1 sentence``, ``2 sentences``, never
``1 sentences`` (also the ``counted`` template filter: ``{{ n|counted("sentence") }}``)."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1; thousands grouped (``1,234 words``).

    >>> counted(1, "sentence"), counted(0, "sentence"), counted(12345, "word"), counted(2, "tree", "trees")
    ('1 sentence', '0 sentences', '12,345 words', '2 trees')
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
