"""The documentation stays true: every link resolves, and every command it names exists
(``flask --app app ...`` commands, ``python -m parsing`` commands, ``make`` targets, bench scripts)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click import Group

from app import create_app
from parsing.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text_of(doc))
    missing = [link for link in links if "://" not in link and not (doc.parent / link).exists()]
    assert not missing, f"{doc.name} links to missing files: {missing}"


def flask_commands() -> set[tuple[str, ...]]:
    """Every ``flask --app app`` command path the docs name: inline ones and the lines of the
    user guide's command block."""
    found = set()
    for doc in DOCS:
        for match in re.finditer(r"flask --app app ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)", text_of(doc)):
            found.add(tuple(match.group(1).split()))
    guide = text_of(ROOT / "docs" / "user-guide.md")
    block = guide.split("Commands (`flask --app app ...`, inside `.venv`):", 1)[1].split("\n\n", 2)[1]
    for line in block.splitlines():
        words = re.findall(r"^\s+([a-z][a-z-]*) ([a-z][a-z-]*)", line)
        found.update(words)
    return found


def test_every_flask_command_in_the_docs_exists() -> None:
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    commands = flask_commands()
    assert ("treebank", "import") in commands and ("user", "create") in commands  # the parse found them
    with app.app_context():
        ctx = app.cli.make_context("flask", [], resilient_parsing=True)
        missing = []
        for path in commands:
            command = app.cli.get_command(ctx, path[0])
            if command is None:
                missing.append(path)
            elif len(path) > 1 and isinstance(command, Group) and command.get_command(ctx, path[1]) is None:
                # "treebank import" vs "db upgrade": the second word may be an argument of a command
                missing.append(path)
    assert not missing, f"the docs name flask commands that do not exist: {missing}"


def test_every_parsing_command_in_the_docs_exists() -> None:
    named = {word for doc in DOCS for word in re.findall(r"python -m parsing ([a-z][a-z-]*)", text_of(doc))}
    parser = build_parser()
    choices = next(action.choices for action in parser._actions if getattr(action, "choices", None))
    assert named and not named - set(choices), f"unknown parsing commands: {sorted(named - set(choices))}"


def test_every_make_target_and_bench_script_in_the_docs_exists() -> None:
    makefile = text_of(ROOT / "Makefile")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    named = {word for doc in DOCS for word in re.findall(r"`make ([a-z][a-z-]*)", text_of(doc))}
    assert {"run", "test"} <= named and not named - targets, f"unknown make targets: {named - targets}"
    scripts = {name for doc in DOCS for name in re.findall(r"\bbench/([a-z_]+\.py)\b", text_of(doc))}
    missing = sorted(name for name in scripts if not (ROOT / "bench" / name).exists())
    assert scripts and not missing, f"the docs name bench scripts that do not exist: {missing}"
