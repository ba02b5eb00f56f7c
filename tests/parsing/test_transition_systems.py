"""Transition systems and their oracles: gold-tree reproduction, exact dynamic-oracle costs
against a brute-force search, explicit action replays, and real treebank sentences."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from parsing.conllu_io import load_sentences
from parsing.transition.arc_swap import SwapGold, static_oracle
from parsing.transition.pseudo_projective import projectivize
from parsing.transition.state import NONE, Action, State, TransitionSystem
from parsing.transition.systems import SYSTEMS, ArcEager, ArcHybrid, ArcSwap, get_system
from parsing.trees import is_projective
from parsing.types import Sentence

S, D, L, R, W = Action.SHIFT, Action.REDUCE, Action.LEFT_ARC, Action.RIGHT_ARC, Action.SWAP

# "Economic news had little effect on financial markets ." (Nivre 2008)
PROJECTIVE = np.array([-1, 2, 3, 0, 5, 3, 5, 8, 6, 3])
# "A hearing is scheduled on the issue today ." (Nivre 2009): hearing → on crosses is → scheduled
NON_PROJECTIVE = np.array([-1, 2, 3, 0, 3, 2, 7, 5, 4, 3])


def heads_of(values: list[int]) -> NDArray[np.intp]:
    return np.array([-1, *values], dtype=np.intp)


def run_oracle(system: TransitionSystem, gold: NDArray[np.intp]) -> tuple[State, list[Action]]:
    """Follow the zero-cost (or static) oracle from the initial state."""
    state = system.initial(len(gold) - 1)
    swap_gold = SwapGold.build(gold) if not system.dynamic else None
    actions = []
    while not system.is_terminal(state):
        if swap_gold is not None:
            action = static_oracle(state, swap_gold)
        else:
            zero = [a for a in system.valid_actions(state) if system.cost(state, a, gold) == 0]
            assert zero, "an exact dynamic oracle always has a zero-cost action"
            action = zero[0]
        assert system.is_valid(state, action)
        actions.append(action)
        system.apply(state, action, 0)
    return state, actions


def final_heads(system: TransitionSystem, state: State) -> NDArray[np.intp]:
    heads = state.heads.copy()
    if isinstance(system, ArcEager):  # words left headless on the stack are roots
        heads[1:][heads[1:] == NONE] = 0
    return heads


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_oracle_reproduces_a_projective_tree(name: str) -> None:
    system = get_system(name)
    state, _ = run_oracle(system, PROJECTIVE)
    assert final_heads(system, state).tolist() == PROJECTIVE.tolist()


def test_swap_oracle_reproduces_a_non_projective_tree_swapping_lazily() -> None:
    assert not is_projective(NON_PROJECTIVE)
    system = ArcSwap()
    state, actions = run_oracle(system, NON_PROJECTIVE)
    assert state.heads.tolist() == NON_PROJECTIVE.tolist()
    # "on the issue" is completed before "scheduled" and "is" are swapped behind it.
    first_swap = actions.index(W)
    assert actions[first_swap : first_swap + 3] == [W, W, R]
    assert actions.count(W) == 2


def test_swap_oracle_on_a_crossing_chain() -> None:
    gold = heads_of([3, 4, 0, 3])  # 1 ← 3 and 2 ← 4 cross
    state, _ = run_oracle(ArcSwap(), gold)
    assert state.heads.tolist() == gold.tolist()


def test_unknown_system() -> None:
    with pytest.raises(ValueError, match="unknown transition system"):
        get_system("arc-sideways")


# --------------------------------------------------------------- explicit replays


def replay(
    system: TransitionSystem, gold: NDArray[np.intp], steps: list[tuple[Action, set[Action]]]
) -> State:
    """Apply each action after checking that the gold (zero-cost) set is as expected."""
    state = system.initial(len(gold) - 1)
    for action, expected in steps:
        zero = {a for a in system.valid_actions(state) if system.cost(state, a, gold) == 0}
        assert zero == expected, (action, zero, expected)
        system.apply(state, action, 0)
    return state


def test_arc_eager_gold_sets_along_a_sequence_with_a_mistake() -> None:
    # she(1) ← ate(2) → pizza(4); a(3) ← pizza; ate is the root
    gold = heads_of([2, 0, 4, 2])
    state = replay(
        ArcEager(),
        gold,
        [
            (S, {S}),  # she must wait for ate
            (L, {L}),  # she ← ate
            (R, {R}),  # ROOT → ate
            (R, {S}),  # mistake: ate → a (a's head is pizza): costs 1
            (D, {D}),  # a already has a head: only REDUCE pops it
            (R, {R}),  # ate → pizza
        ],
    )
    assert state.heads.tolist() == [-1, 2, 0, 2, 2]
    assert ArcEager().is_terminal(state)


def test_arc_hybrid_gold_sets_along_a_sequence() -> None:
    gold = heads_of([2, 0, 4, 2])
    state = replay(
        ArcHybrid(),
        gold,
        [
            (S, {S}),
            (L, {L}),  # she ← ate
            (S, {S}),  # ate must stay until pizza is done
            (S, {S}),
            (L, {L}),  # a ← pizza
            (S, {S}),
            (R, {R}),  # ate → pizza
            (R, {R}),  # ROOT → ate
        ],
    )
    assert state.heads.tolist() == gold.tolist()


def test_arc_hybrid_costs_after_a_wrong_shift() -> None:
    gold = heads_of([2, 0, 4, 2])
    system = ArcHybrid()
    state = system.initial(4)
    system.apply(state, S, 0)
    system.apply(state, S, 0)  # mistake: she ← ate is lost
    assert system.cost(state, S, gold) == 0
    assert system.cost(state, L, gold) == 1  # ate ← a would lose ate → pizza
    assert system.cost(state, R, gold) == 1  # she → ate would lose ate → pizza too


def test_swap_actions_sequence() -> None:
    gold = heads_of([3, 4, 0, 3])
    _, actions = run_oracle(ArcSwap(), gold)
    # projective order 1 3 2 4: word 2 goes back behind 3, then 1 ← 3, 2 ← 4, 3 → 4, ROOT → 3
    assert actions == [S, S, S, W, L, S, S, L, R, R]


# --------------------------------------------------------------- brute force


def all_projective_trees(n: int) -> list[NDArray[np.intp]]:
    trees = []
    for values in itertools.product(range(n + 1), repeat=n):
        heads = heads_of(list(values))
        if sum(1 for h in values if h == 0) != 1 or any(values[d - 1] == d for d in range(1, n + 1)):
            continue
        if _is_tree(heads) and is_projective(heads):
            trees.append(heads)
    return trees


def _is_tree(heads: NDArray[np.intp]) -> bool:
    for d in range(1, len(heads)):
        seen, node = set(), d
        while node != 0:
            if node in seen:
                return False
            seen.add(node)
            node = int(heads[node])
    return True


def best_reachable(
    system: TransitionSystem, gold: NDArray[np.intp], memo: dict[tuple[object, ...], int]
) -> Callable[[State], int]:
    """Brute force: the most gold arcs any action sequence from a state can still build."""

    def key(state: State) -> tuple[object, ...]:
        return (tuple(state.stack), state.buffer, tuple(state.returned), tuple(state.heads.tolist()))

    def search(state: State) -> int:
        k = key(state)
        if k in memo:
            return memo[k]
        if system.is_terminal(state):
            value = int(np.sum(state.heads[1:] == gold[1:]))
        else:
            value = 0
            for action in system.valid_actions(state):
                after = state.copy()
                system.apply(after, action, 0)
                value = max(value, search(after))
        memo[k] = value
        return value

    return search


def small_trees() -> list[NDArray[np.intp]]:
    rng = np.random.default_rng(7)
    trees = [t for n in range(1, 5) for t in all_projective_trees(n)]
    for n in (5, 6):
        pool = all_projective_trees(n) if n == 5 else _sample_projective(6, 30, rng)
        trees.extend(pool[i] for i in rng.choice(len(pool), size=min(15, len(pool)), replace=False))
    return trees


def _sample_projective(n: int, count: int, rng: np.random.Generator) -> list[NDArray[np.intp]]:
    found: list[NDArray[np.intp]] = []
    while len(found) < count:
        values = [int(v) for v in rng.integers(0, n + 1, size=n)]
        heads = heads_of(values)
        if (
            values.count(0) == 1
            and all(values[d - 1] != d for d in range(1, n + 1))
            and _is_tree(heads)
            and is_projective(heads)
        ):
            found.append(heads)
    return found


@pytest.mark.parametrize("system", [ArcEager(), ArcHybrid()], ids=["arc-eager", "arc-hybrid"])
def test_dynamic_oracle_costs_equal_brute_force_losses(system: TransitionSystem) -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for gold in small_trees():
        memo: dict[tuple[object, ...], int] = {}
        search = best_reachable(system, gold, memo)
        for _ in range(2):  # random action prefixes, checking every state on the way
            state = system.initial(len(gold) - 1)
            while not system.is_terminal(state):
                best = search(state)
                valid = system.valid_actions(state)
                for action in valid:
                    after = state.copy()
                    system.apply(after, action, 0)
                    assert system.cost(state, action, gold) == best - search(after), (gold, state, action)
                    checked += 1
                system.apply(state, valid[int(rng.integers(len(valid)))], 0)
    assert checked > 1500


# --------------------------------------------------------------- real data


def _treebank(ud_root: Path) -> list[Sentence]:
    path = ud_root / "UD_Telugu-MTG" / "te_mtg-ud-train.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return load_sentences(path)[:300]


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_oracle_reproduces_real_trees(ud_root: Path, name: str) -> None:
    system = get_system(name)
    for sentence in _treebank(ud_root):
        gold = sentence.heads if not system.dynamic else projectivize(sentence.heads, sentence.deprels)[0]
        state, _ = run_oracle(system, gold)
        assert final_heads(system, state).tolist() == gold.tolist()


def test_swap_oracle_reproduces_non_projective_tamil_trees(ud_root: Path) -> None:
    path = ud_root / "UD_Tamil-TTB" / "ta_ttb-ud-train.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    sentences = load_sentences(path)
    non_projective = [s for s in sentences if not is_projective(s.heads)]
    assert non_projective
    for sentence in non_projective:
        state, _ = run_oracle(ArcSwap(), sentence.heads)
        assert state.heads.tolist() == sentence.heads.tolist()
