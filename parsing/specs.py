"""Short settings strings, written once: ``method[:key=value]...`` with integer values.

Used for a member's word clusters (``brown:clusters=200``, :mod:`parsing.clusters.recipes`) and
its meta features (``auto:min_count=1``, :mod:`parsing.meta.recipe`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping


def parse_spec(spec: str, methods: Collection[str], keys: Mapping[str, str],
               what: str) -> tuple[str, dict[str, int]]:
    """The method and the settings of ``spec``, each key renamed by ``keys`` (spec key ->
    field name).

    Raises:
        ValueError: a method not in ``methods``, an unknown key, or a value that is not an
            integer, naming ``what`` the spec is (e.g. ``"clustering"``).

    Examples:
        >>> keys = {"clusters": "n_clusters", "seed": "seed"}
        >>> parse_spec("brown:clusters=50:seed=-1", ["brown"], keys, "clustering")
        ('brown', {'n_clusters': 50, 'seed': -1})
    """
    method, *settings = spec.strip().split(":")
    if method not in methods:
        raise ValueError(f"unknown {what} {method!r} in {spec!r}; known: {', '.join(methods)}")
    values: dict[str, int] = {}
    for setting in settings:
        key, _, value = setting.partition("=")
        if key not in keys or not value.lstrip("-").isdigit():
            raise ValueError(f"bad {what} setting {setting!r} in {spec!r}")
        values[keys[key]] = int(value)
    return method, values
