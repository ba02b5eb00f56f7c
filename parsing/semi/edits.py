"""How many edits an annotator needs to turn the ensemble's trees into the gold trees.

An oracle annotator fixes one wrong arc at a time (head and label together) until the tree
equals the gold tree. A word is wrong when its head or its label differs from gold.

* ``left-to-right``: the leftmost wrong word first.
* ``worst-first``: the wrong word whose head has the lowest vote share first (the share of
  the ensemble members' weight behind the current tree's head, as the annotator's screen shows
  it, :func:`parsing.ensemble.voting.vote_share`; ties to the leftmost).

Without ``interactive`` the other arcs never change, so the edits equal the wrong arcs. With
it, the sentence is re-parsed after each edit under every arc fixed so far
(:meth:`parsing.pipeline.ModelBundle.parse_constrained`, free words whose head stays keep
their label): arcs that were wrong because of a
fixed one may come right by themselves (interactive predictive parsing), and a right arc may
go wrong and need an edit of its own. Every fixed arc stays, so a sentence of ``n`` words
takes at most ``n`` edits. Sentences are independent; each step edits every unfinished
sentence once and re-parses them together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from parsing.constraints import Constraints
from parsing.ensemble.base import stack_heads
from parsing.ensemble.voting import ensemble_vote_weights, vote_share
from parsing.pipeline import ModelBundle
from parsing.types import Parse, Sentence

__all__ = ["POLICIES", "EditState", "run_edits", "simulate_edits", "wrong_words"]

POLICIES = ("worst-first", "left-to-right")


def wrong_words(tree: Parse, gold: Sentence) -> list[int]:
    """Words whose head or label differs from gold, in sentence order."""
    return [d for d in range(1, len(gold) + 1)
            if tree.heads[d] != gold.heads[d] or tree.deprels[d] != gold.deprels[d]]


@dataclass
class EditState:
    """One sentence under correction: the current tree, its members' parses, the fixed arcs."""

    gold: Sentence
    tree: Parse
    members: list[Parse]
    fixed: dict[int, int] = field(default_factory=dict)
    edits: int = 0

    def constraints(self) -> Constraints:
        """The fixed arcs with their gold labels."""
        return Constraints(dict(self.fixed), {d: self.gold.deprels[d] for d in self.fixed})

    def next_word(self, policy: str, weights: Sequence[float]) -> int | None:
        """The wrong word the policy fixes next, or ``None`` when the tree equals gold."""
        wrong = wrong_words(self.tree, self.gold)
        if not wrong:
            return None
        if policy == "left-to-right":
            return wrong[0]
        share = vote_share(stack_heads(self.members), weights, self.tree.heads)
        return min(wrong, key=lambda d: (float(share[d]), d))

    def fix(self, word: int) -> None:
        """Give ``word`` its gold head and label (one edit)."""
        self.fixed[word] = int(self.gold.heads[word])
        heads = self.tree.heads.copy()
        heads[word] = self.gold.heads[word]
        deprels = list(self.tree.deprels)
        deprels[word] = self.gold.deprels[word]
        self.tree = Parse(heads, deprels, self.tree.arc_scores, self.tree.upos, self.tree.extras)
        self.edits += 1


def simulate_edits(bundle: ModelBundle, gold: Sequence[Sentence], *, policy: str, interactive: bool,
                   progress: Callable[[str], None] | None = None) -> dict[str, float | int]:
    """Edits an oracle annotator makes on ``gold`` (module docstring).

    Args:
        bundle: a model directory loaded with an ensemble.
        gold: sentences with gold trees.
        policy: one of :data:`POLICIES`.
        interactive: re-parse under the fixed arcs after each edit.
        progress: told one line per step.

    Returns:
        ``{"sentences", "words", "edits", "edits_per_100_words", "wrong_arcs_before"}``.

    Raises:
        ValueError: an unknown policy, a sentence without a gold tree, or a bundle without
            an ensemble.
    """
    states, wrong_before = run_edits(bundle, gold, policy=policy, interactive=interactive, progress=progress)
    words = sum(len(s) for s in gold)
    edits = sum(state.edits for state in states)
    return {
        "sentences": len(gold),
        "words": words,
        "edits": edits,
        "edits_per_100_words": round(100.0 * edits / max(words, 1), 4),
        "wrong_arcs_before": wrong_before,
    }


def run_edits(bundle: ModelBundle, gold: Sequence[Sentence], *, policy: str, interactive: bool,
              progress: Callable[[str], None] | None = None) -> tuple[list[EditState], int]:
    """Every sentence's final :class:`EditState` (its tree equals gold) and the wrong arcs of
    the first parse; see :func:`simulate_edits`."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
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
        edited = []
        for index, state in enumerate(states):
            word = state.next_word(policy, weights)
            if word is not None:
                state.fix(word)
                edited.append(index)
        if not edited:
            return states, wrong_before
        step += 1
        if interactive:
            reparsed_members, reparsed = bundle.parse_constrained(
                [prepared[i] for i in edited], [states[i].constraints() for i in edited], names, tags="gold",
                previous=[states[i].tree for i in edited])
            for j, i in enumerate(edited):
                states[i].tree = reparsed[j]
                states[i].members = [reparsed_members[name][j] for name in names]
        if progress is not None:
            progress(f"step {step}: {len(edited)} sentences edited, {sum(s.edits for s in states)} edits")
