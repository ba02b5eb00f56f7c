"""The annotation queue: which sentence to correct next, with filters and progress counts.

Orders (:data:`ORDERS`, explained to users by :data:`ORDER_HELP`) are the selection
strategies of :mod:`parsing.semi.selection`, measured by ``bench/simulate.py``, plus document
order; the default is :data:`DEFAULT_ORDER`. ``diverse`` moves near-duplicates of a sentence
ranked above them (the same words, :func:`parsing.semi.selection.diverse_batch`) behind the
others among the first :data:`DIVERSE_WINDOW`, so a batch taken from the top has no repeats.

Filters: review ``status`` (default ``open``: not yet reviewed, so reviewed sentences leave the
to-do view; ``any`` lists all), a ``upos`` that occurs, a ``relation`` in the current tree
(newest correction, else ensemble), and ``disputed``: a relation on which the members disagree
(some word where members differ in head or label and one of them, or the ensemble, chose that
relation), and ``assigned``: ``me`` (the sentences assigned to the user and still open) or
``unassigned`` (assigned to nobody: what an owner hands out next). Whoever has open assigned
sentences sees them first, in the queue's order (:mod:`app.services.assignments`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from app.models import Document, Sentence, SentenceState, Token, Treebank, TreeVersion
from app.services import DbSession
from app.services.assignments import assigned_ids, assignees
from app.services.trees import latest_versions
from parsing.semi.selection import diverse_batch

ORDER_HELP: dict[str, str] = {
    "disagreement": "most disputed per word first: the mean over the words of 1 − the vote share of the "
                    "ensemble's head (short sentences can top it)",
    "expected-errors": "most expected wrong heads first: the sum over the words of 1 − the vote share of "
                       "the ensemble's head (long, doubtful sentences first)",
    "entropy": "most spread votes first: the summed entropy of the members' head votes",
    "detector": "most expected wrong arcs first by the arc error detector: the sum over the words of its "
                "probability that the ensemble's arc is wrong (rounds with a detector; others last)",
    "length": "longest first",
    "random": "a fixed random order (the baseline the others are measured against)",
    "position": "document order",
}
"""Every order and what it means, as the queue page explains it."""
ORDERS = tuple(ORDER_HELP)
DEFAULT_ORDER = "disagreement"
"""The order the queue opens in, chosen by ``bench/simulate.py`` (:data:`DEFAULT_ORDER_REASON`)."""
DEFAULT_ORDER_REASON = (
    "In simulated annotation rounds on six UD treebanks it needed the fewest annotated words to reach "
    "the accuracy of random selection (about 80% of random's words on four; on the other two it "
    "stayed 0.3–0.5 LAS short), while ranking by expected wrong heads needed as many words as random."
)
"""Why :data:`DEFAULT_ORDER` is the default, as the queue page says (``bench/simulate.py --report``)."""
DIVERSE_WINDOW = 500
"""How many of the top-ranked sentences ``diverse`` reorders (quadratic in this number)."""
ASSIGNED = ("me", "unassigned")
"""Values of the ``assigned`` filter."""
STATUSES = ("open", "any", "todo", "in_progress", "reviewed")
"""Status filter values: ``open`` = to do or in progress (the default), ``any`` = all."""


@dataclass(frozen=True)
class QueueFilter:
    """What to list: ``split`` (``pool`` by default, ``all`` for every split) and filters."""

    order: str = DEFAULT_ORDER
    status: str = "open"
    upos: str | None = None
    relation: str | None = None
    disputed: str | None = None
    split: str = "pool"
    diverse: bool = False
    assigned: str | None = None

    @classmethod
    def from_args(cls, args: Any) -> QueueFilter:
        """From request arguments (unknown values fall back to the defaults)."""
        order = args.get("order") or DEFAULT_ORDER
        status = args.get("status") or "open"
        return cls(order=order if order in ORDERS else DEFAULT_ORDER,
                   status=status if status in STATUSES else "open", upos=args.get("upos") or None,
                   relation=args.get("relation") or None, disputed=args.get("disputed") or None,
                   split=args.get("split") or "pool", diverse=args.get("diverse") in ("1", "on", "true"),
                   assigned=args.get("assigned") if args.get("assigned") in ASSIGNED else None)

    def to_args(self) -> dict[str, str]:
        """The non-default settings as URL arguments."""
        values = {"order": self.order, "status": self.status, "upos": self.upos,
                  "relation": self.relation, "disputed": self.disputed, "split": self.split,
                  "diverse": "1" if self.diverse else None, "assigned": self.assigned}
        defaults = QueueFilter()
        return {k: str(v) for k, v in values.items() if v and v != getattr(defaults, k)}


def queue_page_arg(value: Any) -> int | None:
    """A queue ``page`` worth keeping in a link back to the queue: an integer above 1, else None.

    Page 1 is the queue's default; anything that is not a plain number is left out (the queue
    clamps what it gets, so a page past the end still lands on the last one).
    """
    text = str(value or "")
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        return None
    page = int(text)
    return page if page > 1 else None


@dataclass
class Queue:
    """The ordered items and the treebank's progress counts."""

    items: list[dict[str, Any]]
    counts: dict[str, int] = field(default_factory=dict)


def build_queue(
    session: DbSession, treebank: Treebank, spec: QueueFilter, *, user_id: int | None = None,
    with_assignees: bool = False,
) -> Queue:
    """The sentences of ``treebank`` matching ``spec``, in its order, with counts; ``user_id``'s
    open assigned sentences first (each item's ``mine``); ``with_assignees``: each item's
    ``assignees`` (user names; for those who manage the team, never for blind annotators)."""
    query = (select(Sentence.id, Sentence.sent_id, Sentence.text, Sentence.n_words, Sentence.position,
                    Document.position, SentenceState.status, SentenceState.disagreement,
                    SentenceState.entropy, SentenceState.suspicion)
             .join(Document).outerjoin(SentenceState)
             .where(Document.treebank_id == treebank.id, Sentence.n_words > 0))
    if spec.split != "all":
        query = query.where(Document.split == spec.split)
    rows: list[Any] = list(session.execute(query).all())
    counts = _counts(rows)
    if spec.status == "open":
        rows = [row for row in rows if (row.status or "todo") != "reviewed"]
    elif spec.status != "any":
        rows = [row for row in rows if (row.status or "todo") == spec.status]
    if spec.upos:
        having = set(session.scalars(select(Token.sentence_id).where(
            Token.upos == spec.upos, Token.sentence_id.in_([row.id for row in rows]))))
        rows = [row for row in rows if row.id in having]
    disputed_counts: dict[int, int] = {}
    if spec.relation or spec.disputed:
        keep = _tree_filter(session, [row.id for row in rows], spec.relation, spec.disputed)
        rows = [row for row in rows if row.id in keep]
        disputed_counts = keep
    mine = set(assigned_ids(session, treebank.id, user_id)) if user_id is not None else set()
    if spec.assigned == "me":
        rows = [row for row in rows if row.id in mine]
    elif spec.assigned == "unassigned":
        taken = set(assignees(session, [row.id for row in rows]))
        rows = [row for row in rows if row.id not in taken]
    rows.sort(key=_order_key(spec.order))
    if spec.diverse:
        rows = _diversified(rows)
    rows.sort(key=lambda row: row.id not in mine)  # stable: the queue's order within each part
    who = assignees(session, [row.id for row in rows]) if with_assignees else {}
    items = [{"id": row.id, "sent_id": row.sent_id, "text": row.text or "", "n_words": row.n_words,
              "status": row.status or "todo", "disagreement": row.disagreement,
              "expected_errors": _expected_errors(row), "entropy": row.entropy, "suspicion": row.suspicion,
              "disputed_words": disputed_counts.get(row.id), "mine": row.id in mine,
              **({"assignees": who.get(row.id, [])} if with_assignees else {})} for row in rows]
    return Queue(items, counts)


def _counts(rows: list[Any]) -> dict[str, int]:
    counts = {"total": len(rows), "todo": 0, "in_progress": 0, "reviewed": 0, "preannotated": 0}
    for row in rows:
        counts[row.status or "todo"] += 1
        counts["preannotated"] += row.disagreement is not None
    return counts


def _diversified(rows: list[Any]) -> list[Any]:
    """``rows`` with near-duplicates among the first :data:`DIVERSE_WINDOW` moved behind the others."""
    top = rows[:DIVERSE_WINDOW]
    words = [frozenset((row.text or "").lower().split()) for row in top]
    order = diverse_batch(range(len(top)), words, len(top))
    return [top[i] for i in order] + rows[DIVERSE_WINDOW:]


def _expected_errors(row: Any) -> float | None:
    """Σ(1 − vote share) over the words: the stored mean times the number of words."""
    return None if row.disagreement is None else row.disagreement * row.n_words


def _order_key(order: str) -> Any:
    if order == "expected-errors":
        return lambda row: (row.disagreement is None, -(_expected_errors(row) or 0.0), row[5], row.position)
    if order == "detector":
        return lambda row: (row.suspicion is None, -(row.suspicion or 0.0), row[5], row.position)
    if order == "entropy":
        return lambda row: (row.entropy is None, -(row.entropy or 0.0), row[5], row.position)
    if order == "length":
        return lambda row: (-row.n_words, row[5], row.position)
    if order == "random":
        return lambda row: ((row.id * 2654435761) % 4294967296, row.id)
    if order == "position":
        return lambda row: (row[5], row.position)
    return lambda row: (row.disagreement is None, -(row.disagreement or 0.0), row[5], row.position)


def _tree_filter(
    session: DbSession, ids: list[int], relation: str | None, disputed: str | None
) -> dict[int, int]:
    """Sentence id → words disputed on ``disputed`` (0 without it), for the matching ids."""
    current = latest_versions(session, ids, "annotation")
    ensemble = latest_versions(session, ids, "ensemble")
    names = list(session.scalars(select(TreeVersion.name).where(
        TreeVersion.kind == "parser", TreeVersion.sentence_id.in_(ids)).distinct()))
    members = [latest_versions(session, ids, name) for name in names]
    keep: dict[int, int] = {}
    for sentence_id in ids:
        tree = current.get(sentence_id) or ensemble.get(sentence_id)
        if relation and (tree is None or relation not in tree.deprels):
            continue
        count = 0
        if disputed:
            trees = [m[sentence_id] for m in members if sentence_id in m]
            count = _disputed_words(trees, ensemble.get(sentence_id), disputed)
            if not count:
                continue
        keep[sentence_id] = count
    return keep


def _disputed_words(trees: list[TreeVersion], ensemble: TreeVersion | None, relation: str) -> int:
    if len(trees) < 2:
        return 0
    count = 0
    for word in range(len(trees[0].heads)):
        arcs = {(t.heads[word], t.deprels[word]) for t in trees}
        labels = {label for _, label in arcs} | ({ensemble.deprels[word]} if ensemble else set())
        count += len(arcs) > 1 and relation in labels
    return count


def next_in_queue(
    session: DbSession, treebank: Treebank, spec: QueueFilter, after: int, *, user_id: int | None = None
) -> int | None:
    """The sentence after ``after`` in ``user_id``'s queue (the first one when ``after`` left it)."""
    ids = [item["id"] for item in build_queue(session, treebank, spec, user_id=user_id).items]
    if after in ids:
        position = ids.index(after)
        return ids[position + 1] if position + 1 < len(ids) else None
    return ids[0] if ids else None


def treebank_upos_and_relations(session: DbSession, treebank: Treebank) -> tuple[list[str], list[str]]:
    """UPOS tags seen in the treebank and its relations (for the filter menus)."""
    upos = session.scalars(select(Token.upos).join(Sentence).join(Document)
                           .where(Document.treebank_id == treebank.id, Token.word.is_not(None))
                           .group_by(Token.upos).order_by(func.count().desc()))
    return [tag for tag in upos if tag and tag != "_"], sorted(treebank.labels)
