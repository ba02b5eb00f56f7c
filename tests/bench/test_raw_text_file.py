"""``bench/raw_text_file.py``: raw text as the cluster and meta-feature benchmarks read it."""

from __future__ import annotations

from bench.raw_text_file import tokenized_lines


def test_each_line_is_tokenized_and_blank_lines_are_dropped() -> None:
    assert tokenized_lines(["Ndekete, mu gën a tuuti.", "   ", "Ñi raw?"]) == [
        "Ndekete , mu gën a tuuti .", "Ñi raw ?"]
