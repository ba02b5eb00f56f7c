"""A joint neural tagger-parser member (issue #33): character and word embeddings, a BiLSTM over
the sentence, biaffine arc and label scoring (Dozat & Manning 2017) and UPOS, XPOS, FEATS and
lemma-script classifiers trained jointly with the parser (as UDPipe 2 does: Straka 2018).

Modules:

* :mod:`parsing.biaffine.vocab`: vocabularies and lemma edit scripts (no torch);
* :mod:`parsing.biaffine.batching`: sentences → padded index tensors;
* :mod:`parsing.biaffine.network`: the ``torch.nn.Module``;
* :mod:`parsing.biaffine.training`: Adam, early stopping on dev LAS, the wall-clock budget;
* :mod:`parsing.biaffine.member`: :class:`~parsing.biaffine.member.BiaffineParser`, the member;
* :mod:`parsing.biaffine.vectors`: pretrained word vectors from a ``.vec`` file (setting
  ``vectors=PATH``; no torch);
* :mod:`parsing.biaffine.contextual`: a local pretrained encoder directory (setting
  ``encoder=DIRECTORY``; needs ``transformers``).

PyTorch is an optional dependency (``pip install torch==2.13.0`` or ``pip install -e '.[neural]'``):
this package imports it only where a network is built, and the library imports without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parsing.types import Sentence

TORCH_HINT = ("the {member} member needs PyTorch: pip install torch==2.13.0 "
              "(or pip install -e '.[neural]'; the exact pin gets the CPU wheel)")


TRANSFORMERS_HINT = ("the biaffine member's encoder setting needs the transformers package: "
                     "pip install transformers (it uses the torch already installed; loading the encoder "
                     "downloads nothing, so the directory must hold the model and its tokenizer)")


def require_transformers() -> object:
    """The ``transformers`` module.

    Raises:
        ImportError: it is not installed, with :data:`TRANSFORMERS_HINT` saying what to install.
    """
    import importlib

    try:
        return importlib.import_module("transformers")
    except ImportError as error:
        raise ImportError(TRANSFORMERS_HINT) from error


def require_torch(member: str = "biaffine") -> None:
    """Check PyTorch can be imported for ``member``.

    Raises:
        ImportError: it cannot, with :data:`TORCH_HINT` saying how to install it.
    """
    try:
        import torch  # noqa: F401
    except ImportError as error:
        raise ImportError(TORCH_HINT.format(member=member)) from error


def held_out_split(train: Sequence[Sentence], dev: Sequence[Sentence] | None,
                   seed: int) -> tuple[list[Sentence], list[Sentence]]:
    """``(training sentences, early-stopping sentences)`` of a neural member: ``dev``'s complete
    trees when it has any, else a seeded tenth of ``train`` held out (all of it when it has one
    sentence).

    Examples:
        >>> train = [Sentence.from_words(["a"], heads=[0], deprels=["root"], sent_id=str(i))
        ...          for i in range(20)]
        >>> fitted, held = held_out_split(train, None, 0)
        >>> len(fitted), len(held), {s.sent_id for s in fitted} & {s.sent_id for s in held}
        (18, 2, set())
    """
    held = [s for s in (dev or []) if len(s) > 0 and s.has_tree]
    if held:
        return list(train), held
    order = np.random.default_rng(seed).permutation(len(train))
    cut = max(1, len(train) // 10) if len(train) > 1 else 0
    return [train[i] for i in order[cut:]] or list(train), [train[i] for i in order[:cut]] or list(train)
