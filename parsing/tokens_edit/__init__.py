"""Re-tokenizing sentences: split a word in two, merge two adjacent words, add or remove a
multiword token (MWT), split a sentence in two, merge two sentences (issue #32); and carrying
any tree of the old words over to the new ones.

A sentence is its CoNLL-U token lines, ``rows`` (10 strings each, in file order, as
:attr:`parsing.conllu_io.ConlluSentence.rows`: words, MWT ranges ``1-2``). Every operation returns
one :class:`Retokenized` per resulting sentence: the new ``rows`` (their HEAD, DEPREL and DEPS
columns carried over like any tree, MISC ``SpaceAfter`` moved where it belongs) and a
:class:`WordMap` saying which old words each new word is made of. :func:`carry_tree` carries any
other tree of the old words (a parser's, an annotator's) with the same map, and
:func:`carry_column` a per-word column (tags, scores, provenance).

Trees follow the library's convention: ``heads`` has ``n+1`` entries, ``heads[0] == -1``,
``heads[d]`` the head of word ``d`` (0 = ROOT); ``deprels`` too, ``deprels[0] == ""``.

What happens to the arcs:

* **split a word** (``thecat`` → ``the`` ``cat``): the first part keeps the word's arc, its
  dependents and its columns; the second part attaches to the first as ``dep`` (a new arc, to be
  checked). The first part gets ``SpaceAfter=No`` (the text does not change).
* **merge two words**: the merged word keeps the arc of the part whose head is outside the pair
  (the other part's arc was between them), and the dependents of both. When both parts had a
  head outside the pair, the second part's arc is lost.
* **MWT** add or remove: the words and arcs do not change; ``SpaceAfter=No`` moves between the
  range line and its last word.
* **split a sentence** after word ``k``: arcs that cross the cut are lost.
* **merge two sentences**: the second sentence's root attaches to the first's as ``parataxis``.

A lost arc never leaves a word without a head: :func:`as_tree` attaches every word whose arc
could not be kept to the sentence's root (``dep``), keeps one root and breaks any cycle a merge
made, so the result is always a tree with one root; :attr:`Carried.changed` lists the words whose
arc is not the old tree's (to be checked by a person).

Refused (:class:`TokenEditError`, naming the field): a word number outside the sentence, a split
point outside the form or next to a space, a merge across a multiword token's edge, an MWT over
words already in one, a sentence cut inside a multiword token, and any sentence with empty nodes
(``3.1``: enhanced UD's extra nodes would need renumbering too).

The code: :mod:`.carry` (word maps, carrying trees and columns, :func:`as_tree`), :mod:`.rows`
(token lines, :class:`TokenEditError`, :class:`Retokenized`, :func:`surface_text`), :mod:`.misc`
(``SpaceAfter`` in MISC, :func:`with_comment`) and :mod:`.operations` (the edits); their public
names are imported here.
"""

from parsing.tokens_edit.carry import Carried, WordMap, as_tree, carry_column, carry_tree
from parsing.tokens_edit.misc import with_comment
from parsing.tokens_edit.operations import (
    add_multiword,
    join_rows,
    join_trees,
    merge_sentences,
    merge_words,
    remove_multiword,
    split_sentence,
    split_word,
)
from parsing.tokens_edit.rows import Retokenized, TokenEditError, surface_text

__all__ = [
    "Carried",
    "Retokenized",
    "TokenEditError",
    "WordMap",
    "add_multiword",
    "as_tree",
    "carry_column",
    "carry_tree",
    "join_rows",
    "join_trees",
    "merge_sentences",
    "merge_words",
    "remove_multiword",
    "split_sentence",
    "split_word",
    "surface_text",
    "with_comment",
]
