"""Online learning shared by the parsers: averaged perceptron weights.

Averaging (Collins 2002; Freund & Schapire 1999) uses the lazy trick of Daumé (2006):
alongside the weights ``w`` keep ``u``, the sum of every update scaled by the step at which
it happened (steps count from 1); after ``T`` instances the average of the weight vectors
``w_1 .. w_T`` seen after each instance is ``((T + 1) w - u) / T``. Updates are vectorised
with ``np.add.at`` so a structured update (gold features ``+1``, predicted features ``-1``)
is one call, never a Python loop per feature.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class AveragedPerceptron:
    """Weights of shape ``shape`` (``(n_features,)`` for structured scoring,
    ``(n_features, n_classes)`` for a multiclass classifier), with lazy averaging.

    Examples:
        >>> model = AveragedPerceptron((4,))
        >>> model.update(np.array([1, 1, 2]), np.array([1.0, 1.0, -1.0]))
        >>> model.tick(); model.update(np.array([3]), np.array([1.0])); model.tick()
        >>> model.weights.tolist(), model.averaged().tolist()
        ([0.0, 2.0, -1.0, 1.0], [0.0, 2.0, -1.0, 0.5])
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.weights: NDArray[np.float64] = np.zeros(shape)
        self._timed_updates: NDArray[np.float64] = np.zeros(shape)
        self.step = 1

    @classmethod
    def resume(
        cls, weights: NDArray[np.floating], averaged: NDArray[np.floating], step: int
    ) -> AveragedPerceptron:
        """A model that continues a run from its saved state: the raw ``weights``, their
        ``averaged`` value and the ``step`` counter (``instances + 1``), arrays of one shape.

        The running sum of timed updates is rebuilt as ``step * weights - (step - 1) * averaged``
        (so :meth:`averaged` gives ``averaged`` back and further updates average on correctly);
        ``step=1`` with ``weights=averaged`` starts a new average from those weights.

        Examples:
            >>> model = AveragedPerceptron((2,))
            >>> model.update(np.array([0]), 2.0); model.tick(); model.tick()
            >>> again = AveragedPerceptron.resume(model.weights, model.averaged(), model.step)
            >>> again.update(np.array([1]), 1.0); again.tick()
            >>> model.update(np.array([1]), 1.0); model.tick()
            >>> again.averaged().tolist() == model.averaged().tolist()
            True
        """
        model = cls(weights.shape)
        model.weights = np.asarray(weights, dtype=np.float64).copy()
        model.step = int(step)
        model._timed_updates = model.step * model.weights - (model.step - 1) * np.asarray(
            averaged, dtype=np.float64
        )
        return model

    def update(
        self, index: NDArray[np.int64] | tuple[NDArray[np.int64], ...], delta: NDArray[np.float64] | float
    ) -> None:
        """Add ``delta`` at ``index`` (repeated indices accumulate)."""
        np.add.at(self.weights, index, delta)
        np.add.at(self._timed_updates, index, np.multiply(delta, self.step))

    def tick(self) -> None:
        """Count one training instance (call after each sentence or decision)."""
        self.step += 1

    def averaged(self) -> NDArray[np.float64]:
        """The average of the weight vectors after each instance so far (a new array)."""
        instances = self.step - 1
        if instances == 0:
            return self.weights.copy()
        return (self.step * self.weights - self._timed_updates) / instances
