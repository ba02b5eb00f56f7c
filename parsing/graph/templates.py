"""Feature templates of the graph-based parsers, built for every arc of a sentence at once.

A sentence is first turned into a small integer table by :class:`TokenEncoder` (one row per
token field, one column per position ``0..n``). A template is a readable name listing the
fields it conjoins, prefixed by the role of the word they come from: ``"hp dw"`` is the head's
UPOS with the dependent's word, ``"hp- hp dp dp+"`` the 4-gram of McDonald, Crammer &
Pereira (2005). Fields:

* ``w`` lowercased form (rare forms are unknown), ``l`` lemma, ``p`` UPOS, ``x`` XPOS,
  ``f`` the whole FEATS string, ``c`` the value of its ``Case`` feature, ``s`` the last
  :data:`SUFFIX_LENGTH` characters of the lowercased form;
* ``p-`` / ``p+`` the UPOS of the previous / next token (boundary markers at the edges).

Every template is hashed twice (as in MSTParser): alone, and conjoined with the signed,
bucketed distance ``head - dep`` (which also gives the direction). The in-between feature
(head UPOS, UPOS of a word strictly between head and dependent, dependent UPOS) is added once
per UPOS present in the sentence, switched off (index :func:`null_index`) for arcs with no
such word in between; presence comes from cumulative counts per tag, so no loop over arcs.

Vectorisation: each template's head-side and dependent-side fields are hashed per token
(shape ``(K, n+1)``, :func:`~parsing.features.hash_columns` with a salt per role), then the
two sides are XORed with broadcasting into ``(n+1, n+1, K)``.
Indices lie in ``[0, 2**n_bits]``; ``2**n_bits`` is the null feature, whose weight stays 0.

Conventions: index 0 is ROOT; arrays over arcs are indexed ``[dep, head]`` like
``scores[dep, head]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.features import Vocabulary, bucket_distance, hash_columns
from parsing.types import Sentence

IntArray = NDArray[np.int64]

SUFFIX_LENGTH = 3
"""Characters of the word's end used by the ``s`` field."""

FIELDS = ("w", "l", "p", "x", "f", "c", "s", "p-", "p+")
"""Token fields templates may name (see the module docstring)."""

_PAD = len(FIELDS)  # row of zeros in the token table, pads short templates
_BOUNDARY_BEFORE, _BOUNDARY_AFTER = -1, -2  # UPOS "ids" before position 0 and after n
_FULL_BITS = 63  # intermediate hashes keep 63 bits, masked only at the end

ARC_TEMPLATES = (
    "",
    "hw hp", "hw", "hp", "dw dp", "dw", "dp",
    "hw hp dw dp", "hp dw dp", "hw dw dp", "hw hp dp", "hw hp dw", "hw dw", "hp dp",
    "hl dl", "hl dp", "hp dl", "hl hp", "dl dp",
    "hx dx", "hx dp", "hp dx",
    "hf df", "hp hf dp", "hp dp df", "hp hf dp df", "hp dc", "hc dp", "hp hc dp dc",
    "hs dp", "hp ds", "hs ds", "hp hs dp ds", "ds dp", "hs hp",
    "hp hp+ dp- dp", "hp- hp dp- dp", "hp hp+ dp dp+", "hp- hp dp dp+",
    "hp- hp dp", "hp hp+ dp", "hp dp- dp", "hp dp dp+",
)  # fmt: skip
"""First-order templates over head (``h``) and dependent (``d``) fields."""

SIBLING_TEMPLATES = (
    "", "sp mp", "sw mw", "sw mp", "sp mw", "hp sp mp", "hw sp mp", "hp sw mp", "hp sp mw",
    "sp mp mc", "sc mc", "hp sc mc", "ss ms", "hp ss mp",
)  # fmt: skip
"""Second-order templates over head (``h``), previous sibling (``s``) and modifier (``m``)
fields; the sibling of a head's first modifier on a side is a special "none" token."""


def _compile(templates: Sequence[str], roles: str) -> NDArray[np.intp]:
    """Rows of the token table each template reads, per role: shape ``(len(roles), K, width)``."""
    width = max(1, max(len(t.split()) for t in templates))
    spec = np.full((len(roles), len(templates), width), _PAD, dtype=np.intp)
    for k, template in enumerate(templates):
        used = [0] * len(roles)
        for item in template.split():
            role, name = roles.index(item[0]), item[1:]
            spec[role, k, used[role]] = FIELDS.index(name)
            used[role] += 1
    return spec


_ARC_SPEC = _compile(ARC_TEMPLATES, "hd")
_SIBLING_SPEC = _compile(SIBLING_TEMPLATES, "hsm")


def null_index(n_bits: int) -> int:
    """Index of the always-off feature: weight vectors have ``2**n_bits + 1`` entries."""
    return 1 << n_bits


def _case(feats: str) -> str:
    for item in feats.split("|"):
        if item.startswith("Case="):
            return item[5:]
    return "_"


@dataclass(slots=True)
class TokenEncoder:
    """Frozen vocabularies mapping a sentence's columns to the integer token table.

    Examples:
        >>> s = Sentence.from_words(["Dogs", "bark"], upos=["NOUN", "VERB"], heads=[2, 0])
        >>> encoder = TokenEncoder.build([s], min_count=1)
        >>> encoder.encode(s).shape
        (10, 3)
    """

    words: Vocabulary
    lemmas: Vocabulary
    upos: Vocabulary
    xpos: Vocabulary
    feats: Vocabulary
    cases: Vocabulary
    suffixes: Vocabulary

    @classmethod
    def build(cls, sentences: Iterable[Sentence], *, min_count: int = 2) -> TokenEncoder:
        """Vocabularies of the training sentences; forms and lemmas seen fewer than
        ``min_count`` times stay unknown, so the unknown-word features get trained."""
        sentences = list(sentences)

        def column(values: Iterable[str], min_count: int) -> Vocabulary:
            return Vocabulary.build(values, min_count=min_count)

        return cls(
            words=column((f.lower() for s in sentences for f in s.forms), min_count),
            lemmas=column((v for s in sentences for v in s.lemmas), min_count),
            upos=column((v for s in sentences for v in s.upos), 1),
            xpos=column((v for s in sentences for v in s.xpos), 1),
            feats=column((v for s in sentences for v in s.feats), 1),
            cases=column((_case(v) for s in sentences for v in s.feats), 1),
            suffixes=column((f.lower()[-SUFFIX_LENGTH:] for s in sentences for f in s.forms), 1),
        )

    def extended(self, sentences: Iterable[Sentence], *, min_count: int = 2) -> TokenEncoder:
        """This encoder with the new values of ``sentences`` appended to every vocabulary
        (the same ``min_count`` rule as :meth:`build`); known values keep their ids, so
        weights learned with this encoder stay valid (warm starts)."""
        sentences = list(sentences)
        return TokenEncoder(
            words=self.words.extended((f.lower() for s in sentences for f in s.forms), min_count=min_count),
            lemmas=self.lemmas.extended((v for s in sentences for v in s.lemmas), min_count=min_count),
            upos=self.upos.extended(v for s in sentences for v in s.upos),
            xpos=self.xpos.extended(v for s in sentences for v in s.xpos),
            feats=self.feats.extended(v for s in sentences for v in s.feats),
            cases=self.cases.extended(_case(v) for s in sentences for v in s.feats),
            suffixes=self.suffixes.extended(f.lower()[-SUFFIX_LENGTH:] for s in sentences for f in s.forms),
        )

    def encode(self, sentence: Sentence) -> IntArray:
        """The token table: shape ``(len(FIELDS) + 1, n+1)``, rows in :data:`FIELDS` order
        and a last row of zeros."""
        lowered = [form.lower() for form in sentence.forms]
        upos = self.upos.ids(sentence.upos)
        before = np.concatenate([[_BOUNDARY_BEFORE], upos[:-1]])
        after = np.concatenate([upos[1:], [_BOUNDARY_AFTER]])
        return np.stack([
            self.words.ids(lowered),
            self.lemmas.ids(sentence.lemmas),
            upos,
            self.xpos.ids(sentence.xpos),
            self.feats.ids(sentence.feats),
            self.cases.ids([_case(v) for v in sentence.feats]),
            self.suffixes.ids([form[-SUFFIX_LENGTH:] for form in lowered]),
            before,
            after,
            np.zeros(len(upos), dtype=np.int64),
        ])  # fmt: skip


def role_hashes(tokens: IntArray, spec: NDArray[np.intp], salt: int) -> IntArray:
    """Hash of each template's fields for one role at every position: ``(K, n+1)``."""
    templates = np.arange(spec.shape[0], dtype=np.int64)[:, None]
    columns = [tokens[spec[:, j]] for j in range(spec.shape[1])]  # each (K, n+1)
    return hash_columns(salt, templates, *columns, n_bits=_FULL_BITS)


def _between_tags(tokens: IntArray) -> IntArray:
    """UPOS ids of the sentence's words (ROOT excluded), each once: the in-between slots."""
    return np.unique(tokens[FIELDS.index("p"), 1:])


def n_arc_features(tokens: IntArray) -> int:
    """Features per arc for this sentence: ``2 * (len(ARC_TEMPLATES) + distinct UPOS)``."""
    return 2 * (len(ARC_TEMPLATES) + len(_between_tags(tokens)))


def arc_features(tokens: IntArray, *, n_bits: int) -> IntArray:
    """Feature indices of every arc of a sentence.

    The roles' per-token hashes (full 63-bit :func:`~parsing.features.hash_columns` values,
    independently salted) are combined by XOR, which keeps them uniformly spread and costs
    one pass over the ``(n+1, n+1, K)`` array; the distance conjunction XORs in a hash of
    the distance bucket. Only then are indices cut to ``n_bits``.

    Args:
        tokens: the sentence's token table from :meth:`TokenEncoder.encode`, ``(F, n+1)``.
        n_bits: weight vectors have ``2**n_bits + 1`` entries (the last is the null feature).

    Returns:
        Shape ``(n+1, n+1, K)`` with ``K = n_arc_features(tokens)``, indexed ``[dep, head]``:
        the ``len(ARC_TEMPLATES)`` templates, the in-between slots, then all of them again
        conjoined with the distance. Row 0 and the diagonal hold features too; the scorer
        masks them.
    """
    size = tokens.shape[1]
    position = np.arange(size, dtype=np.int64)
    head_hash = role_hashes(tokens, _ARC_SPEC[0], 1)  # (K, n+1)
    dep_hash = role_hashes(tokens, _ARC_SPEC[1], 2)
    # in-between: (head UPOS, tag, dep UPOS) when some word strictly between has that tag
    upos = tokens[FIELDS.index("p")]
    tags = _between_tags(tokens)
    counts = np.vstack([np.zeros(len(tags), np.int64), np.cumsum(upos[:, None] == tags, axis=0)])
    low = np.minimum(position[:, None], position[None, :])
    high = np.maximum(position[:, None], position[None, :])
    absent = (counts[high] - counts[np.minimum(low + 1, high)]) == 0  # (dep, head, T)
    between = (hash_columns(4, upos, n_bits=_FULL_BITS)[None, :, None]
               ^ hash_columns(5, tags, n_bits=_FULL_BITS)[None, None, :]
               ^ hash_columns(6, upos, n_bits=_FULL_BITS)[:, None, None])  # fmt: skip
    base = np.concatenate([head_hash.T[None, :, :] ^ dep_hash.T[:, None, :], between], axis=-1)
    distance = hash_columns(3, bucket_distance(position[None, :] - position[:, None]), n_bits=_FULL_BITS)
    features = np.concatenate([base, base ^ distance[:, :, None]], axis=-1)
    features &= np.int64((1 << n_bits) - 1)
    width = base.shape[-1]
    for start in (len(ARC_TEMPLATES), width + len(ARC_TEMPLATES)):
        features[:, :, start : start + len(tags)][absent] = null_index(n_bits)
    return features


def single_arc_features(tokens: IntArray, dep: int, head: int, *, n_bits: int) -> IntArray:
    """The features of one arc, computed template by template from scalars (a reference for
    :func:`arc_features`, which must agree with it): shape ``(K,)``."""
    hashed: list[int] = []
    for k in range(len(ARC_TEMPLATES)):
        head_fields = [int(tokens[row, head]) for row in _ARC_SPEC[0, k]]
        dep_fields = [int(tokens[row, dep]) for row in _ARC_SPEC[1, k]]
        head_hash = int(hash_columns(1, k, *head_fields, n_bits=_FULL_BITS))
        dep_hash = int(hash_columns(2, k, *dep_fields, n_bits=_FULL_BITS))
        hashed.append(head_hash ^ dep_hash)
    upos = tokens[FIELDS.index("p")]
    inside = set(upos[min(dep, head) + 1 : max(dep, head)].tolist())
    tags = _between_tags(tokens).tolist()
    for tag in tags:
        hashed.append(int(hash_columns(4, int(upos[head]), n_bits=_FULL_BITS))
                      ^ int(hash_columns(5, tag, n_bits=_FULL_BITS))
                      ^ int(hash_columns(6, int(upos[dep]), n_bits=_FULL_BITS)))  # fmt: skip
    distance = int(hash_columns(3, int(bucket_distance(np.array([head - dep]))[0]), n_bits=_FULL_BITS))
    on = [True] * len(ARC_TEMPLATES) + [tag in inside for tag in tags]
    mask = (1 << n_bits) - 1
    plain = [value & mask if keep else null_index(n_bits) for value, keep in zip(hashed, on, strict=True)]
    joined = [(value ^ distance) & mask if keep else null_index(n_bits)
              for value, keep in zip(hashed, on, strict=True)]  # fmt: skip
    return np.array(plain + joined, dtype=np.int64)


def n_sibling_features() -> int:
    """Features per sibling part: ``2 * len(SIBLING_TEMPLATES)``."""
    return 2 * len(SIBLING_TEMPLATES)


def sibling_features(
    tokens: IntArray, head: NDArray[np.intp], sibling: NDArray[np.intp], child: NDArray[np.intp],
    *, n_bits: int,
) -> IntArray:
    """Feature indices of sibling parts ``(head, sibling, child)``, given as parallel arrays.

    ``sibling`` is the child of ``head`` attached just before ``child`` on the same side
    (between them); ``sibling == head`` stands for "``child`` is the first on its side" and
    reads a special "none" token. Features are conjoined with the direction of ``child``
    from ``head`` and the bucketed distance ``child - sibling``.

    Args:
        tokens: the token table, ``(F, n+1)``.
        head, sibling, child: positions, shape ``(T,)`` each.
        n_bits: as for :func:`arc_features`.

    Returns:
        Shape ``(T, 2 * len(SIBLING_TEMPLATES))``.
    """
    head_hash = role_hashes(tokens, _SIBLING_SPEC[0], 5)  # (K, n+1)
    sib_hash = role_hashes(tokens, _SIBLING_SPEC[1], 6)
    none_hash = role_hashes(np.full((tokens.shape[0], 1), -3, np.int64), _SIBLING_SPEC[1], 6)  # (K, 1)
    child_hash = role_hashes(tokens, _SIBLING_SPEC[2], 7)
    sib_side = np.where(sibling == head, none_hash, sib_hash[:, sibling])  # (K, T)
    base = (head_hash[:, head] ^ sib_side ^ child_hash[:, child]).T
    direction = np.sign(child - head).astype(np.int64)
    gap = bucket_distance((child - sibling).astype(np.int64))
    joined = base ^ hash_columns(3, direction * 16 + gap, n_bits=_FULL_BITS)[:, None]
    return np.concatenate([base, joined], axis=-1) & np.int64((1 << n_bits) - 1)
