"""Pseudo-projective parsing (Nivre & Nilsson 2005), with the *Head* label encoding.

:func:`projectivize` lifts non-projective arcs, the shortest first, to the head's head
until the tree is projective. A lifted word's label ``r`` becomes ``r↑h`` where ``h`` is
the label of its syntactic head (lifting it again keeps that label). A projective parser
learns these labels; :func:`deprojectivize` then moves each ``r↑h`` word back under the
first node labelled ``h`` found breadth-first, left to right, among the descendants of its
head in the parse (outside its own subtree), and restores ``r``. When no such node exists
the word stays where it is. The encoding is lossy when several candidates carry ``h``.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from parsing.trees import is_projective
from parsing.types import Heads

LIFT = "↑"
"""Separates a lifted word's own label from its syntactic head's label."""


def _dominates(heads: Heads, head: int, word: int) -> bool:
    while word > 0 and word != head:
        word = int(heads[word])
    return word == head


def is_projective_arc(heads: Heads, dep: int) -> bool:
    """Whether the arc into ``dep`` is projective: its head dominates every word between."""
    head = int(heads[dep])
    low, high = min(head, dep), max(head, dep)
    return all(_dominates(heads, head, k) for k in range(low + 1, high))


def projectivize(heads: Heads, deprels: Sequence[str]) -> tuple[Heads, list[str]]:
    """A projective tree made by lifting arcs, with ``r↑h`` labels on lifted words.

    Returns new arrays; the inputs are not modified.

    Examples:
        >>> h, d = projectivize(np.array([-1, 3, 4, 0, 3]), ["", "a", "b", "root", "c"])
        >>> h.tolist(), d
        ([-1, 3, 3, 0, 3], ['', 'a', 'b↑c', 'root', 'c'])
    """
    lifted_heads = np.array(heads, dtype=np.intp, copy=True)
    labels = list(deprels)
    if is_projective(lifted_heads):
        return lifted_heads, labels
    n = len(heads) - 1
    while True:
        crossing = [d for d in range(1, n + 1) if not is_projective_arc(lifted_heads, d)]
        if not crossing:
            return lifted_heads, labels
        dep = min(crossing, key=lambda d: (abs(int(lifted_heads[d]) - d), d))
        if LIFT not in labels[dep]:
            labels[dep] = f"{deprels[dep]}{LIFT}{deprels[int(heads[dep])]}"
        lifted_heads[dep] = lifted_heads[int(lifted_heads[dep])]


def deprojectivize(heads: Heads, deprels: Sequence[str]) -> tuple[Heads, list[str]]:
    """Undo :func:`projectivize` on a parse: re-attach ``r↑h`` words and restore ``r``.

    Returns new arrays; the inputs are not modified.

    Examples:
        >>> h, d = deprojectivize(np.array([-1, 3, 3, 0, 3]), ["", "a", "b↑c", "root", "c"])
        >>> h.tolist(), d
        ([-1, 3, 4, 0, 3], ['', 'a', 'b', 'root', 'c'])
    """
    new_heads = np.array(heads, dtype=np.intp, copy=True)
    base = [label.split(LIFT, 1)[0] for label in deprels]
    if not any(LIFT in label for label in deprels):
        return new_heads, base
    n = len(heads) - 1
    children: list[list[int]] = [[] for _ in range(n + 1)]
    for dep in range(1, n + 1):
        if new_heads[dep] >= 0:
            children[int(new_heads[dep])].append(dep)
    top_down: list[int] = []
    queue = deque([0])
    while queue:
        node = queue.popleft()
        top_down.append(node)
        queue.extend(children[node])
    for dep in top_down:
        if LIFT not in deprels[dep]:
            continue
        wanted = deprels[dep].split(LIFT, 1)[1]
        head = int(new_heads[dep])
        search = deque(c for c in children[head] if c != dep)
        while search:
            node = search.popleft()
            if base[node] == wanted:
                children[head].remove(dep)
                children[node].append(dep)
                children[node].sort()
                new_heads[dep] = node
                break
            search.extend(c for c in children[node] if c != dep)
    return new_heads, base
