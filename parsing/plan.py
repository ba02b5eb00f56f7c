"""What a round trains, as one object: :class:`TrainingPlan`.

A plan names the members and their settings, the tag mode, the ensemble method and its
settings, the tagger's settings (predicted tags), the seed, whether the round continues an
earlier one (warm start) and how the work is run (local processes or a caller's runners). The
command line (``python -m parsing train``), the simulation (:mod:`parsing.semi.simulate`) and
the web app build one; :func:`parsing.pipeline.train_plan` reads it. It is checked when it is
made (an unknown member, setting, tag mode or method is refused before any training) and it
round-trips through JSON (:meth:`TrainingPlan.to_json`, :meth:`TrainingPlan.from_json`), so a
model directory and the app can record what a round was trained with. The runners are not
part of the JSON: they are how the work runs, not what is trained.

Example::

    >>> plan = TrainingPlan.from_options(names=["graph1", "eager"], tags="predicted",
    ...                                  params={"eager": {"epochs": 3}}, ensemble="vote-uniform")
    >>> plan.members, plan.member_params("eager")
    (('graph1', 'eager'), {'epochs': 3})
    >>> TrainingPlan.from_json(plan.to_json()) == plan
    True
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from parsing.members import member_names, member_spec, tag_mode_params

if TYPE_CHECKING:
    from parsing.member_fit import MemberRunner
    from parsing.tagger.folds import FoldRunner

TagMode = Literal["gold", "predicted"]
TAG_MODES: tuple[str, ...] = ("gold", "predicted")

PLAN_FORMAT = 1
"""Version of :meth:`TrainingPlan.to_json`'s layout (its ``"format"`` key)."""

TAGGER_EXTRA_SETTINGS = ("jackknife_seeds", "tag_source", "member_folds", "member_fold_seconds")
"""Tagger settings that are not :class:`~parsing.tagger.model.Tagger` arguments
(:func:`parsing.tagger.training.train_tagger` reads ``jackknife_seeds``;
:func:`parsing.pipeline.train_plan` reads ``tag_source`` (:mod:`parsing.tag_source`) and
``member_folds``, ``member_fold_seconds`` (:mod:`parsing.member_folds`))."""

_RUNTIME = ("member_runner", "fold_runner")
"""Fields that say how the work runs; left out of the JSON and of equality."""


def _accepted(module: str, cls: str) -> tuple[list[str], bool]:
    """The keyword arguments of ``module.cls`` and whether it takes any (``**kwargs``)."""
    factory = getattr(importlib.import_module(module), cls)
    parameters = list(inspect.signature(factory.__init__).parameters.values())[1:]
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    return [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD], open_ended


def _check_names(owner: str, given: Mapping[str, Any], accepted: Sequence[str], open_ended: bool) -> None:
    """Refuse a setting ``owner`` does not take, naming it and the ones it takes."""
    if not isinstance(given, Mapping):
        raise ValueError(f"the settings of {owner} must be a mapping of NAME to value, not {given!r}")
    if open_ended:
        return
    unknown = [key for key in given if key not in accepted]
    if unknown:
        raise ValueError(f"{owner} has no setting {', '.join(map(repr, unknown))}; "
                         f"its settings: {', '.join(accepted)}")


def _json_ready(value: Any) -> bool:
    """True when ``value`` survives ``json.dumps``/``json.loads`` unchanged in kind (strings,
    numbers, booleans, None, lists and string-keyed dicts of them)."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_json_ready(item) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(key, str) and _json_ready(item) for key, item in value.items())
    return False


@dataclass(frozen=True)
class TrainingPlan:
    """What a round trains and how (module docstring). Checked when made.

    Attributes:
        members: member names (:func:`parsing.members.member_names`), in order, no repeats.
        tags: ``"gold"`` (parsers read the input's UPOS) or ``"predicted"`` (a tagger is trained,
            the parsers train on jackknifed tags).
        settings: hyperparameters overriding a member's defaults, by member name (members of
            the plan only; each name a keyword of that member's class).
        tagger_settings: the tagger's, with predicted tags only (``Tagger`` keywords plus
            ``jackknife_seeds``).
        ensemble: a method of :data:`parsing.ensemble.registry.METHODS` fitted over the
            members, or None (members only).
        ensemble_settings: the method's hyperparameters (only with a method).
        seed: every member's, the tagger's and the ensemble's ``random_state`` (a member's own
            ``random_state`` setting wins).
        warm: the round continues an earlier round's members where they can (``warm_start``).
        warm_from: the earlier round's model directory (only with ``warm``; None: the caller
            holds the earlier members itself, as the simulation does).
        jobs: members (and tagger folds) fitted at once in local processes, when no runner is
            given.
        member_runner, fold_runner: fit the members and the tagger's folds elsewhere (the web
            app's queue; :mod:`parsing.member_fit`, :mod:`parsing.tagger.folds`). Not saved in
            the JSON and not compared.

    Raises:
        ValueError: anything above that does not hold, with what and why.
    """

    members: tuple[str, ...]
    tags: TagMode = "gold"
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tagger_settings: Mapping[str, Any] = field(default_factory=dict)
    ensemble: str | None = None
    ensemble_settings: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    warm: bool = False
    warm_from: str | None = None
    jobs: int = 1
    member_runner: MemberRunner | None = field(default=None, compare=False, repr=False)
    fold_runner: FoldRunner | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.members, str):
            raise ValueError("members must be a list of member names, not one string")
        members = tuple(str(name) for name in self.members)
        if not members:
            raise ValueError("a training plan needs at least one member")
        member_names(",".join(members))  # unknown names: ValueError listing the known ones
        repeated = sorted({name for name in members if members.count(name) > 1})
        if repeated:
            raise ValueError(f"member {', '.join(repeated)} named more than once")
        object.__setattr__(self, "members", members)
        if self.tags not in TAG_MODES:
            raise ValueError(f"tags must be gold or predicted, not {self.tags!r}")
        self._check_settings()
        self._check_ensemble()
        for name in ("seed", "jobs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, not {value!r}")
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {self.jobs}")
        if not isinstance(self.warm, bool):
            raise ValueError(f"warm must be true or false, not {self.warm!r}")
        if self.warm_from is not None:
            if not self.warm:
                raise ValueError("warm_from names an earlier round to continue: set warm too")
            object.__setattr__(self, "warm_from", str(self.warm_from))

    def _check_settings(self) -> None:
        if not isinstance(self.settings, Mapping):
            raise ValueError(f"settings must map member names to their settings, not {self.settings!r}")
        outside = [name for name in self.settings if name not in self.members]
        if outside:
            raise ValueError(f"settings for {', '.join(map(str, outside))}, which the plan does not train "
                             f"(members: {', '.join(self.members)})")
        for name, values in self.settings.items():
            spec = member_spec(name)
            _check_names(f"member {name}", values, *_accepted(spec.module, spec.cls))
        object.__setattr__(self, "settings", {name: dict(values) for name, values in self.settings.items()
                                              if values})
        if self.tagger_settings:
            if self.tags != "predicted":
                raise ValueError("tagger settings apply with predicted tags only (the plan has gold tags)")
            accepted, open_ended = _accepted("parsing.tagger.model", "Tagger")
            _check_names("the tagger", self.tagger_settings, [*accepted, *TAGGER_EXTRA_SETTINGS], open_ended)
            if "tag_source" in self.tagger_settings:
                from parsing.tag_source import check_tag_source

                check_tag_source(self.tagger_settings["tag_source"])
            from parsing.member_folds import check_fold_seconds, check_member_folds

            if "member_folds" in self.tagger_settings:
                check_member_folds(self.tagger_settings["member_folds"])
            if "member_fold_seconds" in self.tagger_settings:
                check_fold_seconds(self.tagger_settings["member_fold_seconds"])
        object.__setattr__(self, "tagger_settings", dict(self.tagger_settings))

    def _check_ensemble(self) -> None:
        from parsing.ensemble.registry import method_spec

        if self.ensemble is None:
            if self.ensemble_settings:
                raise ValueError("ensemble settings without an ensemble method")
        else:
            spec = method_spec(self.ensemble)  # unknown: ValueError listing the known ones
            if not isinstance(self.ensemble_settings, Mapping):
                raise ValueError(f"the ensemble's settings must be a mapping, not {self.ensemble_settings!r}")
            try:
                spec.build([]).set_params(**self.ensemble_settings)
            except (TypeError, ValueError) as error:  # scikit-learn: "Invalid parameter ..."
                raise ValueError(f"ensemble {self.ensemble}: {error}") from None
        object.__setattr__(self, "ensemble_settings", dict(self.ensemble_settings))

    # ------------------------------------------------------------------ building

    @classmethod
    def from_options(
        cls,
        *,
        names: Sequence[str] | None = None,
        tags: str = "gold",
        params: Mapping[str, Mapping[str, Any]] | None = None,
        ensemble: str | None = None,
        ensemble_params: Mapping[str, Any] | None = None,
        random_state: int = 0,
        jobs: int = 1,
        warm_from: str | Path | None = None,
        member_runner: MemberRunner | None = None,
        fold_runner: FoldRunner | None = None,
    ) -> TrainingPlan:
        """A plan from the options :func:`parsing.pipeline.train_models` has always taken.

        ``names`` None: every default member. ``params`` by member name, ``"tagger"`` for the
        tagger's: settings of members the plan does not train (and the tagger's with gold
        tags, the ensemble's without a method) are left out, as the pipeline always ignored
        them, so one table of settings (the app's ``MEMBER_PARAMS``) serves every round.
        ``warm_from`` makes a warm round continuing that model directory.

        Raises:
            ValueError: as the constructor.
        """
        chosen = tuple(names) if names is not None else tuple(member_names())
        given = params or {}
        return cls(
            members=chosen,
            tags=tags,  # type: ignore[arg-type]  # checked by the constructor
            settings={name: dict(given[name]) for name in chosen if given.get(name)},
            tagger_settings=dict(given.get("tagger") or {}) if tags == "predicted" else {},
            ensemble=ensemble or None,
            ensemble_settings=dict(ensemble_params or {}) if ensemble else {},
            seed=random_state,
            warm=warm_from is not None,
            warm_from=None if warm_from is None else str(warm_from),
            jobs=jobs,
            member_runner=member_runner,
            fold_runner=fold_runner,
        )

    def with_runners(self, *, member_runner: MemberRunner | None = None,
                     fold_runner: FoldRunner | None = None) -> TrainingPlan:
        """The same plan run by these runners."""
        return replace(self, member_runner=member_runner, fold_runner=fold_runner)

    # ------------------------------------------------------------------ reading

    def member_params(self, name: str) -> dict[str, Any]:
        """Member ``name``'s settings as the pipeline builds it: what it takes from the tag mode
        (:func:`parsing.members.tag_mode_params`), then the plan's settings (which win)."""
        if name not in self.members:
            raise ValueError(f"{name} is not a member of this plan ({', '.join(self.members)})")
        return {**tag_mode_params(name, self.tags), **self.settings.get(name, {})}

    def runners(self) -> tuple[MemberRunner | None, FoldRunner | None]:
        """``(member runner, fold runner)``: the plan's, else local process pools of ``jobs``
        processes when ``jobs > 1``, else None (one after another here)."""
        from parsing.member_fit import pool_runner
        from parsing.tagger.folds import pool_runner as fold_pool_runner

        local = self.jobs > 1
        return (self.member_runner or (pool_runner(self.jobs) if local else None),
                self.fold_runner or (fold_pool_runner(self.jobs) if local else None))

    def missing_files(self) -> list[tuple[str, str, str]]:
        """``(member, setting, path)`` of each setting that names a file or directory which is
        not there (the members' :attr:`~parsing.members.MemberSpec.path_settings`)."""
        missing = []
        for name, values in self.settings.items():
            for setting in member_spec(name).path_settings:
                path = values.get(setting)
                if path is not None and not Path(str(path)).exists():
                    missing.append((name, setting, str(path)))
        return missing

    def missing_requirements(self) -> list[str]:
        """Why a setting cannot be used here: an optional module it needs is not installed
        (the members' :attr:`~parsing.members.MemberSpec.setting_requires`), one sentence each
        with the command that installs it. The module is looked up, not imported."""
        missing = []
        for name, values in self.settings.items():
            for setting, module, install in member_spec(name).setting_requires:
                if values.get(setting) is not None and importlib.util.find_spec(module) is None:
                    missing.append(f"{name}.{setting} needs {module}, which is not installed here: {install}")
        return missing

    # ------------------------------------------------------------------ JSON

    def json_ready(self) -> bool:
        """True when every setting is plain JSON data (strings, numbers, lists, dicts), so
        :meth:`to_json` works; a caller may hand a member an object (a cluster lexicon)."""
        parts = (self.settings, self.tagger_settings, self.ensemble_settings)
        return all(_json_ready(value) for value in parts)

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON-ready data (no runners); :meth:`from_json` reads it back.

        Raises:
            ValueError: a setting that is not plain JSON data, naming it.
        """
        for owner, values in [*self.settings.items(), ("tagger", self.tagger_settings),
                              ("ensemble", self.ensemble_settings)]:
            for key, value in values.items():
                if not _json_ready(value):
                    kind = type(value).__name__
                    raise ValueError(f"setting {owner}.{key} ({kind}) cannot be saved as JSON")
        data: dict[str, Any] = {"format": PLAN_FORMAT}
        for item in fields(self):
            if item.name not in _RUNTIME:
                value = getattr(self, item.name)
                data[item.name] = list(value) if item.name == "members" else value
        return json.loads(json.dumps(data))  # type: ignore[no-any-return]  # deep, plain copy

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, member_runner: MemberRunner | None = None,
                  fold_runner: FoldRunner | None = None) -> TrainingPlan:
        """The plan :meth:`to_json` wrote (runners given again, if any).

        Raises:
            ValueError: not a plan, a later format, an unknown key, or a plan that does not hold.
        """
        if not isinstance(data, Mapping) or "members" not in data:
            raise ValueError("not a training plan: expected an object with a 'members' list")
        version = data.get("format", PLAN_FORMAT)
        if version != PLAN_FORMAT:
            raise ValueError(f"training plan format {version!r}; this version reads format {PLAN_FORMAT}")
        names = {item.name for item in fields(cls)} - set(_RUNTIME)
        unknown = sorted(set(data) - names - {"format"})
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)} in a training plan; "
                             f"known: {', '.join(sorted(names))}")
        members = data["members"]
        if not isinstance(members, list | tuple):
            raise ValueError(f"a training plan's members must be a list, not {members!r}")
        values = {key: data[key] for key in names if key in data}
        return cls(**{**values, "members": tuple(members)}, member_runner=member_runner,
                   fold_runner=fold_runner)
