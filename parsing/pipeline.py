"""Train and run a set of members (plus the tagger) as one model directory.

What a round trains is one :class:`~parsing.plan.TrainingPlan` (members and their settings, tag
mode, ensemble, seed, warm start, runners), read by :func:`train_plan`; :func:`train_models`
takes the same options one by one and makes the plan itself.

Layout of a model directory::

    MODEL_DIR/manifest.json        what was trained, on what, with which tags (and the plan)
    MODEL_DIR/tagger/              the UPOS tagger (only with predicted tags)
    MODEL_DIR/parsers/NAME.model   one file per member
    MODEL_DIR/ensemble.model       the fitted combination (``--ensemble``), without its members

With ``tags="predicted"`` the tagger is trained on the training data, the parsers are
trained on jackknifed tags (each training sentence tagged by a tagger that did not see it),
and input is tagged before parsing, so parsers meet the same kind of tags in training as
in use. A *self-tagging* member (``biaffine``: :func:`parsing.members.is_self_tagging`) predicts
its own tags instead: it trains on the gold training sentences (their tags, lemmas and FEATS are
its targets) and reads no input tags with predicted tags (``tag_inputs=False``); with gold tags
it reads them (``tag_inputs=True``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parsing.base import BaseParser
from parsing.constraints import Constraints, validate_all
from parsing.ensemble.base import Ensemble
from parsing.ensemble.registry import combine, fit_ensemble, load_ensemble, save_ensemble
from parsing.ensemble.reparse import reparse_under_constraints
from parsing.forked import ParserPool, can_fork, parse_forked
from parsing.member_fit import MemberJob, MemberRunner, fit_member
from parsing.members import MEMBERS, is_self_tagging
from parsing.persist import load_model
from parsing.plan import TagMode, TrainingPlan
from parsing.tag_source import choose_tag_source, with_member_upos
from parsing.tagger.folds import FoldRunner
from parsing.types import Parse, Sentence

__all__ = ["ENSEMBLE_FILE", "MANIFEST", "ModelBundle", "Progress", "TagMode", "TrainingPlan",
           "describe_members", "load_models", "read_manifest", "train_models", "train_plan"]
Progress = Callable[[str, float], None]
"""Called with a message and the fraction of the work done (0..1)."""
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
        return with_member_upos(tagged, own), {self.tag_source: own}

    def parse(self, sentences: Sequence[Sentence], names: Sequence[str] | None = None,
              *, tags: TagMode | None = None, jobs: int = 1,
              pool: ParserPool | None = None) -> dict[str, list[Parse]]:
        """Every named member's parses of ``sentences`` (tagged first if needed).

        With predicted tags each parse's ``upos`` holds the tags the member parsed with (the
        tagger's), so a caller can write them; with gold tags it stays ``None``.

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

        With predicted tags every parse's ``upos``, the ensemble's too, holds the tagger's tags.

        Raises:
            ValueError: the model has no fitted ensemble.
        """
        if self.ensemble is None:
            raise ValueError("this model has no ensemble; train it with --ensemble METHOD")
        prepared, known = self._prepare(sentences, tags)
        wanted = list(dict.fromkeys([*(names or self.parsers), *self.ensemble_members]))
        parses = self._parse_prepared(prepared, wanted, known, jobs=jobs, pool=pool)
        combined = combine(self.ensemble, self.ensemble_members, prepared, parses)
        if (tags or self.tags) == "predicted":
            for member_parses in [*parses.values(), combined]:
                _record_tags(member_parses, prepared)
        shown = names or list(self.parsers)
        return {name: parses[name] for name in shown}, combined


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
        if (tags or self.tags) == "predicted":
            for member_parses in [*parses.values(), forced]:
                _record_tags(member_parses, prepared)
        shown = names or list(self.parsers)
        return {name: parses[name] for name in shown}, forced


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


def train_models(
    train: Sequence[Sentence],
    dev: Sequence[Sentence] | None,
    out_dir: str | Path,
    *,
    names: Sequence[str] | None = None,
    tags: TagMode = "gold",
    jobs: int = 1,
    random_state: int = 0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    ensemble: str | None = None,
    ensemble_params: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    extra_train: Mapping[str, Sequence[Sentence]] | None = None,
    warm_from: str | Path | None = None,
    member_runner: MemberRunner | None = None,
    fold_runner: FoldRunner | None = None,
) -> dict[str, float]:
    """:func:`train_plan` with the plan made of these options
    (:meth:`TrainingPlan.from_options <parsing.plan.TrainingPlan.from_options>`), for scripts
    written before the plan existed.

    Args:
        params: hyperparameters overriding a member's defaults, by member name (``"tagger"``: the
            tagger's, with predicted tags); settings of members not trained are ignored.
        ensemble: a method of :data:`parsing.ensemble.registry.METHODS` fitted over the
            members (tuned on dev, else on held-out folds of train), or ``None``.
        ensemble_params: hyperparameters overriding the method's defaults.
        warm_from: a model directory of an earlier round to continue (:func:`train_plan`).
        member_runner: fits the members (:mod:`parsing.member_fit`; default: one after another
            here, or ``jobs`` local processes).
        fold_runner: fits the tagger and its jackknife folds (:mod:`parsing.tagger.folds`;
            default: one after another here, or ``jobs`` local processes).
        progress, extra_train: as :func:`train_plan`'s.

    Returns:
        Training seconds per member (and ``"tagger"``, ``"ensemble"``).
    """
    plan = TrainingPlan.from_options(names=names, tags=tags, params=params, ensemble=ensemble,
                                     ensemble_params=ensemble_params, random_state=random_state, jobs=jobs,
                                     warm_from=warm_from, member_runner=member_runner,
                                     fold_runner=fold_runner)
    return train_plan(plan, train, dev, out_dir, progress=progress, extra_train=extra_train)


def train_plan(
    plan: TrainingPlan,
    train: Sequence[Sentence],
    dev: Sequence[Sentence] | None,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    extra_train: Mapping[str, Sequence[Sentence]] | None = None,
) -> dict[str, float]:
    """Train what ``plan`` says into ``out_dir``: the tagger (predicted tags only), the members
    and the ensemble.

    Args:
        plan: members and their settings, tag mode, ensemble, seed, warm start, runners
            (:class:`~parsing.plan.TrainingPlan`). With ``plan.warm_from`` (a model directory
            of an earlier round trained with the same tags) each member saved there that
            supports ``warm_start`` continues from its weights (a *warm round*); the others are
            trained from scratch. The manifest lists the continued members (``"warm_members"``)
            and the directory (``"warm_from"``), and the plan itself (``"plan"``, when its
            settings are plain JSON data).
        progress: told what is being trained, with the fraction done.
        extra_train: more training trees by member name (self-training's automatic trees,
            :mod:`parsing.semi.self_training`): member ``NAME`` trains on ``train`` plus
            ``extra_train[NAME]`` (tagged by the tagger with predicted tags). The tagger and
            the ensemble are still fitted on ``train``/``dev`` only; the manifest records how
            many extra trees each member got (``"automatic_sentences"``).

    Returns:
        Training seconds per member (and ``"tagger"``, ``"ensemble"``).

    Raises:
        ValueError: extra trees for a member the plan does not train.
        FileNotFoundError: a setting names a file that is not there, or ``warm_from`` is not a
            model directory (both before any training).
        ImportError: a setting needs a module that is not installed (before any training).
    """
    say = progress or (lambda message, fraction: None)
    tags, random_state, ensemble = plan.tags, plan.seed, plan.ensemble
    missing_files = [f"{name}.{setting}: {path}" for name, setting, path in plan.missing_files()]
    if missing_files:
        raise FileNotFoundError(f"no such file or directory: {'; '.join(missing_files)}")
    if requirements := plan.missing_requirements():
        raise ImportError("; ".join(requirements))
    out = Path(out_dir)
    (out / "parsers").mkdir(parents=True, exist_ok=True)
    chosen = list(plan.members)
    unknown = sorted(set(extra_train or {}) - set(chosen))
    if unknown:
        raise ValueError(f"extra training trees for {', '.join(unknown)}, which is not being trained")
    extra = {name: list(extra_train.get(name, ())) for name in chosen} if extra_train is not None else {}
    member_runner, fold_runner = plan.runners()
    seconds: dict[str, float] = {}
    views = [list(train)]
    gold_train, gold_extra, gold_dev = list(train), dict(extra), list(dev or [])
    tagger_settings = dict(plan.tagger_settings)
    tag_setting = tagger_settings.pop("tag_source", "auto")
    if tags == "predicted":
        from parsing.tagger.training import train_tagger

        say("training the tagger (and jackknifing training tags)", 0.0)
        started = time.perf_counter()
        tagger, views, dev = train_tagger(
            train, dev, random_state=random_state, params=tagger_settings or None,
            save_to=out / "tagger", fold_runner=fold_runner)
        train = views[0]
        extra = {name: tagger.tag_for_parsing(more) if more else []
                 for name, more in extra.items()}
        seconds["tagger"] = time.perf_counter() - started
    paths = {name: out / "parsers" / f"{name}.model" for name in chosen}
    previous = _warm_paths(plan.warm_from if plan.warm else None, tags, chosen)
    continued: list[str] = []
    own_view = {name: views[i % len(views)] for i, name in enumerate(chosen)}  # jackknife seed by member
    for name in filter(is_self_tagging, chosen):  # it learns to tag: gold tags are its targets
        own_view[name], extra[name] = gold_train, gold_extra.get(name, [])
    member_train = {name: [*own_view[name], *extra[name]] if extra.get(name) else own_view[name]
                    for name in chosen}
    member_jobs = [MemberJob(name, member_train[name], dev, paths[name], random_state,
                             plan.member_params(name), previous.get(name))
                   for name in chosen]
    if member_runner is not None:
        for done, (name, spent, warm) in enumerate(member_runner(member_jobs), start=1):
            seconds[name] = spent
            continued += [name] if warm else []
            say(f"trained {name} in {spent:.1f}s", done / len(chosen))
        continued = [name for name in chosen if name in continued]
    else:
        for done, job in enumerate(member_jobs):
            say(f"training {job.name} ({done + 1} of {len(chosen)})", done / len(chosen))
            _, seconds[job.name], warm = fit_member(job)
            continued += [job.name] if warm else []
        say("members trained", 1.0)
    manifest: dict[str, Any] = {"tags": tags, "parsers": chosen, "train_sentences": len(train),
                                "dev_sentences": len(dev or []), "train_seconds": seconds,
                                "random_state": random_state}
    if len(views) > 1:
        manifest["jackknife_seeds"] = {name: random_state + i % len(views) for i, name in enumerate(chosen)}
    if extra_train is not None:
        manifest["automatic_sentences"] = {name: len(extra[name]) for name in chosen}
    if plan.warm_from is not None:
        manifest["warm_from"], manifest["warm_members"] = plan.warm_from, continued
    source = next(filter(is_self_tagging, chosen), None)
    if tags == "predicted" and source is not None and dev:
        say(f"comparing {source}'s tags with the tagger's on dev", 1.0)
        own = load_model(paths[source], BaseParser).predict(dev)
        chosen_source, manifest["dev_upos"] = choose_tag_source(gold_dev, dev, source, own, tag_setting)
        if chosen_source is not None:  # the ensemble is fitted on dev as it will be parsed
            manifest["tag_source"], dev = chosen_source, with_member_upos(dev, own)
    if ensemble:
        say(f"fitting the {ensemble} ensemble", 1.0)
        started = time.perf_counter()
        fitted = {name: load_model(paths[name], BaseParser) for name in chosen}
        combination, combined = fit_ensemble(ensemble, fitted, train, dev, random_state=random_state,
                                            params=plan.ensemble_settings or None)
        save_ensemble(combination, combined, out / ENSEMBLE_FILE)
        seconds["ensemble"] = time.perf_counter() - started
        manifest["ensemble"] = {"method": ensemble, "members": combined}
        say("ensemble fitted", 1.0)
    if plan.json_ready():
        manifest["plan"] = plan.to_json()
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return seconds


def _warm_paths(warm_from: str | Path | None, tags: TagMode, names: Sequence[str]) -> dict[str, Path]:
    """Saved members of ``warm_from`` to continue, by name (none when its tags differ).

    Raises:
        FileNotFoundError: ``warm_from`` is not a model directory.
    """
    if warm_from is None:
        return {}
    manifest = read_manifest(warm_from)
    if manifest.get("tags") != tags:
        return {}
    return {name: Path(warm_from) / "parsers" / f"{name}.model" for name in names
            if name in manifest.get("parsers", [])}


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


def describe_members() -> list[tuple[str, str]]:
    """(name, summary) of every member, in the default order."""
    return [(spec.name, spec.summary) for spec in MEMBERS.values()]
