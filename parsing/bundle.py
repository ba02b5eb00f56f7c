"""A loaded model directory (:func:`load_models`): the tagger, the members and the ensemble, and
how they parse: tagged first with predicted tags (the tagger's UPOS, or the neural member's where
it tags better: :mod:`parsing.tag_source`), each member's parses, the ensemble's trees, and a
re-parse under forced arcs. :mod:`parsing.pipeline` trains such a directory; its layout is
described there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parsing.base import BaseParser
from parsing.constraints import Constraints, validate_all
from parsing.ensemble.base import Ensemble
from parsing.ensemble.registry import combine, load_ensemble
from parsing.ensemble.reparse import reparse_under_constraints
from parsing.forked import ParserPool, can_fork, parse_forked
from parsing.persist import load_model
from parsing.plan import TagMode
from parsing.tag_source import with_member_upos
from parsing.types import Parse, Sentence

MANIFEST = "manifest.json"
ENSEMBLE_FILE = "ensemble.model"


@dataclass
class ModelBundle:
    """A loaded model directory: the tagger (or None for gold tags) and fitted members."""

    tags: TagMode
    parsers: dict[str, BaseParser]
    tagger: object | None = None
    manifest: dict[str, object] = field(default_factory=dict)
    ensemble: Ensemble | None = None
    ensemble_method: str | None = None
    ensemble_members: list[str] = field(default_factory=list)
    tag_source: str | None = None
    """With predicted tags, the self-tagging member whose UPOS the members parse with (the
    manifest's ``"tag_source"``, :mod:`parsing.tag_source`); None: the tagger's. Set it to None
    to parse with the tagger's tags."""
    tag_member: BaseParser | None = None
    """The :attr:`tag_source` member (loaded even when it is not among :attr:`parsers`)."""
    upos_threshold: float = 0.0
    """The :attr:`tag_source` member's UPOS is taken where its probability is at least this, the
    tagger's elsewhere (the manifest's ``"upos_threshold"``; 0.0 for models trained before it)."""

    def prepare(self, sentences: Sequence[Sentence], tags: TagMode | None = None) -> list[Sentence]:
        """The sentences as the parsers will see them: with predicted UPOS when ``tags``
        (default: the mode the bundle was trained in) is ``"predicted"`` (the tagger's, or the
        :attr:`tag_source` member's).

        Raises:
            ValueError: predicted tags asked of a bundle trained without a tagger.
        """
        return self._prepare(sentences, tags)[0]

    def _prepare(self, sentences: Sequence[Sentence], tags: TagMode | None = None,
                 known: Mapping[str, Sequence[Parse]] | None = None
                 ) -> tuple[list[Sentence], dict[str, list[Parse]]]:
        """:meth:`prepare`, and the tagging member's parses of the sentences when it tagged them
        (by name; empty otherwise), so they are not parsed again. ``known``: members' parses of
        these sentences already made; the tagging member's are read from there if present."""
        mode = tags or self.tags
        if mode == "gold":
            return list(sentences), {}
        if self.tagger is None:
            raise ValueError("this model was trained with gold tags and has no tagger; "
                             "train it with --tags predicted")
        tagged: list[Sentence] = self.tagger.tag_for_parsing(sentences)  # type: ignore[attr-defined]
        if self.tag_source is None or self.tag_member is None:
            return tagged, {}
        if known is not None and self.tag_source in known:
            own = list(known[self.tag_source])
        else:
            own = self.tag_member.predict(tagged)
        return with_member_upos(tagged, own, self.upos_threshold), {self.tag_source: own}

    def parse(self, sentences: Sequence[Sentence], names: Sequence[str] | None = None,
              *, tags: TagMode | None = None, jobs: int = 1,
              pool: ParserPool | None = None) -> dict[str, list[Parse]]:
        """Every named member's parses of ``sentences`` (tagged first if needed).

        With predicted tags each parse's ``upos`` holds the tags the member parsed with (the
        tagger's, or the :attr:`tag_source` member's), so a caller can write them; with gold tags
        it stays ``None``.

        With ``jobs > 1`` the members parse in that many forked processes (each inherits the
        loaded models; only the parses travel back), where the platform can fork; a ``pool``
        (:class:`~parsing.forked.ParserPool` of this bundle's parsers) keeps its processes
        between calls instead.
        """
        prepared, known = self._prepare(sentences, tags)
        parses = self._parse_prepared(prepared, names or list(self.parsers), known, jobs=jobs, pool=pool)
        if (tags or self.tags) == "predicted":
            for member_parses in parses.values():
                _record_tags(member_parses, prepared)
        return parses

    def parse_with_ensemble(self, sentences: Sequence[Sentence], names: Sequence[str] | None = None,
                            *, tags: TagMode | None = None, jobs: int = 1, pool: ParserPool | None = None
                            ) -> tuple[dict[str, list[Parse]], list[Parse]]:
        """Every named member's parses and the ensemble's (its members are always parsed).

        With predicted tags every parse's ``upos``, the ensemble's too, holds the tags the members
        parsed with (the tagger's, or the :attr:`tag_source` member's).

        Raises:
            ValueError: the model has no fitted ensemble.
        """
        if self.ensemble is None:
            raise ValueError("this model has no ensemble; train it with --ensemble METHOD")
        prepared, known = self._prepare(sentences, tags)
        wanted = list(dict.fromkeys([*(names or self.parsers), *self.ensemble_members]))
        parses = self._parse_prepared(prepared, wanted, known, jobs=jobs, pool=pool)
        combined = combine(self.ensemble, self.ensemble_members, prepared, parses)
        return self._shown(parses, combined, prepared, names, tags)

    def parse_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                          names: Sequence[str] | None = None, *, tags: TagMode | None = None,
                          previous: Sequence[Parse] | None = None,
                          unconstrained: tuple[Mapping[str, Sequence[Parse]], Sequence[Parse]] | None = None,
                          adapt: bool = True, start: Mapping[str, Sequence[Parse]] | None = None,
                          ) -> tuple[dict[str, list[Parse]], list[Parse]]:
        """:meth:`parse_with_ensemble` under forced arcs (one :class:`Constraints` per sentence):
        :func:`~parsing.ensemble.reparse.reparse_under_constraints` with this bundle's members
        and ensemble (its docstring says what is kept, re-parsed, adapted and forced).
        ``unconstrained`` (every member's parses and the ensemble's trees of these sentences,
        as :meth:`parse_with_ensemble` returns them for the same prepared sentences) spares
        parsing them again, e.g. when a web process re-parses one sentence after each edit;
        they are not modified. ``start``: the members' parses from the previous re-parse under
        constraints that these include, kept where they hold the new arcs (see
        :func:`~parsing.ensemble.reparse.reparse_under_constraints`).

        Raises:
            ValueError: no fitted ensemble, or constraints that do not fit a sentence.
            NotImplementedError: a member without constrained decoding.
        """
        if self.ensemble is None:
            raise ValueError("this model has no ensemble; train it with --ensemble METHOD")
        prepared, known = self._prepare(sentences, tags, unconstrained[0] if unconstrained else None)
        validate_all([len(s) for s in prepared], constraints)
        wanted = list(dict.fromkeys([*(names or self.parsers), *self.ensemble_members]))
        missing = [name for name in wanted if name not in self.parsers]
        if missing:
            raise ValueError(f"model has no parser {', '.join(missing)}; it has {', '.join(self.parsers)}")
        if unconstrained is None:  # (constraints checked first: a bad one costs no parse)
            free = self._parse_prepared(prepared, wanted, known)
            unconstrained = (free, combine(self.ensemble, self.ensemble_members, prepared, free))
        parses, forced = reparse_under_constraints(
            self.parsers, self.ensemble, self.ensemble_members, prepared, constraints,
            ({name: unconstrained[0][name] for name in wanted}, unconstrained[1]),
            previous=previous, adapt=adapt, start=start)
        return self._shown(parses, forced, prepared, names, tags)

    def _shown(self, parses: dict[str, list[Parse]], combined: list[Parse], prepared: Sequence[Sentence],
               names: Sequence[str] | None, tags: TagMode | None
               ) -> tuple[dict[str, list[Parse]], list[Parse]]:
        """The named members' parses (all by default) and the ensemble's trees, each parse's
        ``upos`` set to the tags it was parsed with when the tags are predicted."""
        if (tags or self.tags) == "predicted":
            for member_parses in [*parses.values(), combined]:
                _record_tags(member_parses, prepared)
        return {name: parses[name] for name in names or self.parsers}, combined


    def _parse_prepared(self, prepared: Sequence[Sentence], chosen: Sequence[str],
                        known: Mapping[str, Sequence[Parse]], *, jobs: int = 1,
                        pool: ParserPool | None = None) -> dict[str, list[Parse]]:
        """Members ``chosen``'s parses of sentences already prepared; those in ``known`` (the
        tagging member's, :meth:`_prepare`) are taken from there.

        Raises:
            ValueError: a member the model does not have.
        """
        missing = [name for name in chosen if name not in self.parsers]
        if missing:
            raise ValueError(f"model has no parser {', '.join(missing)}; it has {', '.join(self.parsers)}")
        todo = [name for name in chosen if name not in known]
        if not todo:
            parses: dict[str, list[Parse]] = {}
        elif pool is not None:
            parses = pool.parse(prepared, todo)
        elif jobs > 1 and len(todo) > 1 and can_fork():
            parses = parse_forked(self.parsers, prepared, todo, jobs)
        else:
            parses = {name: self.parsers[name].predict(prepared) for name in todo}
        return {name: list(known[name]) if name in known else parses[name] for name in chosen}


def _record_tags(parses: Sequence[Parse], prepared: Sequence[Sentence]) -> None:
    """Set each parse's ``upos`` (``n+1`` tags, ROOT first) to the tags its sentence was parsed with;
    a self-tagging member's parse (``extras["own_tags"]``) keeps the tags it predicted and parsed with."""
    for parse, sentence in zip(parses, prepared, strict=True):
        if not parse.extras.get("own_tags"):
            parse.upos = list(sentence.upos)



def read_manifest(model_dir: str | Path) -> dict[str, Any]:
    """The manifest of a model directory (what was trained, on what, and the ensemble).

    Raises:
        FileNotFoundError: not a model directory.
    """
    path = Path(model_dir) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{model_dir} is not a model directory (no {MANIFEST})")
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def load_models(model_dir: str | Path, names: Sequence[str] | None = None) -> ModelBundle:
    """Load a model directory written by :func:`train_models` (only ``names`` if given).

    The ensemble is loaded when the directory has one and every member it combines is
    loaded (add its members to ``names``, or load them all).
    """
    root = Path(model_dir)
    manifest = read_manifest(root)
    available = [str(name) for name in manifest["parsers"]]
    chosen = list(names or available)
    missing = [name for name in chosen if name not in available]
    if missing:
        raise ValueError(f"model has no parser {', '.join(missing)}; it has {', '.join(available)}")
    parsers = {name: load_model(root / "parsers" / f"{name}.model", BaseParser) for name in chosen}
    tagger = None
    if manifest["tags"] == "predicted":
        from parsing.tagger.model import Tagger

        tagger = Tagger.load(root / "tagger")
    bundle = ModelBundle(tags=manifest["tags"], parsers=parsers, tagger=tagger, manifest=manifest)
    source = manifest.get("tag_source")
    if tagger is not None and isinstance(source, str):
        bundle.tag_source = source
        bundle.upos_threshold = float(manifest.get("upos_threshold", 0.0))
        bundle.tag_member = (parsers.get(source)
                             or load_model(root / "parsers" / f"{source}.model", BaseParser))
    described = manifest.get("ensemble")
    if described and (root / ENSEMBLE_FILE).is_file():
        members = [str(name) for name in described["members"]]
        if all(name in parsers for name in members):
            bundle.ensemble = load_ensemble(root / ENSEMBLE_FILE, parsers)
            bundle.ensemble_method = str(described["method"])
            bundle.ensemble_members = members
    return bundle
