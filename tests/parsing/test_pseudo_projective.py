"""Pseudo-projective lifting (Nivre & Nilsson 2005) and its inverse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.transition.pseudo_projective import (
    LIFT,
    deprojectivize,
    is_projective,
    is_projective_arc,
    projectivize,
)


def random_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random tree: attach words in a random order to an already attached node."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1)
    attached = [0]
    for word in order:
        heads[word] = attached[int(rng.integers(len(attached)))] if len(attached) > 1 else 0
        attached.append(int(word))
    return heads


def test_lifting_makes_random_trees_projective() -> None:
    rng = np.random.default_rng(3)
    lifted_any = recovered = 0
    for _ in range(300):
        n = int(rng.integers(2, 14))
        heads = random_tree(n, rng)
        labels = ["", *(f"l{d}" for d in range(1, n + 1))]
        before = heads.copy()
        new_heads, new_labels = projectivize(heads, labels)
        assert is_projective(new_heads)
        assert all(is_projective_arc(new_heads, d) for d in range(1, n + 1))
        assert (heads == before).all() and labels[1] == "l1"  # inputs untouched
        changed = [d for d in range(1, n + 1) if new_heads[d] != heads[d]]
        assert all(LIFT in new_labels[d] for d in changed)
        lifted_any += bool(changed)
        back, back_labels = deprojectivize(new_heads, new_labels)
        assert back_labels == labels
        # labels are all distinct, but a syntactic head that was lifted out of the linear
        # head's subtree itself cannot be found: the encoding is lossy in such cases
        recovered += back.tolist() == heads.tolist()
    assert lifted_any > 100
    assert recovered / 300 >= 0.9


def test_projective_tree_is_unchanged() -> None:
    heads = np.array([-1, 2, 0, 2])
    new_heads, labels = projectivize(heads, ["", "a", "root", "b"])
    assert new_heads.tolist() == heads.tolist() and labels == ["", "a", "root", "b"]


def test_lifted_twice_keeps_the_syntactic_head_label() -> None:
    # ROOT → 3 → 5 → 4 → 1 and 3 → 2: 4 → 1 crosses 3's arc to 2, then 5 → 1 crosses ROOT → 3
    heads = np.array([-1, 4, 3, 0, 5, 3])
    labels = ["", "x", "a", "root", "b", "c"]
    new_heads, new_labels = projectivize(heads, labels)
    assert is_projective(new_heads)
    assert new_heads[1] == 3 and new_labels[1] == f"x{LIFT}b"
    back, back_labels = deprojectivize(new_heads, new_labels)
    assert back.tolist() == heads.tolist() and back_labels == labels


def test_deprojectivize_without_a_match_keeps_the_arc() -> None:
    heads, labels = deprojectivize(np.array([-1, 0, 1]), ["", "root", f"obj{LIFT}nowhere"])
    assert heads.tolist() == [-1, 0, 1] and labels == ["", "root", "obj"]


def test_round_trip_on_a_treebank(ud_root: Path) -> None:
    path = ud_root / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-train.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    sentences = load_sentences(path)
    recovered = non_projective = recovered_non_projective = 0
    for sentence in sentences:
        heads, labels = projectivize(sentence.heads, sentence.deprels)
        assert is_projective(heads)
        back, back_labels = deprojectivize(heads, labels)
        same = back.tolist() == sentence.heads.tolist() and back_labels == sentence.deprels
        recovered += same
        if not is_projective(sentence.heads):
            non_projective += 1
            recovered_non_projective += same
    assert non_projective > 50
    assert recovered / len(sentences) >= 0.95
    assert recovered_non_projective / non_projective >= 0.85  # measured: 95/105
