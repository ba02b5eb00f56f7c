"""The contract every dependency parser (ensemble member or ensemble) follows.

scikit-learn's estimator contract: hyperparameters are stored unchanged in ``__init__``
(so ``sklearn.base.clone`` and ``get_params`` work), ``fit`` returns ``self``, learned
state ends in ``_``, randomness comes from ``random_state``.

Conventions: index 0 is ROOT; ``Parse.heads`` has shape ``(n+1,)`` with ``heads[0] == -1``;
``Parse.arc_scores[d]`` is the parser's score or probability for the arc it chose for ``d``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Self

from sklearn.base import BaseEstimator

from parsing.constraints import Constraints
from parsing.persist import load_model, save_model
from parsing.types import Parse, Sentence


class BaseParser(BaseEstimator, ABC):  # type: ignore[misc]
    """A trainable labelled dependency parser.

    Subclasses set ``name`` (short, used on the command line and in file names) and
    ``description`` (one line for ``python -m parsing list-parsers``).
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parse_cost: ClassVar[float] = 1.0
    """Parse time per word relative to a transition member (measured on Irish test), so forked
    parsing (:mod:`parsing.forked`) starts the slow members first and the processes end together."""
    gives_arc_probabilities: ClassVar[bool] = False
    """Whether ``Parse.arc_scores`` holds the probability of each chosen head (a softmax over the
    word's candidate heads), not a raw score: the arc error detector reads it as a feature
    (:func:`parsing.detect.features.confidence_features`)."""

    @abstractmethod
    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Learn from sentences with gold trees; ``dev`` may pick the number of epochs."""

    @abstractmethod
    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Parse sentences (their gold heads, if any, are ignored); one :class:`Parse` each,
        with ``arc_scores`` filled in."""

    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """Parse ``sentences`` keeping every forced arc (and forced label) of ``constraints``
        (one :class:`~parsing.constraints.Constraints` per sentence): each parse is a tree
        with one ROOT child containing them. ``free``: this parser's unconstrained parses of the
        same sentences when the caller has them (members that start from them skip parsing
        again; the others ignore it). Members that support it override this.

        Raises:
            NotImplementedError: the parser has no constrained decoding.
        """
        raise NotImplementedError(f"{type(self).__name__} ({self.name}) cannot parse under constraints")

    @property
    def reads_constraints(self) -> bool:
        """Whether :meth:`predict_constrained` reads the forced arcs as inputs (not only keeps
        them), so its other arcs may change under constraints its free parse already satisfied
        (the ``biaffine`` member with ``reveal``). A re-parse then always asks it again."""
        return False

    def save(self, path: str | Path) -> None:
        """Write the fitted parser to ``path`` (arrays plus JSON: :mod:`parsing.persist`)."""
        save_model(self, path)

    @classmethod
    def load(cls, path: str | Path, *, warm: bool = False) -> Self:
        """Read a parser written by :meth:`save` (with its warm-start state if ``warm``:
        :func:`parsing.persist.load_model`)."""
        model: Self = load_model(path, cls, warm=warm)
        return model
