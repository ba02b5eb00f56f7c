"""Loaded model directories kept in the web process, so a re-parse does not read them from disk.

:class:`ModelCache` maps a model directory to its :class:`~parsing.pipeline.ModelBundle`,
loaded once (per version of its ``manifest.json``: a directory trained again is loaded
again) and kept in least-recently-used order; at most ``size`` bundles stay loaded (all nine
members of a round can take hundreds of MB). Each cached bundle comes with a lock: the
members are not written to be parsed from two threads at once, so callers parse under it, and
a few sentences' unconstrained parses (:meth:`CachedModels.unconstrained`), so that re-parsing
a sentence after each edit parses it only under the new constraints, and the members' parses
of its last re-parse (:meth:`CachedModels.earlier`): the next edit adds an arc, and a member
whose last parse already holds it is not parsed again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path

from app.jobs.model_files import check_unchanged
from parsing.constraints import Constraints
from parsing.pipeline import MANIFEST, ModelBundle, load_models
from parsing.types import Parse, Sentence

DEFAULT_SIZE = 2
"""Model directories kept loaded unless ``REPARSE_CACHE_SIZE`` says otherwise."""

PARSED_SENTENCES = 64
"""Sentences whose unconstrained parses each loaded bundle keeps (the ones being annotated)."""

Unconstrained = tuple[dict[str, list[Parse]], list[Parse]]
"""Every member's parses and the ensemble's trees of a list of sentences (here: one)."""

LastReparse = tuple[Constraints, dict[str, list[Parse]]]
"""A sentence's last re-parse: its constraints and every member's parses under them."""


@dataclass
class CachedModels:
    """A loaded bundle, the lock to hold while parsing with it, and recent unconstrained parses."""

    bundle: ModelBundle
    lock: threading.Lock = field(default_factory=threading.Lock)
    parsed: OrderedDict[Hashable, Unconstrained] = field(default_factory=OrderedDict)
    parses: int = 0
    """How many sentences were parsed without constraints (a cache hit does not count)."""
    last: OrderedDict[Hashable, LastReparse] = field(default_factory=OrderedDict)
    """Per sentence key: the constraints of its last re-parse and every member's parses then."""

    def earlier(self, key: Hashable, constraints: Constraints) -> dict[str, list[Parse]] | None:
        """The members' parses of the last re-parse of ``key`` when its constraints are among
        ``constraints`` (:meth:`~parsing.constraints.Constraints.within`), else ``None``; hold
        :attr:`lock`."""
        found = self.last.get(key)
        if found is None or not found[0].within(constraints):
            return None
        return found[1]

    def remember(self, key: Hashable, constraints: Constraints, parses: dict[str, list[Parse]]) -> None:
        """Keep the members' ``parses`` of ``key`` under ``constraints`` for the next edit."""
        self.last[key] = (constraints, parses)
        self.last.move_to_end(key)
        while len(self.last) > PARSED_SENTENCES:
            self.last.popitem(last=False)

    def unconstrained(self, key: Hashable, sentence: Sentence) -> Unconstrained:
        """The members' and the ensemble's parses of ``sentence`` (``key``: what identifies it
        and its words and tags), parsed now unless recently parsed; hold :attr:`lock`."""
        found = self.parsed.get(key)
        if found is not None:
            self.parsed.move_to_end(key)
            return found
        parsed = self.bundle.parse_with_ensemble([sentence])
        self.parses += 1
        self.parsed[key] = parsed
        while len(self.parsed) > PARSED_SENTENCES:
            self.parsed.popitem(last=False)
        return parsed


class ModelCache:
    """A bounded LRU cache of loaded model directories (thread-safe).

    Examples:
        >>> cache = ModelCache(size=1, loader=lambda path: ModelBundle(tags="gold", parsers={}))
        >>> cache.loads
        0
    """

    def __init__(self, size: int = DEFAULT_SIZE, loader: Callable[[Path], ModelBundle] = load_models) -> None:
        if size < 1:
            raise ValueError(f"a model cache holds at least one directory, not {size}")
        self.size = size
        self.loader = loader
        self.loads = 0
        """How many times a directory was read from disk (a hit does not count)."""
        self._entries: OrderedDict[tuple[str, int], CachedModels] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, model_dir: str | Path, checksums: dict[str, str] | None = None) -> CachedModels:
        """The bundle of ``model_dir``, loaded now if it is not cached (evicting the least
        recently used one beyond ``size``). With ``checksums`` (the round's), files that changed
        since are refused before loading.

        Raises:
            FileNotFoundError: ``model_dir`` is not a model directory.
            ModelFilesChanged: a file differs from ``checksums``.
        """
        root = Path(model_dir).resolve()
        manifest = root / MANIFEST
        if not manifest.is_file():
            raise FileNotFoundError(f"{model_dir} is not a model directory (no {MANIFEST})")
        key = (str(root), manifest.stat().st_mtime_ns)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            check_unchanged(root, checksums)
            for stale in [k for k in self._entries if k[0] == key[0]]:  # the directory was retrained
                del self._entries[stale]
            loaded = CachedModels(self.loader(root))
            self.loads += 1
            self._entries[key] = loaded
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return loaded

    def __len__(self) -> int:
        return len(self._entries)
