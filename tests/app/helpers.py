"""Helpers shared by the app tests (fixtures live in conftest.py)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.models import Treebank, User
from app.services.demo import demo_file
from app.services.imports import import_conllu
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu


def import_without_dev(session: Session, user: User, *, train: int = 40, pool: int = 10) -> Treebank:
    """The demo file's first sentences as a treebank with a train split and a pool, no dev."""
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)
    import_conllu(session, data=format_conllu(sentences[:train]).encode(), filename="train.conllu",
                  treebank_name="no dev", split="train", user=user)
    result = import_conllu(session, data=format_conllu(sentences[train:train + pool]).encode(),
                           filename="pool.conllu", treebank_name="no dev", split="pool", user=user)
    return result.treebank
