"""Tree versions: nothing is overwritten, and stale saves are refused."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models import Sentence, TreeVersion, User
from app.services.imports import import_conllu
from app.services.trees import StaleVersionError, add_version, latest_versions, sources_of

TEXT = "1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_\n2\tyou\t_\tPRON\t_\t_\t1\tobj\t_\t_\n\n"


@pytest.fixture
def sentence_id(session: Session, user: User) -> int:
    import_conllu(session, data=TEXT.encode(), filename="a.conllu", treebank_name="tb",
                  split="train", user=user)
    session.commit()
    return session.scalars(select(Sentence.id)).one()


def test_corrections_are_new_versions(session: Session, user: User, sentence_id: int) -> None:
    gold = latest_versions(session, [sentence_id], "gold")[sentence_id]
    first = add_version(session, sentence_id=sentence_id, source="latest", heads=[2, 0],
                        deprels=["vocative", "root"], user=user, expected_version=0, based_on=gold)
    second = add_version(session, sentence_id=sentence_id, source="latest", heads=[0, 1],
                         deprels=["root", "obj"], user=user, expected_version=1, based_on=first)
    session.commit()
    assert (first.version, second.version, second.based_on_id) == (1, 2, first.id)
    assert latest_versions(session, [sentence_id], "latest")[sentence_id].id == second.id
    assert session.get(TreeVersion, gold.id).heads == [0, 1]  # type: ignore[union-attr]
    assert sources_of(session, sentence_id) == ["gold", "latest"]


def test_stale_save_is_refused(session: Session, user: User, sentence_id: int) -> None:
    add_version(session, sentence_id=sentence_id, source="latest", heads=[0, 1],
                deprels=["root", "obj"], user=user, expected_version=0)
    with pytest.raises(StaleVersionError):
        add_version(session, sentence_id=sentence_id, source="latest", heads=[2, 0],
                    deprels=["dep", "root"], user=user, expected_version=0)


def test_database_refuses_two_rows_with_the_same_version(
    session: Session, user: User, sentence_id: int
) -> None:
    session.add(TreeVersion(sentence_id=sentence_id, kind="gold", name="", version=1,
                            heads=[0, 1], deprels=["root", "obj"], user=user))
    with pytest.raises(IntegrityError):
        session.flush()


def test_parser_trees_keep_scores(session: Session, user: User, sentence_id: int) -> None:
    add_version(session, sentence_id=sentence_id, source="graph", heads=[0, 1],
                deprels=["root", "obj"], scores=[0.9, 0.4], user=user)
    session.commit()
    tree = latest_versions(session, [sentence_id], "graph")[sentence_id]
    assert (tree.kind, tree.name, tree.scores, tree.source) == ("parser", "graph", [0.9, 0.4], "graph")
    with pytest.raises(ValueError):
        add_version(session, sentence_id=sentence_id, source="graph", heads=[0], deprels=["root"],
                    scores=[0.1, 0.2], user=user)
