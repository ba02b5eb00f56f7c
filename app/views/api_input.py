"""How every JSON endpoint reads its input: one convention, one error shape.

* A body is read with :func:`json_body` against a schema of :mod:`app.views.api_schemas`; a
  body that is not a JSON object is a **400**, a field of the wrong type or value a **422**.
* A query argument that must be a number is read with :func:`query_int` (422 when it is not
  one, or out of range).
* Both raise :class:`InputError`, answered as ``{"error": "<field>: <problem>", "field":
  "<field>"}`` where ``<field>`` is the path of the bad value (``heads[3]``,
  ``self_training.source``; ``""`` for the body as a whole).
* Integer ids in URLs (``<int:...>``) above :data:`MAX_ID` are not found (404) instead of
  overflowing the database's integer columns.

The schemas are a small subset of JSON Schema (``type`` (a name or a list of names), ``enum``,
``minimum``/``maximum``, ``maxLength``, ``maxItems``, ``items``, ``properties``, ``required``),
checked by :func:`first_error`; the same schemas describe the API in ``/api/openapi.json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import BadRequest
from werkzeug.routing import IntegerConverter

MAX_ID = 2**31 - 1
"""Largest id or version number (PostgreSQL ``integer``)."""

_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "number": (lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number"),
    "string": (lambda v: isinstance(v, str), "a string"),
    "boolean": (lambda v: isinstance(v, bool), "true or false"),
    "array": (lambda v: isinstance(v, list), "a list"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "null": (lambda v: v is None, "null"),
}


class InputError(Exception):
    """A request's input is wrong: ``field`` (its path; ``""`` for the whole body) and why."""

    def __init__(self, field: str, problem: str, status: int = 422) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field, self.problem, self.status = field, problem, status


def first_error(value: Any, schema: Mapping[str, Any], path: str = "") -> InputError | None:
    """The first way ``value`` breaks ``schema`` (depth first, in the schema's field order)."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[name][0](value) for name in names):
            return InputError(path, "must be " + " or ".join(_TYPES[name][1] for name in names))
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join("null" if choice is None else str(choice) for choice in schema["enum"])
        return InputError(path, f"must be one of {choices}")
    if _TYPES["number"][0](value):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            return InputError(path, f"must be from {low} to {high}")
    elif isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        return InputError(path, f"must have at most {schema['maxLength']} characters")
    elif isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            return InputError(path, f"must have at most {schema['maxItems']} items")
        for index, item in enumerate(value):
            if "items" in schema and (error := first_error(item, schema["items"], f"{path}[{index}]")):
                return error
    elif isinstance(value, dict):
        for name in schema.get("required", ()):
            if name not in value:
                return InputError(_join(path, name), "is required")
        for name, child in schema.get("properties", {}).items():
            if name in value and (error := first_error(value[name], child, _join(path, name))):
                return error
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def json_body(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The request's JSON object, checked against ``schema``.

    :raise InputError: 400 when the body is not a JSON object or nests deeper than
        :data:`MAX_DEPTH`, 422 for a wrong field.
    """
    if not request.is_json:
        raise InputError("", "the body must be a JSON object", status=400)
    text = request.get_data(cache=True, as_text=True)
    if (depth := nesting_depth(text)) > MAX_DEPTH:
        raise InputError("", f"the body nests lists and objects {depth} deep; at most {MAX_DEPTH}",
                         status=400)
    if "\\u0000" in text or "\x00" in text:
        raise InputError("", NUL_PROBLEM, status=400)
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise InputError("", "the body must be a JSON object", status=400)
    if error := first_error(body, schema):
        raise error
    return body


MAX_DEPTH = 32
"""How deep lists and objects may nest in a request body (the deepest schema has 3 levels); a
deeper body is refused before it is parsed (1,000 levels made the parser recurse out, issue #31)."""

_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def nesting_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in JSON ``text`` (brackets inside strings do not count).

    >>> nesting_depth('{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    for token in _STRUCTURE.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif mark in "]}":
            depth -= 1
    return deepest


def query_int(name: str, default: int, *, minimum: int = 0, maximum: int = MAX_ID) -> int:
    """Query argument ``name`` as an integer from ``minimum`` to ``maximum`` (``default`` when absent).

    :raise InputError: not a whole number, or out of range.
    """
    text = request.args.get(name, "")
    if text == "":
        return default
    if not re.fullmatch(r"-?[0-9]{1,12}", text) or not minimum <= int(text) <= maximum:
        raise InputError(name, f"must be a whole number from {minimum} to {maximum}")
    return int(text)


class IdConverter(IntegerConverter):
    """``<int:...>`` in URLs: at most :data:`MAX_ID` (a longer number is a 404, not an overflow)."""

    def __init__(self, url_map: Any, fixed_digits: int = 0, min: int | None = None,  # noqa: A002
                 max: int | None = MAX_ID, signed: bool = False) -> None:  # noqa: A002
        super().__init__(url_map, fixed_digits=fixed_digits, min=min, max=max, signed=signed)


def _answer(error: InputError) -> tuple[Response, int]:
    return jsonify(error=str(error), field=error.field), error.status


NUL_PROBLEM = "the request holds a NUL character (U+0000), which no text may contain"


def refuse_nul() -> None:
    """Before every request: a query argument or form field (name or value) with a NUL
    character is a 400 (PostgreSQL cannot store one; issue #31). Uploaded files are the
    importer's to check, naming the line."""
    fields = [*request.args.items(multi=True)]
    if request.method == "POST":
        fields += request.form.items(multi=True)
    for name, value in fields:
        if "\x00" in name or "\x00" in value:
            field = name.replace("\x00", "")
            if request.path.startswith("/api/"):
                raise InputError(field, NUL_PROBLEM, status=400)
            raise BadRequest(f"{NUL_PROBLEM} (field {field!r}).")


def install(app: Flask) -> None:
    """Bound ``<int:...>`` URL parts, refuse NUL characters in query and form values
    (:func:`refuse_nul`) and answer :class:`InputError` as JSON (before routes exist)."""
    app.url_map.converters["int"] = IdConverter
    app.register_error_handler(InputError, _answer)
    app.before_request(refuse_nul)
