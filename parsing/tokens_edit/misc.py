"""MISC and comment helpers of re-tokenizing (:mod:`parsing.tokens_edit`): reading and rewriting
a token's ``SpaceAfter`` in its MISC column, and replacing a ``# key = value`` comment
(:func:`with_comment`).
"""

from __future__ import annotations

from collections.abc import Sequence

SPACE_AFTER_NO = "SpaceAfter=No"


def _misc_items(misc: str) -> list[str]:
    return [item for item in misc.split("|") if item not in ("", "_")]


def _misc(items: Sequence[str]) -> str:
    return "|".join(items) or "_"


def _without_space_after(misc: str) -> str:
    return _misc([item for item in _misc_items(misc) if not item.startswith("SpaceAfter=")])


def _space_after_of(misc: str) -> list[str]:
    return [item for item in _misc_items(misc) if item.startswith("SpaceAfter=")]


def _with_space_after(misc: str, items: Sequence[str]) -> str:
    return _misc([*_misc_items(_without_space_after(misc)), *items])


def with_comment(comments: Sequence[str], key: str, value: str) -> list[str]:
    """``comments`` with ``# key = value`` replacing the ``key`` comment (added after
    ``# sent_id`` or at the end when there is none).

    Examples:
        >>> with_comment(["# sent_id = a", "# text = x y"], "text", "xy")
        ['# sent_id = a', '# text = xy']
    """
    line = f"# {key} = {value}"
    out = list(comments)
    for index, comment in enumerate(out):
        name, sep, _ = comment[1:].partition("=")
        if comment.startswith("#") and sep and name.strip() == key:
            out[index] = line
            return out
    after = next((i + 1 for i, c in enumerate(out) if c[1:].partition("=")[0].strip() == "sent_id"), len(out))
    out.insert(after, line)
    return out
