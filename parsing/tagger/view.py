"""What a parser sees of a sentence when its tags are predicted.

Raw text has forms only. With predicted tags the parsers must meet, in training and in use,
only what the tagger gives them: the columns the tagger predicts (UPOS, and XPOS or FEATS when
it was trained to predict them) and nothing else, so a lemma, XPOS or FEATS column that
happens to be gold in a training or test file never reaches a parser (it did before: gold
morphology in the test file inflated every predicted-tags score, and pre-annotating raw text,
where those columns are ``_``, met parsers trained with them).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from parsing.types import ROOT, Sentence

__all__ = ["BLANK", "parser_view"]

BLANK = "_"
"""CoNLL-U's missing value."""

def parser_view(sentences: Sequence[Sentence], predicted: Collection[str]) -> list[Sentence]:
    """Copies of ``sentences`` whose lemma, XPOS and FEATS columns are ``_`` unless named in
    ``predicted`` (``"xpos"``, ``"feats"``); forms, UPOS and the tree are kept.

    Examples:
        >>> s = Sentence.from_words(["a"], heads=[0], upos=["X"])
        >>> s = replace(s, lemmas=[ROOT, "A"], feats=[ROOT, "Case=Nom"])
        >>> seen = parser_view([s], ["feats"])[0]
        >>> seen.lemmas, seen.feats, seen.upos
        (['<ROOT>', '_'], ['<ROOT>', 'Case=Nom'], ['<ROOT>', 'X'])
    """
    def column(sentence: Sentence, name: str) -> list[str]:
        kept: list[str] = getattr(sentence, name)
        return list(kept) if name in predicted else [ROOT] + [BLANK] * len(sentence)

    return [replace(sentence, lemmas=column(sentence, "lemmas"), xpos=column(sentence, "xpos"),
                    feats=column(sentence, "feats")) for sentence in sentences]
