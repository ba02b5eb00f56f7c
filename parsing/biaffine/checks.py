"""The ``biaffine`` member's settings checked before a fit: each refusal names the setting and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parsing.biaffine.averaging import check_average


def check_settings(params: Mapping[str, Any], reveal_orders: tuple[str, ...]) -> None:
    """Refuse settings no fit can use (``params``: the member's ``get_params()``;
    ``reveal_orders``: the accepted ``reveal_order`` values).

    Raises:
        ValueError: naming the first setting out of its range.

    Examples:
        >>> check_settings({"reveal": 1.5}, ("random",))
        Traceback (most recent call last):
        ...
        ValueError: reveal is a rate of revealed arcs in [0, 1], got 1.5
    """
    p = {"reveal": 0.0, "reveal_errors": 0.0, "reveal_order": reveal_orders[0], "anneal": 0,
         "morphology_weight": 1.0, "warm_epochs": 1, "warm_rate": 1.0, "batch_words": 0, "reveal_dim": 1,
         "feats": "whole", "average": 0.0, "label_smoothing": 0.0, **params}
    for name in ("reveal", "reveal_errors"):
        if not 0.0 <= p[name] <= 1.0:
            raise ValueError(f"{name} is a rate of revealed arcs in [0, 1], got {p[name]}")
    if p["reveal_order"] not in reveal_orders:
        raise ValueError(f"reveal_order is one of {', '.join(reveal_orders)}, got {p['reveal_order']!r}")
    if p["anneal"] < 0:
        raise ValueError(f"anneal is a number of epochs (0: none), got {p['anneal']}")
    if not p["morphology_weight"] >= 0.0:
        raise ValueError(f"morphology_weight is a loss weight (at least 0), got {p['morphology_weight']}")
    if p["warm_epochs"] < 1:
        raise ValueError(f"warm_epochs is a number of epochs (at least 1), got {p['warm_epochs']}")
    if not p["warm_rate"] > 0.0:
        raise ValueError(f"warm_rate is a factor of the learning rate (above 0), got {p['warm_rate']}")
    if p["batch_words"] < 0:
        raise ValueError(f"batch_words is a number of words per batch (0: by batch_size), "
                         f"got {p['batch_words']}")
    if (p["reveal"] > 0 or p["reveal_errors"] > 0) and p["reveal_dim"] < 1:
        raise ValueError(f"reveal_dim must be at least 1 when arcs are revealed, got {p['reveal_dim']}")
    if not 0.0 <= p["label_smoothing"] < 1.0:
        raise ValueError(f"label_smoothing is a share of each target's mass in [0, 1), "
                         f"got {p['label_smoothing']}")
    check_average(p["average"])
    if p["feats"] not in ("whole", "categories"):
        raise ValueError(f"feats is 'whole' or 'categories', got {p['feats']!r}")
