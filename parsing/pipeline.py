"""Train a set of members (plus the tagger) as one model directory; :mod:`parsing.bundle` loads
and runs one (:func:`load_models` and :class:`ModelBundle`, re-exported here).

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
its targets); with predicted tags it reads no input tags (``tag_inputs=False``), or with
``upos_inputs`` the tagger's UPOS alone (each gold training sentence carries its jackknifed UPOS,
:func:`parsing.tag_source.with_tagger_upos`); with gold tags it reads the input's UPOS, XPOS and
FEATS (``tag_inputs=True``).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from parsing.base import BaseParser
from parsing.bundle import ENSEMBLE_FILE, MANIFEST, ModelBundle, load_models, read_manifest
from parsing.ensemble.registry import fit_ensemble, save_ensemble
from parsing.member_fit import Fitted, MemberJob, MemberRunner, fit_member
from parsing.member_folds import FOLD_DIR, fold_jobs, jackknifed_parses
from parsing.members import MEMBERS, is_self_tagging
from parsing.persist import load_model
from parsing.plan import TagMode, TrainingPlan
from parsing.tag_source import choose_tag_source, upos_accuracy, with_member_upos, with_tagger_upos
from parsing.tagger.folds import FoldRunner
from parsing.types import Sentence

__all__ = ["ENSEMBLE_FILE", "MANIFEST", "ModelBundle", "Progress", "TagMode", "TrainingPlan",
           "describe_members", "load_models", "read_manifest", "train_models", "train_plan"]
Progress = Callable[[str, float], None]
"""Called with a message and the fraction of the work done (0..1)."""


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
    member_folds = int(tagger_settings.pop("member_folds", 0))
    fold_seconds = tagger_settings.pop("member_fold_seconds", None)
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
    own_view = {name: views[i % len(views)] for i, name in enumerate(chosen)}  # jackknife seed by member
    for name in filter(is_self_tagging, chosen):  # it learns to tag: gold tags are its targets
        own_view[name] = _self_tagging_view(gold_train, views[0], tags)
        extra[name] = _self_tagging_view(gold_extra.get(name, []), extra.get(name, []), tags)
    source = next(filter(is_self_tagging, chosen), None)
    compare = tags == "predicted" and source is not None and bool(dev)  # whose tags: decided on dev
    folds = member_folds if compare and tag_setting == "auto" else 0
    first = [source] if folds and source is not None else chosen  # with folds its tags come first

    def jobs_for(names: Sequence[str], tuning: Sequence[Sentence] | None) -> list[MemberJob]:
        return [MemberJob(name, [*own_view[name], *extra.get(name, [])], tuning, paths[name], random_state,
                          plan.member_params(name), previous.get(name))
                for name in names]

    fit = _Fitting(member_runner, say, len(chosen), seconds)
    fit.run(jobs_for(first, dev))
    manifest: dict[str, Any] = {}
    if compare and source is not None and dev:
        say(f"comparing {source}'s tags with the tagger's on dev", fit.fraction())
        own = load_model(paths[source], BaseParser).predict(dev)
        choice = choose_tag_source(gold_dev, dev, source, own, tag_setting)
        manifest["dev_upos"] = choice.dev_upos
        if choice.source is not None:  # the ensemble (and, with folds, the members) tuned on dev as parsed
            manifest["tag_source"], manifest["upos_threshold"] = choice.source, choice.threshold
            dev = with_member_upos(dev, own, choice.threshold)
            if folds:
                say(f"tagging the training trees with {folds} folds of {source}", fit.fraction())
                views, manifest["member_folds"] = _member_fold_views(
                    source, views, own_view[source], dev, out, plan, fit, folds=folds,
                    fold_seconds=fold_seconds, threshold=choice.threshold)
                train = views[0]
                own_view.update({name: views[i % len(views)] for i, name in enumerate(chosen)
                                 if not is_self_tagging(name)})
    fit.run(jobs_for([name for name in chosen if name not in first], dev))
    continued = [name for name in chosen if name in fit.continued]
    say("members trained", 1.0)
    manifest = {"tags": tags, "parsers": chosen, "train_sentences": len(train),
                "dev_sentences": len(dev or []), "train_seconds": seconds,
                "random_state": random_state, **manifest}
    if len(views) > 1:
        manifest["jackknife_seeds"] = {name: random_state + i % len(views) for i, name in enumerate(chosen)}
    if extra_train is not None:
        manifest["automatic_sentences"] = {name: len(extra[name]) for name in chosen}
    if plan.warm_from is not None:
        manifest["warm_from"], manifest["warm_members"] = plan.warm_from, continued
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


def _self_tagging_view(gold: Sequence[Sentence], tagged: Sequence[Sentence], tags: TagMode) -> list[Sentence]:
    """What a self-tagging member trains on: the gold sentences (its targets), with predicted
    tags each paired with the tagger's jackknifed UPOS, which it reads with ``upos_inputs``."""
    return with_tagger_upos(gold, tagged) if tags == "predicted" else list(gold)


class _Fitting:
    """Fits batches of member jobs (with the round's runner, else here one by one), keeping the
    seconds per member, the continued members and the progress over ``total`` members."""

    def __init__(self, runner: MemberRunner | None, say: Progress, total: int,
                 seconds: dict[str, float]) -> None:
        self.runner, self.say, self.total, self.seconds = runner, say, total, seconds
        self.done = 0
        self.continued: set[str] = set()

    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 1.0

    def run(self, jobs: Sequence[MemberJob], *, count: bool = True) -> None:
        """Fit ``jobs``; with ``count=False`` (fold models) neither their seconds nor progress count."""
        if not jobs:
            return
        if self.runner is not None:
            results = self.runner(jobs)
        else:
            results = (self._here(job) for job in jobs)
        for name, spent, warm in results:
            if not count:
                continue
            self.seconds[name] = spent
            self.continued |= {name} if warm else set()
            self.done += 1
            self.say(f"trained {name} in {spent:.1f}s", self.fraction())

    def _here(self, job: MemberJob) -> Fitted:
        # named by its file: a fold copy of a member is "biaffine-0"
        self.say(f"training {job.path.stem} ({self.done + 1} of {self.total})", self.fraction())
        return fit_member(job)


def _member_fold_views(source: str, views: Sequence[list[Sentence]], gold_train: Sequence[Sentence],
                       dev: Sequence[Sentence], out: Path, plan: TrainingPlan, fit: _Fitting, *,
                       folds: int, fold_seconds: float | None,
                       threshold: float) -> tuple[list[list[Sentence]], dict[str, Any]]:
    """The tagger's training views with ``source``'s jackknifed UPOS where it is ``threshold`` sure
    (:mod:`parsing.member_folds`), and what the manifest says of them (folds, seconds, training-tag
    UPOS accuracy of the tagger's and of these). ``gold_train``: the training trees as ``source``
    learns from them (:func:`_self_tagging_view`), which its fold copies learn from and tag."""
    started = time.perf_counter()
    jobs, held_out = fold_jobs(source, gold_train, dev, out, folds=folds, random_state=plan.seed,
                               params=plan.member_params(source), fold_seconds=fold_seconds)
    try:
        fit.run(jobs, count=False)
        parses = [load_model(job.path, BaseParser).predict([gold_train[i] for i in indices])
                  for job, indices in zip(jobs, held_out, strict=True)]
    finally:
        shutil.rmtree(out / FOLD_DIR, ignore_errors=True)
    own = jackknifed_parses(len(gold_train), held_out, parses)
    tagged = [with_member_upos(view, own, threshold) for view in views]
    info = {"folds": folds, "seconds": round(time.perf_counter() - started, 1),
            "train_upos": {"tagger": upos_accuracy(gold_train, [s.upos for s in views[0]]),
                           source: upos_accuracy(gold_train, [s.upos for s in tagged[0]])}}
    return tagged, info


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


def describe_members() -> list[tuple[str, str]]:
    """(name, summary) of every member, in the default order."""
    return [(spec.name, spec.summary) for spec in MEMBERS.values()]
