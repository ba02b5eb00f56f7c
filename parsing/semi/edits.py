"""How many edits an annotator needs to turn the ensemble's trees into the gold trees.

An oracle annotator fixes one wrong arc at a time (head and label together) until the tree
equals the gold tree. A word is wrong when its head or its label differs from gold. The
annotator reads the words in the policy's order and fixes the first wrong one:

* ``left-to-right``: sentence order, so the leftmost wrong word is fixed first.
* ``worst-first``: by the vote share of each word's head, lowest first (the share of the
  ensemble members' weight behind the current tree's head, as the annotator's screen shows
  it, :func:`parsing.ensemble.voting.vote_share`; ties to the leftmost).
* ``top-down``: by depth in the current tree, the root word first, then its dependents, and so
  on (ties to the leftmost), as an annotator who checks the sentence's skeleton before its
  details reads it: a fixed attachment high in the tree is a constraint on every word below it.

Without ``interactive`` the other arcs never change, so the edits equal the wrong arcs. With
it, the sentence is re-parsed after each edit under every arc fixed (or confirmed) so far
(:meth:`parsing.pipeline.ModelBundle.parse_constrained`; a free word keeps its label unless
the arcs around it moved, :func:`parsing.constraints.keep_previous_labels`): arcs that were
wrong because of a fixed one may come right by themselves (interactive predictive parsing,
counted as ``reparse_fixed``), and a right arc may go wrong
(``reparse_broke``) and need an edit of its own.

Confirmations (``confirm="passed"``) model what the editor lets a person do: accepting an arc
("a") makes it a human arc, a constraint, without being an edit. A person who reads in the
policy's order and fixes a word has looked at every word before it in that order and found
it right, so those words are confirmed first (left to right: every word left of the fixed
one; worst first: every word whose share is below the fixed word's; top down: every word
above the fixed one and left of it at its depth). With ``accept_share``
the annotator also accepts, before each edit, every right word whose share is at least that
value. A confirmed or fixed arc never changes again; confirmations are counted apart from
edits (``confirmations``) and never count as edits.

Measured (``bench/simulate_edits.py``, six UD dev files, graph1+eager+hybrid, gold tags):
re-parsing saves 3-17% of the edits with confirmations (left to right), 1-14% without, short
of the 25% hoped for. Each member alone shows where: under a confirmed prefix the transition
members' guided re-parse fixes about three wrong arcs per one it breaks (Wolof: eager 505/160,
hybrid 537/185), the arc-factored graph1 propagates little (216/36), and about a quarter of the
edits are label-only (a right head, a wrong label), which a re-parse seldom fixes.

Every fixed arc stays, so a sentence of ``n`` words takes at most ``n`` edits. Sentences are
independent; each step edits every unfinished sentence once and re-parses them together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from parsing.constraints import Constraints
from parsing.ensemble.base import stack_heads
from parsing.ensemble.voting import ensemble_vote_weights, vote_share
from parsing.pipeline import ModelBundle
from parsing.trees import depths
from parsing.types import Parse, Sentence

__all__ = ["CONFIRM", "POLICIES", "EditState", "run_edits", "simulate_edits", "wrong_words"]

POLICIES = ("worst-first", "left-to-right", "top-down")
CONFIRM = ("none", "passed")
"""``none``: only fixed arcs are constraints; ``passed``: the words read before a fixed one
are confirmed (module docstring)."""


def wrong_words(tree: Parse, gold: Sentence) -> list[int]:
    """Words whose head or label differs from gold, in sentence order."""
    return [d for d in range(1, len(gold) + 1)
            if tree.heads[d] != gold.heads[d] or tree.deprels[d] != gold.deprels[d]]


@dataclass
class EditState:
    """One sentence under correction: the current tree, its members' parses, the human arcs.

    ``fixed`` holds the edited words, ``confirmed`` the accepted ones (both constraints);
    ``shown`` is the tree the annotator saw before the last edit (the re-parse's ``previous``);
    ``label_edits`` counts the edits whose head was right (only the label changed);
    ``broke``/``repaired`` count free words a re-parse turned from right to wrong and from
    wrong to right.
    """

    gold: Sentence
    tree: Parse
    members: list[Parse]
    fixed: dict[int, int] = field(default_factory=dict)
    confirmed: set[int] = field(default_factory=set)
    shown: Parse | None = None
    edits: int = 0
    label_edits: int = 0
    broke: int = 0
    repaired: int = 0

    @property
    def confirmations(self) -> int:
        """Words accepted without an edit."""
        return len(self.confirmed)

    def human(self) -> set[int]:
        """Every word the annotator fixed or confirmed."""
        return set(self.fixed) | self.confirmed

    def constraints(self) -> Constraints:
        """The fixed and confirmed arcs with their gold labels (a confirmed arc is a right one)."""
        words = sorted(self.human())
        return Constraints({d: int(self.gold.heads[d]) for d in words},
                           {d: self.gold.deprels[d] for d in words})

    def shares(self, weights: Sequence[float]) -> np.ndarray:
        """The vote share of each word's head in the current tree, shape ``(n+1,)``."""
        return vote_share(stack_heads(self.members), weights, self.tree.heads)

    def reading_order(self, policy: str, weights: Sequence[float]) -> list[int]:
        """Words ``1..n`` in the order the policy reads them."""
        words = list(range(1, len(self.gold) + 1))
        if policy == "left-to-right":
            return words
        if policy == "top-down":
            depth = depths(self.tree.heads)  # -1: cut off from ROOT by a hand-made cycle; read last
            return sorted(words, key=lambda d: (int(depth[d]) if depth[d] >= 0 else len(words) + 1, d))
        share = self.shares(weights)
        return sorted(words, key=lambda d: (float(share[d]), d))

    def next_word(self, policy: str, weights: Sequence[float]) -> int | None:
        """The wrong word the policy fixes next, or ``None`` when the tree equals gold."""
        wrong = set(wrong_words(self.tree, self.gold))
        if not wrong:
            return None
        return next(d for d in self.reading_order(policy, weights) if d in wrong)

    def step(self, policy: str, weights: Sequence[float], *, confirm: str = "none",
             accept_share: float | None = None) -> bool:
        """Confirm what the annotator passes (or accepts), then fix the next wrong word.

        Returns:
            False when the tree already equals gold (nothing done).
        """
        wrong = set(wrong_words(self.tree, self.gold))
        if not wrong:
            return False
        order = self.reading_order(policy, weights)
        word = next(d for d in order if d in wrong)
        if confirm == "passed":
            self.confirmed.update(d for d in order[: order.index(word)] if d not in self.fixed)
        if accept_share is not None:
            share = self.shares(weights)
            self.confirmed.update(d for d in order if d not in wrong and d not in self.fixed
                                  and share[d] >= accept_share)
        self.fix(word)
        return True

    def fix(self, word: int) -> None:
        """Give ``word`` its gold head and label (one edit)."""
        self.fixed[word] = int(self.gold.heads[word])
        self.confirmed.discard(word)
        self.label_edits += int(self.tree.heads[word] == self.gold.heads[word])
        self.shown = self.tree
        heads = self.tree.heads.copy()
        heads[word] = self.gold.heads[word]
        deprels = list(self.tree.deprels)
        deprels[word] = self.gold.deprels[word]
        self.tree = Parse(heads, deprels, self.tree.arc_scores, self.tree.upos, self.tree.extras)
        self.edits += 1

    def absorb(self, tree: Parse, members: list[Parse]) -> None:
        """Take a re-parse, counting the free words it broke and repaired.

        Raises:
            RuntimeError: the re-parse changed a human arc (constrained parsing failed).
        """
        human = self.human()
        before = set(wrong_words(self.tree, self.gold))
        after = set(wrong_words(tree, self.gold))
        if after & human:
            raise RuntimeError(f"a re-parse changed the human arcs of words {sorted(after & human)}")
        self.broke += len(after - before - human)
        self.repaired += len(before - after - human)
        self.tree, self.members = tree, members


def simulate_edits(bundle: ModelBundle, gold: Sequence[Sentence], *, policy: str, interactive: bool,
                   confirm: str = "none", accept_share: float | None = None,
                   progress: Callable[[str], None] | None = None) -> dict[str, float | int]:
    """Edits an oracle annotator makes on ``gold`` (module docstring).

    Args:
        bundle: a model directory loaded with an ensemble.
        gold: sentences with gold trees.
        policy: one of :data:`POLICIES`.
        interactive: re-parse under the human arcs after each edit.
        confirm: one of :data:`CONFIRM`.
        accept_share: also accept right words whose share is at least this, or ``None``.
        progress: told one line per step.

    Returns:
        ``{"sentences", "words", "edits", "edits_per_100_words", "wrong_arcs_before",
        "label_only_edits", "confirmations", "reparse_fixed", "reparse_broke"}``:
        ``label_only_edits`` the edits of a word whose head was right, ``reparse_fixed`` free words a
        re-parse turned right, ``reparse_broke`` right free words it turned wrong.

    Raises:
        ValueError: an unknown policy or confirmation mode, a share outside (0, 1], a sentence
            without a gold tree, or a bundle without an ensemble.
    """
    states, wrong_before = run_edits(bundle, gold, policy=policy, interactive=interactive, confirm=confirm,
                                     accept_share=accept_share, progress=progress)
    words = sum(len(s) for s in gold)
    edits = sum(state.edits for state in states)
    return {
        "sentences": len(gold),
        "words": words,
        "edits": edits,
        "edits_per_100_words": round(100.0 * edits / max(words, 1), 4),
        "wrong_arcs_before": wrong_before,
        "label_only_edits": sum(state.label_edits for state in states),
        "confirmations": sum(state.confirmations for state in states),
        "reparse_fixed": sum(state.repaired for state in states),
        "reparse_broke": sum(state.broke for state in states),
    }


def run_edits(bundle: ModelBundle, gold: Sequence[Sentence], *, policy: str, interactive: bool,
              confirm: str = "none", accept_share: float | None = None,
              progress: Callable[[str], None] | None = None) -> tuple[list[EditState], int]:
    """Every sentence's final :class:`EditState` (its tree equals gold) and the wrong arcs of
    the first parse; see :func:`simulate_edits`."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if confirm not in CONFIRM:
        raise ValueError(f"confirm must be one of {', '.join(CONFIRM)}, got {confirm!r}")
    if accept_share is not None and not 0.0 < accept_share <= 1.0:
        raise ValueError(f"the accepted vote share must lie in (0, 1], got {accept_share}")
    if any(not s.has_tree for s in gold):
        raise ValueError("every input sentence needs a gold tree")
    prepared = bundle.prepare(gold)
    names = bundle.ensemble_members
    by_name = ensemble_vote_weights(bundle.ensemble, names, names)
    weights = [by_name[name] for name in names]
    members, trees = bundle.parse_with_ensemble(prepared, names, tags="gold")
    states = [EditState(sentence, tree, [members[name][i] for name in names])
              for i, (sentence, tree) in enumerate(zip(gold, trees, strict=True))]
    wrong_before = sum(len(wrong_words(state.tree, state.gold)) for state in states)
    step = 0
    while True:
        edited = [i for i, state in enumerate(states)
                  if state.step(policy, weights, confirm=confirm, accept_share=accept_share)]
        if not edited:
            return states, wrong_before
        step += 1
        if interactive:
            reparsed_members, reparsed = bundle.parse_constrained(
                [prepared[i] for i in edited], [states[i].constraints() for i in edited], names, tags="gold",
                previous=[states[i].shown or states[i].tree for i in edited],
                unconstrained=({name: [members[name][i] for i in edited] for name in names},
                               [trees[i] for i in edited]))
            for j, i in enumerate(edited):
                states[i].absorb(reparsed[j], [reparsed_members[name][j] for name in names])
        if progress is not None:
            progress(f"step {step}: {len(edited)} sentences edited, {sum(s.edits for s in states)} edits")
