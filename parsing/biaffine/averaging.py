"""Weight averaging for the neural members: an exponential moving average of the trained weights
(Polyak averaging), read on dev and kept instead of the last step's weights.

Adam's last step leaves the weights where one noisy batch pushed them; their running average over
the last epoch or so sits nearer the middle of the valley, which on small training sets often
parses a little better and varies less from seed to seed. The horizon is set in epochs
(``average``: about how many epochs of updates the average spans), so one setting means the same
on a treebank of 400 sentences and of 4,000.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import torch


def check_average(epochs: float) -> None:
    """Refuse an ``average`` setting no fit can use (both neural members call this).

    Raises:
        ValueError: ``epochs`` is negative (or not a number).

    Examples:
        >>> check_average(-1)
        Traceback (most recent call last):
        ...
        ValueError: average is a number of epochs the weights are averaged over (0: none), got -1
    """
    if not epochs >= 0:
        raise ValueError(f"average is a number of epochs the weights are averaged over (0: none), "
                         f"got {epochs}")


def averaging_decay(epochs: float, steps_per_epoch: int) -> float:
    """The per-update decay of an average spanning about ``epochs`` epochs of ``steps_per_epoch``
    updates each: ``1 - 1 / (epochs * steps_per_epoch)`` (0 when that is at most one update).

    Examples:
        >>> averaging_decay(1.0, 100)
        0.99
        >>> averaging_decay(0.5, 2)
        0.0
    """
    span = epochs * steps_per_epoch
    return 1.0 - 1.0 / span if span > 1 else 0.0


class WeightAverage:
    """A running average of ``parameters`` (tensors updated in place by an optimizer).

    ``update()`` after each optimizer step moves the average a ``1 - decay`` part of the way to
    the current weights; ``applied()`` puts the average into the parameters for a block (dev
    scoring, keeping the best weights) and the trained weights back after it; ``restart()``
    starts the average again from the current weights (a new training phase).
    """

    def __init__(self, parameters: Iterable[torch.nn.Parameter], decay: float) -> None:
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"an average's decay is in [0, 1), got {decay}")
        self.parameters = list(parameters)
        self.decay = decay
        self.average = [parameter.detach().clone() for parameter in self.parameters]

    def update(self) -> None:
        """Move the average towards the current weights (after an optimizer step)."""
        with torch.no_grad():
            for average, parameter in zip(self.average, self.parameters, strict=True):
                average.lerp_(parameter.detach(), 1.0 - self.decay)

    def restart(self) -> None:
        """Start averaging again from the current weights."""
        with torch.no_grad():
            for average, parameter in zip(self.average, self.parameters, strict=True):
                average.copy_(parameter.detach())

    @contextmanager
    def applied(self) -> Iterator[None]:
        """The averaged weights in the parameters inside the block, the trained ones after it."""
        with torch.no_grad():
            trained = [parameter.detach().clone() for parameter in self.parameters]
            for parameter, average in zip(self.parameters, self.average, strict=True):
                parameter.copy_(average)
        try:
            yield
        finally:
            with torch.no_grad():
                for parameter, weights in zip(self.parameters, trained, strict=True):
                    parameter.copy_(weights)
