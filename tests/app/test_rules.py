"""Rules over a treebank (issue #32): preview = applied, one audit event, one-step revert, trees only."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Sentence, Treebank, User
from app.services.rules import RuleError, apply_rule, preview_rule, revert_rule
from app.services.search import search_treebank
from app.services.trees import add_version, latest_versions
from app.team_models import AuditEvent
from parsing.grew import GrewSyntaxError
from tests.app.test_search import import_afrikaans

RULE = ('rule { pattern { e: H -[amod]-> A; A [upos=ADJ] } '
        'commands { e.label = "amod:test"; A.Checked = Yes; A.lemma = "x" } }')


@pytest.fixture
def afrikaans(session: Session, user: User) -> Treebank:
    return import_afrikaans(session, user)


Tree = tuple[list[int], list[str], list[str] | None, list[str] | None]


def current(session: Session, sentence_id: int) -> Tree:
    tree = latest_versions(session, [sentence_id], "latest")[sentence_id]
    return list(tree.heads), list(tree.deprels), tree.lemmas, tree.feats


def test_preview_lists_every_change_and_apply_stores_exactly_it(
        session: Session, afrikaans: Treebank, user: User) -> None:
    amods = search_treebank(session, afrikaans, "pattern { H -[amod]-> A; A [upos=ADJ] }", source="latest")
    preview = preview_rule(session, afrikaans, RULE)
    assert preview.matches == amods.matches > 0
    assert [c.sentence_id for c in preview.changes] == amods.sentence_ids
    first = preview.changes[0]
    assert first.text == session.get(Sentence, first.sentence_id).text and first.text  # type: ignore[union-attr]
    word = first.words[0]
    assert word.after["deprel"] == "amod:test" and word.before["deprel"] == "amod"
    assert word.after["lemma"] == "x" and "Checked=Yes" in word.after["feats"]
    # a preview writes nothing
    assert session.scalar(select(AuditEvent.id).where(AuditEvent.action == "rule-apply")) is None

    event = apply_rule(session, afrikaans, RULE, user=user, expected=len(preview.changes))
    session.commit()
    assert event.details["sentences"] == len(preview.changes) and event.details["matches"] == preview.matches
    for change in preview.changes:
        heads, deprels, lemmas, feats = current(session, change.sentence_id)
        assert heads == change.result.heads[1:] and deprels == change.result.deprels[1:]
        assert lemmas is not None and feats is not None
        for word in change.words:
            assert deprels[word.word - 1] == "amod:test" and lemmas[word.word - 1] == "x"
            assert "Checked=Yes" in feats[word.word - 1]
    after = search_treebank(session, afrikaans, "pattern { H -[amod:test]-> A; A [Checked=Yes, lemma=x] }",
                            source="latest")
    assert after.matches == preview.matches
    left = search_treebank(session, afrikaans, "pattern { H -[amod]-> A; A [upos=ADJ] }", source="latest")
    assert left.matches == 0
    assert preview_rule(session, afrikaans, RULE).changes == []  # applying again changes nothing


def test_revert_restores_the_trees_before_in_one_step(session: Session, afrikaans: Treebank,
                                                      user: User) -> None:
    ids = [s for s in session.scalars(select(Sentence.id).order_by(Sentence.id))]
    before = {sid: current(session, sid) for sid in ids}
    event = apply_rule(session, afrikaans, RULE, user=user)
    session.commit()
    changed = [sid for sid, _, _ in event.details["versions"]]
    # someone edits one of the changed sentences afterwards: the revert leaves that one alone
    edited = changed[0]
    edited_heads = current(session, edited)[0]
    add_version(session, sentence_id=edited, source="annotation", heads=edited_heads,
                deprels=["dep"] * len(edited_heads), user=user)
    session.commit()
    undo = revert_rule(session, afrikaans, event.id, user=user)
    session.commit()
    assert undo.details["kept"] == [edited] and len(undo.details["reverted"]) == len(changed) - 1
    for sid in changed[1:]:
        heads, deprels, lemmas, feats = current(session, sid)
        assert (heads, deprels) == before[sid][:2]
        assert lemmas is None and feats is None  # the imported columns again
    assert current(session, edited)[1] == ["dep"] * len(edited_heads)
    assert search_treebank(session, afrikaans, "pattern { N [Checked=Yes] }", source="latest").matches == 0
    assert session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)).all()[-2:] == [
        "rule-apply", "rule-revert"]
    with pytest.raises(RuleError, match="already reverted"):
        revert_rule(session, afrikaans, event.id, user=user)


def test_rules_that_would_break_trees_change_nothing(session: Session, afrikaans: Treebank,
                                                     user: User) -> None:
    breaking = "pattern { e: H -[amod]-> A } commands { del_edge e }"
    preview = preview_rule(session, afrikaans, breaking)
    assert preview.changes == [] and preview.refused
    assert {reason for _, _, reason in preview.refused} == {"the result would not be a tree"}
    with pytest.raises(RuleError, match="changes nothing"):
        apply_rule(session, afrikaans, breaking, user=user)
    with pytest.raises(RuleError, match="preview it again"):
        apply_rule(session, afrikaans, RULE, user=user, expected=1)
    with pytest.raises(GrewSyntaxError, match="line 1, column"):
        preview_rule(session, afrikaans, "pattern { N [] } commands { del_edge e }")
    with pytest.raises(RuleError, match="no such rule application"):
        revert_rule(session, afrikaans, 12345, user=user)
