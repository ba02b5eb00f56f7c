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

The code: :mod:`.access` (who may, the Tokens menu), :mod:`.words` (edits within a sentence),
:mod:`.sentences` (split and merge sentences), :mod:`.carry` (every source's trees and columns
carried to the new words, review marks), :mod:`.records` (token lines, snapshots, the stored
:class:`~app.models.TokenEdit`) and :mod:`.undo` (history and undo); their public names are
imported here.
"""

from app.services.token_edits.access import refusal, tokens_info
from app.services.token_edits.records import EditConflict, superseded_up_to, token_rows
from app.services.token_edits.sentences import merge_sentence, next_sentence, split_sentence
from app.services.token_edits.undo import edit_dict, edits_of, undo_edit, undoable
from app.services.token_edits.words import add_multiword, merge_words, remove_multiword, split_word

__all__ = [
    "EditConflict",
    "add_multiword",
    "edit_dict",
    "edits_of",
    "merge_sentence",
    "merge_words",
    "next_sentence",
    "refusal",
    "remove_multiword",
    "split_sentence",
    "split_word",
    "superseded_up_to",
    "token_rows",
    "tokens_info",
    "undo_edit",
    "undoable",
]
