"""Token and sentence split and merge (issue #32): re-tokenize a sentence from the editor, with
its trees carried over, its history kept, and one-step undo.

The operations (:data:`~app.models.TOKEN_OPERATIONS`), each done by :mod:`parsing.tokens_edit`
on the sentence's token lines:

* ``split-word`` (``word``, ``at``: characters of the form in the first part), ``merge-words``
  (``word`` and the next), ``add-multiword`` (``first``, ``last``, ``form``: the surface form),
  ``remove-multiword`` (``first``), ``split-sentence`` (``after``: the last word of the first
  part; the second becomes a new sentence right after it, with a ``sent_id`` of its own) and
  ``merge-sentence`` (the sentence and the next one of the same document).

What each one keeps consistent:

* **Tokens** are rewritten (the sentence's words *are* its tokens): IDs renumbered, the MISC
  ``SpaceAfter`` moved, ``# text`` written from the tokens (the UD validator's rule), the token
  lines' own HEAD/DEPREL (the imported tree) and DEPS carried like any tree.
* **Trees**: the newest version of every source of the sentence (gold, each parser, the ensemble,
  the main annotation line and every annotator's branch) gets a new version carried over to the
  new words (:func:`parsing.tokens_edit.carry_tree`, always a tree). An arc that could not be kept
  is attached to the root (``dep``; ``parataxis`` for the second root of merged sentences), its
  provenance becomes ``parser`` (to be checked), and a note on the sentence lists those words.
  Older versions stay in the history, marked superseded (:func:`superseded_up_to`): reverting to
  one is refused. Adding or removing a multiword token changes no word, so no tree.
* **Review marks**: a word stays reviewed when every word it is made of was and its arc was kept;
  a reviewed sentence that loses one goes back in progress (a status event).
* **History**: the edit is a :class:`~app.models.TokenEdit` (what it replaced, for
  :func:`undo_edit`) and a ``token-edit`` audit event; undoing the newest edit of a sentence puts
  its tokens back and writes the trees it had before as new versions (``token-undo``).

Who may: whoever may write the sentence's tree (:func:`refusal`: ``annotate`` and the main line's
rule of :func:`app.services.permissions.line_refusal`); a blind annotator may not (an edit changes
every annotator's tree), and merging needs the right on both sentences.

Errors: :class:`~parsing.tokens_edit.TokenEditError` (a wrong argument, ``field`` names it: 422),
:class:`EditConflict` (the edit cannot be done now, e.g. undoing an edit that is not the newest:
409).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import delete, func, select, update

from app.models import Document, Sentence, SentenceNote, SentenceState, Token, TokenEdit, TreeVersion, User
from app.services import DbSession
from app.services.assignments import editing_line
from app.services.audit import record
from app.services.trees import add_version
from app.services.workspace import newest_trees, set_state
from app.team_models import Assignment
from parsing import tokens_edit as te
from parsing.conllu_io import DEPREL, FEATS, FORM, HEAD, ID, LEMMA, UPOS, XPOS

TOKEN_COLUMNS = (
    Token.ident,
    Token.form,
    Token.lemma,
    Token.upos,
    Token.xpos,
    Token.feats,
    Token.head,
    Token.deprel,
    Token.deps,
    Token.misc,
)
TREE_ATTRIBUTES = ("heads", "deprels", "scores", "upos", "provenance", "xpos", "lemmas", "feats")
COLUMN_OF = {"upos": UPOS, "xpos": XPOS, "lemmas": LEMMA, "feats": FEATS}
"""A tree version's stored word column → its token column."""

Rows = list[list[str]]
TreeData = dict[str, Any]
"""A tree's ``kind``, ``name`` and :data:`TREE_ATTRIBUTES` (lists over words 1..n, or None)."""


class EditConflict(Exception):
    """The edit cannot be made in the sentence's present state (answered 409)."""


def refusal(session: DbSession, user: Any, sentence: Sentence) -> str | None:
    """Why ``user`` may not re-tokenize ``sentence`` (None when they may)."""
    line = editing_line(session, user, sentence)
    if line.refusal is not None:
        return line.refusal
    if line.branch:
        return (
            "you correct this sentence blind, on your own version: changing its tokens changes every "
            "annotator's tree, ask a curator"
        )
    return None


# --- reading and writing a sentence ---------------------------------------------------------


def token_rows(session: DbSession, sentence_id: int) -> Rows:
    """The sentence's CoNLL-U token lines (10 strings each), in order."""
    return [
        list(row)
        for row in session.execute(
            select(*TOKEN_COLUMNS).where(Token.sentence_id == sentence_id).order_by(Token.position)
        )
    ]


def _words(rows: Rows) -> Rows:
    return [row for row in rows if row[ID].isdigit()]


def _write_tokens(
    session: DbSession, sentence: Sentence, rows: Rows, comments: Sequence[str] | None = None
) -> None:
    """Replace the sentence's tokens by ``rows``; its word count, ``# text`` (from the tokens)
    and comments follow."""
    session.execute(delete(Token).where(Token.sentence_id == sentence.id))
    session.add_all(
        Token(
            sentence_id=sentence.id,
            position=position,
            word=int(row[ID]) if row[ID].isdigit() else None,
            ident=row[0],
            form=row[1],
            lemma=row[2],
            upos=row[3],
            xpos=row[4],
            feats=row[5],
            head=row[6],
            deprel=row[7],
            deps=row[8],
            misc=row[9],
        )
        for position, row in enumerate(rows, start=1)
    )
    text = te.surface_text(rows)
    sentence.n_words = len(_words(rows))
    sentence.text = text
    sentence.comments = te.with_comment(
        list(sentence.comments if comments is None else comments), "text", text
    )
    session.flush()
    session.expire(sentence, ["tokens"])


def _tree_data(tree: TreeVersion) -> TreeData:
    return {"kind": tree.kind, "name": tree.name, **{a: _copy(getattr(tree, a)) for a in TREE_ATTRIBUTES}}


def _copy(values: Any) -> Any:
    return None if values is None else list(values)


def _flat_tree(kind: str, name: str, n: int) -> TreeData:
    """A placeholder tree for a source one of two merged sentences lacks: every word headless
    (:func:`~parsing.tokens_edit.as_tree` hangs them from the first)."""
    carried = te.as_tree([-1, *[None] * n], ["", *["dep"] * n])
    return {
        "kind": kind,
        "name": name,
        "heads": carried.heads[1:],
        "deprels": carried.deprels[1:],
        **{a: None for a in TREE_ATTRIBUTES[2:]},
        "provenance": ["parser"] * n if kind == "annotation" else None,
    }


def _tree_for(newest: dict[tuple[str, str], TreeVersion], line: tuple[str, str], n: int) -> TreeData:
    """The sentence's tree of ``line`` (for joining two sentences whose sources differ); for an
    annotation line the sentence lacks, its starting tree (main annotation, ensemble, gold) with
    ``parser`` provenance; else a flat one (no made-up parser or gold arcs)."""
    keys = [line, ("annotation", ""), ("ensemble", ""), ("gold", "")] if line[0] == "annotation" else [line]
    for key in keys:
        if key in newest and len(newest[key].heads) == n:
            found = _tree_data(newest[key])
            if key != line:
                found.update(
                    kind=line[0],
                    name=line[1],
                    scores=None,
                    provenance=["parser"] * n if line[0] == "annotation" else None,
                )
                if line[0] != "annotation" or key[0] != "annotation":
                    found.update(xpos=None, lemmas=None, feats=None, upos=None)
            return found
    return _flat_tree(*line, n)


def _join(first: TreeData, second: TreeData, rows: tuple[Rows, Rows]) -> TreeData:
    """Two sentences' trees as one tree over their joined words (two roots: carry it)."""
    heads, deprels = te.join_trees(
        ([-1, *first["heads"]], ["", *first["deprels"]]), ([-1, *second["heads"]], ["", *second["deprels"]])
    )
    joined: TreeData = {
        "kind": first["kind"],
        "name": first["name"],
        "heads": heads[1:],
        "deprels": deprels[1:],
    }
    for attribute in TREE_ATTRIBUTES[2:]:
        parts = (first[attribute], second[attribute])
        if parts == (None, None):
            joined[attribute] = None
            continue
        filled = []
        for values, words in zip(parts, rows, strict=True):
            if values is None:
                values = (
                    ["human"] * len(words)
                    if attribute == "provenance"
                    else [0.0] * len(words)
                    if attribute == "scores"
                    else [w[COLUMN_OF[attribute]] for w in words]
                )
            filled.extend(values)
        joined[attribute] = filled
    return joined


def _carry(
    data: TreeData, words: te.WordMap, touched: dict[int, list[str]], new_words: Rows
) -> tuple[TreeData, list[int]]:
    """``data`` carried to the new words: the tree, its scores (0 for a changed arc), provenance
    (``parser`` for a changed arc), and word columns (a rewritten token's own values). The gold
    tree is the new token lines' own HEAD and DEPREL (carried the same way by the edit), so the
    imported tree and the gold versions agree."""
    carried = te.carry_tree([-1, *data["heads"]], ["", *data["deprels"]], words)
    if data["kind"] == "gold" and all(w[HEAD].isdigit() for w in new_words):
        heads, labels = [-1, *(int(w[HEAD]) for w in new_words)], ["", *(w[DEPREL] for w in new_words)]
        moved = sorted(
            set(carried.changed) | {w for w in range(1, len(heads)) if heads[w] != carried.heads[w]}
        )
        carried = te.Carried(heads, labels, carried.origin, moved)
    changed = set(carried.changed)
    out: TreeData = {
        "kind": data["kind"],
        "name": data["name"],
        "heads": carried.heads[1:],
        "deprels": carried.deprels[1:],
    }
    scores = data["scores"]
    out["scores"] = (
        None
        if scores is None
        else [
            0.0 if word in changed else value
            for word, value in enumerate(te.carry_column(list(scores), carried, 0.0), start=1)
        ]
    )
    provenance = data["provenance"]
    if provenance is None:
        provenance = ["human"] * len(data["heads"]) if data["kind"] == "annotation" and changed else None
    out["provenance"] = (
        None
        if provenance is None or data["kind"] != "annotation"
        else [
            "parser" if word in changed else value
            for word, value in enumerate(te.carry_column(list(provenance), carried, "parser"), start=1)
        ]
    )
    for attribute, column in COLUMN_OF.items():
        values = data[attribute]
        if values is None:
            out[attribute] = None
            continue
        new = te.carry_column(list(values), carried, "")
        if data["kind"] == "annotation":  # an annotator's value of a word whose token changed: the token's
            new = [
                touched[word][column] if word in touched else value for word, value in enumerate(new, start=1)
            ]
        else:  # a parser's predicted tag: kept; a new word has none yet
            new = [value or "X" for value in new]
        out[attribute] = new
    return out, sorted(changed)


def _touched(words: te.WordMap, old_words: Rows, new_words: Rows) -> dict[int, list[str]]:
    """The new words whose token line the edit rewrote (split parts, merged words), with it."""
    return {
        number: row
        for number, (sources, row) in enumerate(zip(words.sources, new_words, strict=True), start=1)
        if len(sources) != 1 or old_words[sources[0] - 1][FORM] != row[FORM]
    }


def _store(
    session: DbSession, sentence: Sentence, data: TreeData, user: User, based_on: TreeVersion | None
) -> TreeVersion:
    kind, name = data["kind"], data["name"]
    source = "annotation" if kind == "annotation" else name if kind == "parser" else kind
    return add_version(
        session,
        sentence_id=sentence.id,
        source=source,
        heads=data["heads"],
        deprels=data["deprels"],
        user=user,
        scores=data["scores"],
        based_on=based_on,
        provenance=data["provenance"],
        columns={a: data[a] for a in COLUMN_OF},
        branch=name if kind == "annotation" else "",
    )


def _label(tree: TreeVersion) -> str:
    if tree.kind == "annotation":
        return f"{tree.name}'s branch v{tree.version}" if tree.name else f"latest v{tree.version}"
    return f"{tree.source} v{tree.version}"


def _snapshot(session: DbSession, sentence: Sentence, rows: Rows) -> dict[str, Any]:
    """What an edit replaces in ``sentence`` (enough to put it back)."""
    state = session.get(SentenceState, sentence.id)
    return {
        "id": sentence.id,
        "position": sentence.position,
        "sent_id": sentence.sent_id,
        "comments": list(sentence.comments),
        "tokens": rows,
        "newest": {
            f"{kind}\t{name}": tree.id for (kind, name), tree in newest_trees(session, sentence.id).items()
        },
        "status": state.status if state else None,
        "reviewed": list(state.reviewed_words) if state else [],
    }


def _last_tree_id(session: DbSession, *sentence_ids: int) -> int:
    return int(
        session.scalar(select(func.max(TreeVersion.id)).where(TreeVersion.sentence_id.in_(sentence_ids))) or 0
    )


def superseded_up_to(session: DbSession, sentence_id: int) -> int:
    """Tree versions of the sentence with ids up to this were made for its earlier tokens."""
    return int(
        session.scalar(select(func.max(TokenEdit.last_tree_id)).where(TokenEdit.sentence_id == sentence_id))
        or 0
    )


def _lock(session: DbSession, sentence: Sentence) -> None:
    """Serialize edits of one sentence (PostgreSQL row lock; SQLite writes one at a time)."""
    session.execute(select(Sentence.id).where(Sentence.id == sentence.id).with_for_update())


def _carry_state(
    session: DbSession, sentence: Sentence, user: User, reviewed: set[int], status: str | None
) -> None:
    """The review marks after an edit: ``reviewed`` (new numbering); a reviewed sentence that lost
    some goes back in progress."""
    if status is None and not reviewed:
        return
    marks = sorted(w for w in reviewed if 1 <= w <= sentence.n_words)
    if status == "reviewed" and len(marks) < sentence.n_words:
        status = "in_progress"
    set_state(session, sentence, user=user, reviewed_words=marks, status=status or "todo")


def _carried_marks(snapshot: dict[str, Any], words: te.WordMap, changed: Sequence[int]) -> set[int]:
    old = set(snapshot["reviewed"])
    return {
        number
        for number, sources in enumerate(words.sources, start=1)
        if sources and all(s in old for s in sources) and number not in changed
    }


def _describe(operation: str, params: dict[str, Any]) -> str:
    shown = ", ".join(f"{key} {value}" for key, value in params.items() if not key.endswith("_id"))
    return f"{operation.replace('-', ' ')} ({shown})" if shown else operation.replace("-", " ")


def _note_changes(
    session: DbSession, sentence: Sentence, user: User, what: str, changed: dict[str, list[int]]
) -> None:
    """A note listing the words whose arc the edit could not keep, per source."""
    if not any(changed.values()):
        return
    forms = [row[FORM] for row in _words(token_rows(session, sentence.id))]
    lines = "; ".join(
        f"{source}: " + ", ".join(f"{w} {forms[w - 1]}" for w in words)
        for source, words in changed.items()
        if words
    )
    session.add(
        SentenceNote(
            sentence_id=sentence.id,
            user_id=user.id,
            body=f"Token edit ({what}): arcs to check, attached by the edit: {lines}"[:5000],
        )
    )
    session.flush()


# --- the operations --------------------------------------------------------------------------


def split_word(session: DbSession, sentence: Sentence, *, word: int, at: int, user: User) -> TokenEdit:
    """Split word ``word`` after character ``at`` of its form."""
    return _word_edit(
        session,
        sentence,
        user,
        "split-word",
        {"word": word, "at": at},
        lambda rows: te.split_word(rows, word, at),
    )


def merge_words(session: DbSession, sentence: Sentence, *, word: int, user: User) -> TokenEdit:
    """Merge word ``word`` with the next."""
    return _word_edit(
        session, sentence, user, "merge-words", {"word": word}, lambda rows: te.merge_words(rows, word)
    )


def add_multiword(
    session: DbSession, sentence: Sentence, *, first: int, last: int, form: str, user: User
) -> TokenEdit:
    """Make words ``first..last`` one multiword token written ``form``."""
    return _word_edit(
        session,
        sentence,
        user,
        "add-multiword",
        {"first": first, "last": last, "form": form},
        lambda rows: te.add_multiword(rows, first, last, form),
    )


def remove_multiword(session: DbSession, sentence: Sentence, *, first: int, user: User) -> TokenEdit:
    """Remove the multiword token that starts at word ``first``."""
    return _word_edit(
        session,
        sentence,
        user,
        "remove-multiword",
        {"first": first},
        lambda rows: te.remove_multiword(rows, first),
    )


def _word_edit(
    session: DbSession,
    sentence: Sentence,
    user: User,
    operation: str,
    params: dict[str, Any],
    edit: Callable[[Rows], te.Retokenized],
) -> TokenEdit:
    """An edit within one sentence: tokens, every source's newest tree, review marks, history."""
    _lock(session, sentence)
    rows = token_rows(session, sentence.id)
    result = edit(rows)
    snapshot = _snapshot(session, sentence, rows)
    newest = newest_trees(session, sentence.id)
    renumbers = any(sources != (number,) for number, sources in enumerate(result.words.sources, start=1)) or (
        len(result.words) != len(_words(rows))
    )
    last = _last_tree_id(session, sentence.id) if renumbers else 0
    old_words = _words(rows)
    _write_tokens(session, sentence, result.rows)
    touched = _touched(result.words, old_words, _words(result.rows))
    written: list[int] = []
    changed: dict[str, list[int]] = {}
    main_changed: list[int] = []
    for tree in newest.values() if renumbers else ():
        if len(tree.heads) != len(old_words):
            continue  # a stray tree of other words: nothing to carry
        data, moved = _carry(_tree_data(tree), result.words, touched, _words(result.rows))
        stored = _store(session, sentence, data, user, tree)
        written.append(stored.id)
        changed[_label(stored)] = moved
        if (tree.kind, tree.name) == ("annotation", ""):
            main_changed = moved
    _carry_state(
        session, sentence, user, _carried_marks(snapshot, result.words, main_changed), snapshot["status"]
    )
    return _finish(
        session, sentence, user, operation, params, {"sentences": [snapshot]}, written, last, changed
    )


def _finish(
    session: DbSession,
    sentence: Sentence,
    user: User,
    operation: str,
    params: dict[str, Any],
    before: dict[str, Any],
    written: list[int],
    last: int,
    changed: dict[str, list[int]],
) -> TokenEdit:
    token_edit = TokenEdit(
        sentence_id=sentence.id,
        operation=operation,
        params=params,
        before=before,
        written=written,
        last_tree_id=last,
        user_id=user.id,
    )
    session.add(token_edit)
    session.flush()
    what = _describe(operation, params)
    _note_changes(session, sentence, user, what, changed)
    record(
        session,
        "token-edit",
        user=user,
        treebank=sentence.document.treebank,
        sentence_id=sentence.id,
        operation=operation,
        edit=token_edit.id,
        words=sentence.n_words,
        **{k: v for k, v in params.items() if k != "operation"},
        arcs_to_check={source: words for source, words in changed.items() if words},
    )
    return token_edit


def _room_after(session: DbSession, sentence: Sentence) -> int:
    """A free position right after ``sentence`` in its document (later sentences move up one
    when it is taken; in two steps, so the unique (document, position) holds after each)."""
    wanted = sentence.position + 1
    taken = session.scalar(
        select(Sentence.id).where(Sentence.document_id == sentence.document_id, Sentence.position == wanted)
    )
    if taken is not None:
        later = (Sentence.document_id == sentence.document_id) & (Sentence.position >= wanted)
        session.execute(
            update(Sentence)
            .where(later)
            .values(position=-Sentence.position - 1)
            .execution_options(synchronize_session=False)
        )
        session.execute(
            update(Sentence)
            .where((Sentence.document_id == sentence.document_id) & (Sentence.position < 0))
            .values(position=-Sentence.position)
            .execution_options(synchronize_session=False)
        )
        session.expire_all()
    return wanted


def _fresh_sent_id(session: DbSession, sentence: Sentence) -> str | None:
    """``<sent_id>-2`` (or -3, ...): a sent_id no sentence of the treebank has."""
    if not sentence.sent_id:
        return None
    used = set(
        session.scalars(
            select(Sentence.sent_id)
            .join(Document)
            .where(
                Document.treebank_id == sentence.document.treebank_id,
                Sentence.sent_id.like(f"{sentence.sent_id}-%"),
            )
        )
    )
    number = 2
    while f"{sentence.sent_id}-{number}" in used:
        number += 1
    return f"{sentence.sent_id}-{number}"


def split_sentence(session: DbSession, sentence: Sentence, *, after: int, user: User) -> TokenEdit:
    """Cut the sentence after word ``after``: the rest becomes a new sentence just after it
    (its trees, review marks and assignments follow)."""
    _lock(session, sentence)
    rows = token_rows(session, sentence.id)
    first, second = te.split_sentence(rows, after)
    snapshot = _snapshot(session, sentence, rows)
    newest = newest_trees(session, sentence.id)
    last = _last_tree_id(session, sentence.id)
    old_words = _words(rows)
    position = _room_after(session, sentence)
    sent_id = _fresh_sent_id(session, sentence)
    new = Sentence(
        document_id=sentence.document_id,
        position=position,
        sent_id=sent_id,
        comments=[f"# sent_id = {sent_id}"] if sent_id else [],
        n_words=second.n_words,
        text="",
    )
    session.add(new)
    session.flush()
    _write_tokens(session, sentence, first.rows)
    _write_tokens(session, new, second.rows)
    written: list[int] = []
    changed: list[dict[str, list[int]]] = [{}, {}]
    for index, (part, result) in enumerate(((sentence, first), (new, second))):
        touched = _touched(result.words, old_words, _words(result.rows))
        part_changed: list[int] = []
        for tree in newest.values():
            if len(tree.heads) != len(old_words):
                continue
            data, moved = _carry(_tree_data(tree), result.words, touched, _words(result.rows))
            stored = _store(session, part, data, user, tree)
            written.append(stored.id)
            changed[index][_label(stored)] = moved
            if (tree.kind, tree.name) == ("annotation", ""):
                part_changed = moved
        _carry_state(
            session, part, user, _carried_marks(snapshot, result.words, part_changed), snapshot["status"]
        )
    for assignment in session.scalars(select(Assignment).where(Assignment.sentence_id == sentence.id)).all():
        session.add(
            Assignment(
                sentence_id=new.id,
                user_id=assignment.user_id,
                blind=assignment.blind,
                assigned_by_id=assignment.assigned_by_id,
                done_at=assignment.done_at,
            )
        )
    session.flush()
    params = {"after": after, "new_sentence_id": new.id, "new_sent_id": sent_id}
    _note_changes(
        session, new, user, f"split off {sentence.sent_id or sentence.id} after word {after}", changed[1]
    )
    return _finish(
        session,
        sentence,
        user,
        "split-sentence",
        params,
        {"sentences": [snapshot]},
        written,
        last,
        changed[0],
    )


def _remove(session: DbSession, sentence: Sentence) -> None:
    """Delete ``sentence`` (its tokens, trees, state, notes, assignments and edits go with it, by
    the database's cascade) and forget the rows of it the session holds."""
    session.flush()
    gone = sentence.id
    session.execute(delete(Sentence).where(Sentence.id == gone))
    for row in list(session.identity_map.values()):
        if row is sentence or getattr(row, "sentence_id", None) == gone:
            session.expunge(row)


def next_sentence(session: DbSession, sentence: Sentence) -> Sentence | None:
    """The sentence after ``sentence`` in its document (None for the last)."""
    return session.scalar(
        select(Sentence)
        .where(Sentence.document_id == sentence.document_id, Sentence.position > sentence.position)
        .order_by(Sentence.position)
        .limit(1)
    )


def merge_sentence(session: DbSession, sentence: Sentence, *, user: User) -> TokenEdit:
    """Merge ``sentence`` with the next sentence of its document, which is removed (everything of
    it is kept in the edit, for :func:`undo_edit`).

    :raise TokenEditError: ``sentence`` is the last of its document.
    """
    following = next_sentence(session, sentence)
    if following is None:
        raise te.TokenEditError(
            "sentence",
            f"sentence {sentence.sent_id or sentence.id} is the last of its "
            "document: there is no next sentence to merge it with",
        )
    _lock(session, sentence)
    _lock(session, following)
    rows, rows_next = token_rows(session, sentence.id), token_rows(session, following.id)
    merged = te.merge_sentences(rows, rows_next)
    snapshot, removed = _snapshot(session, sentence, rows), _whole(session, following, rows_next)
    last = _last_tree_id(session, sentence.id, following.id)
    newest, newest_next = newest_trees(session, sentence.id), newest_trees(session, following.id)
    words, words_next = _words(rows), _words(rows_next)
    _write_tokens(session, sentence, merged.rows)
    touched = _touched(merged.words, words + words_next, _words(merged.rows))
    written: list[int] = []
    changed: dict[str, list[int]] = {}
    main_changed: list[int] = []
    for line in sorted(set(newest) | set(newest_next)):
        data = _join(
            _tree_for(newest, line, len(words)),
            _tree_for(newest_next, line, len(words_next)),
            (words, words_next),
        )
        carried, moved = _carry(data, merged.words, touched, _words(merged.rows))
        stored = _store(session, sentence, carried, user, newest.get(line))
        written.append(stored.id)
        changed[_label(stored)] = moved
        if line == ("annotation", ""):
            main_changed = moved
    marks = {*snapshot["reviewed"], *(w + len(words) for w in removed["reviewed"])}
    both = (
        snapshot["status"]
        if snapshot["status"] == removed["status"]
        else (
            "in_progress"
            if "in_progress" in (snapshot["status"], removed["status"]) or marks
            else snapshot["status"]
        )
    )
    _carry_state(session, sentence, user, {w for w in marks if w not in main_changed}, both)
    _remove(session, following)  # after the new versions: SQLite would give them the removed trees' ids
    params = {"merged_sent_id": removed["sent_id"], "merged_sentence_id": removed["id"]}
    return _finish(
        session,
        sentence,
        user,
        "merge-sentence",
        params,
        {"sentences": [snapshot], "removed": removed},
        written,
        last,
        changed,
    )


def _whole(session: DbSession, sentence: Sentence, rows: Rows) -> dict[str, Any]:
    """All of a sentence a merge removes: its tokens, every tree version, state, notes, assignments."""
    whole = _snapshot(session, sentence, rows)
    whole["text"] = sentence.text
    whole["trees"] = [
        {
            "id": t.id,
            "kind": t.kind,
            "name": t.name,
            "version": t.version,
            "user_id": t.user_id,
            "created_at": t.created_at.isoformat(),
            "based_on_id": t.based_on_id,
            **{a: _copy(getattr(t, a)) for a in TREE_ATTRIBUTES},
        }
        for t in session.scalars(
            select(TreeVersion).where(TreeVersion.sentence_id == sentence.id).order_by(TreeVersion.id)
        )
    ]
    whole["notes"] = [
        {"body": n.body, "user_id": n.user_id, "created_at": n.created_at.isoformat()}
        for n in session.scalars(
            select(SentenceNote).where(SentenceNote.sentence_id == sentence.id).order_by(SentenceNote.id)
        )
    ]
    whole["assignments"] = [
        {
            "user_id": a.user_id,
            "blind": a.blind,
            "assigned_by_id": a.assigned_by_id,
            "done_at": a.done_at.isoformat() if a.done_at else None,
        }
        for a in session.scalars(select(Assignment).where(Assignment.sentence_id == sentence.id))
    ]
    state = session.get(SentenceState, sentence.id)
    whole["disagreement"] = state.disagreement if state else None
    whole["entropy"] = state.entropy if state else None
    return whole


# --- undo ------------------------------------------------------------------------------------


def edits_of(session: DbSession, sentence_id: int) -> list[TokenEdit]:
    """The sentence's token edits, newest first."""
    return list(
        session.scalars(
            select(TokenEdit).where(TokenEdit.sentence_id == sentence_id).order_by(TokenEdit.id.desc())
        )
    )


def edit_dict(edit: TokenEdit) -> dict[str, Any]:
    """A token edit as JSON (for the editor's Tokens menu and history)."""
    return {
        "id": edit.id,
        "operation": edit.operation,
        "params": edit.params,
        "user": edit.user.username,
        "created_at": edit.created_at.isoformat(),
        "undone": edit.undone_by_id is not None,
        "what": _describe(edit.operation, edit.params),
    }


def undoable(session: DbSession, sentence: Sentence) -> TokenEdit | None:
    """The edit :func:`undo_edit` would undo: the sentence's newest edit, unless it is an undo."""
    edits = edits_of(session, sentence.id)
    if not edits or edits[0].operation == "undo" or edits[0].undone_by_id is not None:
        return None
    if "sentences" not in edits[0].before:  # restored from a backup: what it replaced is not kept
        return None
    return edits[0]


def undo_edit(session: DbSession, sentence: Sentence, *, edit_id: int, user: User) -> TokenEdit:
    """Undo the sentence's newest token edit ``edit_id``: its tokens back, the trees it had before
    as new versions of each source (later corrections stay in the history, superseded), its
    review marks back; a split's new sentence removed again, a merged sentence put back.

    :raise LookupError: the sentence has no edit ``edit_id``.
    :raise EditConflict: it is not the newest edit, or the sentence changed in a way the undo
        cannot carry back (a source that appeared since, the split-off sentence edited since).
    """
    _lock(session, sentence)
    edit = session.get(TokenEdit, edit_id)
    if edit is None or edit.sentence_id != sentence.id:
        raise LookupError(f"sentence {sentence.id} has no token edit {edit_id}")
    if edit is not undoable(session, sentence):
        raise EditConflict(
            f"token edit {edit_id} is not the sentence's newest edit (or is an undo, or was undone): "
            "only the newest edit can be undone"
        )
    snapshot = edit.before["sentences"][0]
    newest = newest_trees(session, sentence.id)
    before_lines = {tuple(key.split("\t", 1)): tree_id for key, tree_id in snapshot["newest"].items()}
    removed = edit.before.get("removed")
    new_lines = [
        f"{kind} {name}".strip()
        for kind, name in newest
        if (kind, name) not in before_lines
        and (removed is None or f"{kind}\t{name}" not in removed["newest"])
    ]
    if edit.last_tree_id and new_lines:
        raise EditConflict(
            f"the sentence has trees made after the edit from sources it did not have "
            f"({', '.join(new_lines)}): they cannot be carried back; edit the tokens by hand"
        )
    split_off = None
    if edit.operation == "split-sentence":
        split_off = session.get(Sentence, edit.params["new_sentence_id"])
        if split_off is not None and (
            _last_tree_id(session, split_off.id) > max(edit.written, default=0)
            or edits_of(session, split_off.id)
        ):
            raise EditConflict("the sentence split off was edited since: merge the two sentences instead")
    last = _last_tree_id(session, sentence.id)
    rows_now = token_rows(session, sentence.id)
    _write_tokens(session, sentence, snapshot["tokens"], snapshot["comments"])
    written: list[int] = []
    if edit.last_tree_id:
        for _line, tree_id in sorted(before_lines.items()):
            old = session.get(TreeVersion, tree_id)
            if old is not None:
                written.append(_store(session, sentence, _tree_data(old), user, old).id)
    if split_off is not None:
        _remove(session, split_off)
    if removed is not None:
        written += _carry_back(session, sentence, newest, before_lines, rows_now, user)
        _put_back(session, sentence, removed, user)
    state = session.get(SentenceState, sentence.id)
    if state is not None or snapshot["status"] is not None:
        set_state(
            session,
            sentence,
            user=user,
            reviewed_words=snapshot["reviewed"],
            status=snapshot["status"] or "todo",
        )
    undo = TokenEdit(
        sentence_id=sentence.id,
        operation="undo",
        params={"edit_id": edit.id, "undid": edit.operation},
        before={"sentences": [_snapshot(session, sentence, snapshot["tokens"])]},
        written=written,
        last_tree_id=last if edit.last_tree_id else 0,
        user_id=user.id,
    )
    session.add(undo)
    session.flush()
    edit.undone_by_id = undo.id
    record(
        session,
        "token-undo",
        user=user,
        treebank=sentence.document.treebank,
        sentence_id=sentence.id,
        edit=edit.id,
        operation=edit.operation,
        words=sentence.n_words,
    )
    session.flush()
    return undo


def _carry_back(
    session: DbSession,
    sentence: Sentence,
    newest: dict[tuple[str, str], TreeVersion],
    before_lines: dict[Any, int],
    rows_now: Rows,
    user: User,
) -> list[int]:
    """After undoing a merge: the sources the first sentence got from the merged one (it had no
    tree of them before) keep the part of their newest tree over its own words."""
    first_words = len(_words(token_rows(session, sentence.id)))
    part = te.split_sentence(rows_now, first_words)[0]
    touched = _touched(part.words, _words(rows_now), _words(part.rows))
    written = []
    for line, tree in sorted(newest.items()):
        if line in before_lines or len(tree.heads) != len(_words(rows_now)):
            continue
        data, _ = _carry(_tree_data(tree), part.words, touched, _words(part.rows))
        written.append(_store(session, sentence, data, user, tree).id)
    return written


def _put_back(session: DbSession, sentence: Sentence, removed: dict[str, Any], user: User) -> Sentence:
    """Recreate a sentence a merge removed, right after ``sentence``: its tokens, every tree
    version (same numbers, authors and times), review state, notes and assignments."""
    from datetime import datetime

    position = _room_after(session, sentence)
    back = Sentence(
        document_id=sentence.document_id,
        position=position,
        sent_id=removed["sent_id"],
        comments=removed["comments"],
        n_words=0,
        text=removed.get("text"),
    )
    session.add(back)
    session.flush()
    _write_tokens(session, back, removed["tokens"], removed["comments"])
    ids: dict[int, int] = {}
    for tree in removed["trees"]:
        row = TreeVersion(
            sentence_id=back.id,
            kind=tree["kind"],
            name=tree["name"],
            version=tree["version"],
            user_id=tree["user_id"],
            created_at=datetime.fromisoformat(tree["created_at"]),
            based_on_id=ids.get(tree["based_on_id"]),
            **{a: tree[a] for a in TREE_ATTRIBUTES},
        )
        session.add(row)
        session.flush()
        ids[tree["id"]] = row.id
    for note in removed["notes"]:
        session.add(
            SentenceNote(
                sentence_id=back.id,
                body=note["body"],
                user_id=note["user_id"],
                created_at=datetime.fromisoformat(note["created_at"]),
            )
        )
    for assignment in removed["assignments"]:
        done = assignment["done_at"]
        session.add(
            Assignment(
                sentence_id=back.id,
                user_id=assignment["user_id"],
                blind=assignment["blind"],
                assigned_by_id=assignment["assigned_by_id"],
                done_at=datetime.fromisoformat(done) if done else None,
            )
        )
    if removed["status"] is not None or removed.get("disagreement") is not None:
        session.add(
            SentenceState(
                sentence_id=back.id,
                status=removed["status"] or "todo",
                reviewed_words=removed["reviewed"],
                disagreement=removed.get("disagreement"),
                entropy=removed.get("entropy"),
                updated_by_id=user.id,
            )
        )
    session.flush()
    return back


def tokens_info(session: DbSession, user: Any, sentence: Sentence) -> dict[str, Any]:
    """What the editor's Tokens menu needs: the multiword tokens (``[first, last, form]``), the
    edit an undo would undo, whether a next sentence exists, and why the user may not edit
    (``refusal``, None when they may)."""
    ranges = []
    for row in token_rows(session, sentence.id):
        first, dash, last = row[ID].partition("-")
        if dash:
            ranges.append([int(first), int(last), row[FORM]])
    edit = undoable(session, sentence)
    return {
        "multiwords": ranges,
        "undo": edit_dict(edit) if edit is not None else None,
        "has_next": next_sentence(session, sentence) is not None,
        "refusal": refusal(session, user, sentence),
    }
