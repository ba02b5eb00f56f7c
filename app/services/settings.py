"""A treebank's settings (issue #30): its language, label and feature inventories and guidelines link.

The **label inventory** (what the editor, the re-parse and adjudication accept) is the union of:

* UD's 37 universal relations (:data:`app.services.validation.UD_RELATIONS`);
* the subtypes the UD validator permits for the treebank's language (``udtools``'
  ``data/deprels.json``: the relations whose ``permitted`` is set for the language code);
* every relation the treebank's imported files use (``Treebank.labels``);
* the relations a curator added (``Treebank.extra_labels``).

The **feature inventory** is what the editor offers for FEATS: the ``Feature=Value`` pairs the
validator documents for the language (``data/feats.json``) and those a curator added
(``Treebank.extra_feats``). FEATS are checked for their form only, so this is a list of
suggestions, not a closed set.

The validator's data is read once per process (about 0.1 s) and per language from then on.
Functions flush and never commit; each change is one ``settings`` audit event naming the
fields that changed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from app.models import Treebank, User
from app.services import DbSession
from app.services.audit import record
from app.services.validation import UD_RELATIONS, allowed_labels

LANGUAGE_PATTERN = re.compile(r"[a-z]{2,3}|")
"""An ISO 639 code (two or three lower-case letters) as UD file names use them, or "" (none)."""
LABEL_PATTERN = re.compile(r"([a-z]+)(?::[a-z]+)?")
"""A basic UD relation: a universal relation, optionally with one lower-case subtype."""
FEAT_PATTERN = re.compile(r"[A-Z][A-Za-z0-9]*(?:\[[a-z0-9]+\])?=[A-Z0-9][A-Za-z0-9]*")
"""One ``Feature=Value`` pair (UD's character classes; ``Feature[layer]`` allowed)."""
MAX_EXTRA = 200
"""At most this many curator-added labels, and as many features."""
MAX_URL = 2000


class SettingsError(ValueError):
    """A refused setting; ``field`` names the form field at fault."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@lru_cache(maxsize=2)
def _validator_data(name: str) -> dict[str, Any]:
    """``udtools``' ``data/<name>.json`` (``deprels`` or ``feats``), keyed by language code."""
    text = (resources.files("udtools") / "data" / f"{name}.json").read_text(encoding="utf-8")
    found: dict[str, Any] = json.loads(text)["deprels" if name == "deprels" else "features"]
    return found


@lru_cache(maxsize=64)
def validator_relations(language: str) -> tuple[str, ...]:
    """The relations (universal and subtypes) the UD validator permits for ``language``,
    sorted; empty when it has no relation data for that code."""
    data = _validator_data("deprels").get(language) or {}
    return tuple(sorted(label for label, info in data.items() if info.get("permitted")))


@lru_cache(maxsize=64)
def validator_features(language: str) -> tuple[str, ...]:
    """The ``Feature=Value`` pairs the UD validator documents for ``language`` (universal
    and language-specific values of its permitted features), sorted; empty when unknown."""
    data = _validator_data("feats").get(language) or {}
    return tuple(sorted(f"{feature}={value}" for feature, info in data.items() if info.get("permitted")
                        for value in [*info.get("uvalues", []), *info.get("lvalues", [])]))


def label_inventory(treebank: Treebank) -> list[str]:
    """Every relation the treebank accepts (module docstring), sorted."""
    return allowed_labels([*treebank.labels, *(treebank.extra_labels or []),
                           *validator_relations(treebank.language or "")])


def feature_inventory(treebank: Treebank) -> list[str]:
    """The ``Feature=Value`` pairs offered for the treebank (module docstring), sorted."""
    return sorted({*validator_features(treebank.language or ""), *(treebank.extra_feats or [])})


@dataclass(frozen=True)
class Inventory:
    """The label inventory in its four parts, as the settings page lists them: ``universal``,
    ``language`` (the validator's subtypes for the language), ``imported`` (used by the
    treebank's files and in neither of those) and ``added`` (by a curator)."""

    universal: list[str]
    language: list[str]
    imported: list[str]
    added: list[str]


def inventory(treebank: Treebank) -> Inventory:
    """The treebank's labels split by where they come from (see :class:`Inventory`)."""
    language = [label for label in validator_relations(treebank.language or "") if label not in UD_RELATIONS]
    known = {*UD_RELATIONS, *language}
    imported = sorted({label for label in treebank.labels if label and label != "_"} - known)
    return Inventory(list(UD_RELATIONS), language, imported, sorted(treebank.extra_labels or []))


def label_problem(label: str) -> str | None:
    """Why ``label`` cannot be added to an inventory (None when it can): it must be a universal
    relation with at most one lower-case subtype (the UD validator's rule at level 2)."""
    match = LABEL_PATTERN.fullmatch(label)
    if match is None:
        return f"{label!r} is not a UD relation: write a universal relation and one subtype, e.g. advmod:emph"
    if match[1] not in UD_RELATIONS:
        return f"{label!r}: {match[1]!r} is not one of UD's universal relations"
    return None


def _split(text: str) -> list[str]:
    """The items of a space-, comma- or line-separated list, in order, without repeats."""
    return list(dict.fromkeys(item for item in re.split(r"[\s,;]+", text.strip()) if item))


def read_labels(text: str) -> list[str]:
    """Curator-added labels from the form's text; :raise SettingsError: naming a bad one."""
    labels = _split(text)
    for label in labels:
        if (problem := label_problem(label)) is not None:
            raise SettingsError(problem, "extra_labels")
    if len(labels) > MAX_EXTRA:
        raise SettingsError(f"at most {MAX_EXTRA} added labels", "extra_labels")
    return sorted(labels)


def read_feats(text: str) -> list[str]:
    """Curator-added ``Feature=Value`` pairs; :raise SettingsError: naming a bad one."""
    pairs = _split(text)
    for pair in pairs:
        if FEAT_PATTERN.fullmatch(pair) is None:
            raise SettingsError(f"{pair!r} is not a Feature=Value pair (e.g. NounClass=Wol1)", "extra_feats")
    if len(pairs) > MAX_EXTRA:
        raise SettingsError(f"at most {MAX_EXTRA} added features", "extra_feats")
    return sorted(pairs)


def read_language(text: str) -> str:
    """The language code from the form (``""``: none); :raise SettingsError: not a code."""
    code = text.strip().lower()
    if LANGUAGE_PATTERN.fullmatch(code) is None:
        raise SettingsError(f"{text.strip()!r} is not a language code: give its ISO 639 code, e.g. wo or tr",
                            "language")
    return code


def read_url(text: str) -> str:
    """The guidelines link (``""``: none); :raise SettingsError: not an http(s) address."""
    url = text.strip()
    if url and (not re.fullmatch(r"https?://[^\s<>\"]+", url) or len(url) > MAX_URL):
        raise SettingsError("the guidelines link must be an http:// or https:// address", "guidelines_url")
    return url


def update(session: DbSession, treebank: Treebank, changes: dict[str, Any], *, by: User) -> list[str]:
    """Apply ``changes`` (any of ``language``, ``extra_labels``, ``extra_feats``,
    ``guidelines_url``, already read by the ``read_*`` functions) and record one ``settings``
    event with the old and new value of each field that changed. Returns those fields' names."""
    changed = [name for name, value in changes.items() if getattr(treebank, name) != value]
    if changed:
        previous = {name: getattr(treebank, name) for name in changed}
        for name in changed:
            setattr(treebank, name, changes[name])
        record(session, "settings", user=by, treebank=treebank, previous=previous,
               settings={name: changes[name] for name in changed})
    session.flush()
    return changed


def add_label(session: DbSession, treebank: Treebank, label: str, *, by: User) -> bool:
    """Add one relation to the curator's labels (from the editor); False when the inventory
    has it already. :raise SettingsError: not a UD relation, or the list is full."""
    label = label.strip()
    if (problem := label_problem(label)) is not None:
        raise SettingsError(problem, "label")
    if label in label_inventory(treebank):
        return False
    labels = read_labels(" ".join([*(treebank.extra_labels or []), label]))
    update(session, treebank, {"extra_labels": labels}, by=by)
    return True


def set_language_if_blank(treebank: Treebank, language: str | None) -> bool:
    """Give a treebank imported without a language the one a later import names (True when
    set); a language already set is kept (changing it is the settings page's job)."""
    code = (language or "").strip().lower()
    if treebank.language or not code or LANGUAGE_PATTERN.fullmatch(code) is None:
        return False
    treebank.language = code
    return True
