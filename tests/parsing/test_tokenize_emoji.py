"""An emoji of several code points is one word (issue #31, row 12: a family emoji was 7 words)."""

from __future__ import annotations

import pytest

from parsing.tokenize import tokenize

FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"  # 7 code points, 3 joiners
THUMB = "\U0001F44D\U0001F3FD"  # a thumb with a skin tone
FLAG = "\U0001F1EB\U0001F1F7"  # two regional indicators: one flag
HEART = "\u2764\ufe0f"  # a symbol with its emoji variation selector


@pytest.mark.parametrize("emoji", [FAMILY, THUMB, FLAG, HEART])
def test_one_emoji_is_one_word(emoji: str) -> None:
    assert [form for form, _ in tokenize(f"We {emoji}, really{emoji}")] == ["We", emoji, ",", "really", emoji]


def test_lone_symbols_stay_as_they_were() -> None:
    assert [form for form, _ in tokenize("a \u2665\u2665 b \U0001F600\U0001F600")] == [
        "a", "\u2665\u2665", "b", "\U0001F600\U0001F600"]
