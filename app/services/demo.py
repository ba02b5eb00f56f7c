"""The demo treebank: a few hundred Turkish sentences from the ``turkish-treebanks`` package.

That Apache-2.0 package installs ``data/web.conllu`` into site-packages. The demo takes the
first sentences of it as train / dev / unannotated pool (the pool's HEAD, DEPREL and DEPS
are blanked to ``_``, as raw text to be parsed would be) and, when asked, the sentences after
them as a test split with its gold trees: ``demo preannotate`` parses it too, so the scoreboard
scores every parser, the ensemble and the oracle against gold trees nobody trained or tuned on.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from sqlalchemy import select

from app.models import Treebank, User
from app.services import DbSession
from app.services.imports import import_conllu
from parsing.conllu_io import ConlluSentence, decode_utf8, format_conllu, parse_conllu

DEMO_NAME = "Turkish demo"
DEMO_SHARES = (("train", 0.6), ("dev", 0.2), ("pool", 0.2))


def demo_file() -> Path:
    """Where the ``turkish-treebanks`` package installed ``web.conllu``.

    :raise FileNotFoundError: the package is not installed (``pip install -e '.[demo]'``).
    """
    try:
        files = importlib.metadata.distribution("turkish-treebanks").files or []
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError("install the demo data: pip install -e '.[demo]'") from None
    for file in files:
        if str(file).endswith("web.conllu"):
            return Path(str(file.locate()))
    raise FileNotFoundError("turkish-treebanks has no data/web.conllu")


def setup_demo(
    session: DbSession, *, user: User, sentences: int = 300, test_sentences: int = 0
) -> dict[str, int] | None:
    """Import the demo treebank unless it exists (``sentences`` shared among train, dev and pool,
    then ``test_sentences`` more as a test split); return sentences per split, or None."""
    if session.scalar(select(Treebank.id).where(Treebank.name == DEMO_NAME)) is not None:
        return None
    every = _first_sentences(demo_file(), sentences + test_sentences)
    chosen = every[:sentences]
    counts: dict[str, int] = {}
    start = 0
    for split, share in DEMO_SHARES:
        end = len(chosen) if split == DEMO_SHARES[-1][0] else start + round(share * len(chosen))
        part = chosen[start:end]
        if split == "pool":
            part = [_unannotated(sentence) for sentence in part]
        counts[split] = _import(session, part, split, user)
        start = end
    if every[sentences:]:
        counts["test"] = _import(session, every[sentences:], "test", user)
    return counts


def _import(session: DbSession, part: list[ConlluSentence], split: str, user: User) -> int:
    """Import ``part`` into the demo's ``split``; how many sentences."""
    import_conllu(
        session, data=format_conllu(part).encode("utf-8"), filename=f"web-{split}.conllu",
        treebank_name=DEMO_NAME, split=split, user=user, language="tr",
    )
    return len(part)


def _first_sentences(path: Path, count: int) -> list[ConlluSentence]:
    """The first ``count`` sentences of ``path``."""
    return parse_conllu(decode_utf8(path.read_bytes(), source=path.name), source=path.name)[:count]


def _unannotated(sentence: ConlluSentence) -> ConlluSentence:
    """The sentence with HEAD, DEPREL and DEPS set to ``_``."""
    rows = [[*row[:6], "_", "_", "_", row[9]] for row in sentence.rows]
    return ConlluSentence(list(sentence.comments), rows)
