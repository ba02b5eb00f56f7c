"""Plugins: external parsers given as a command, configured per treebank from the command line and
run during pre-annotation like a member (issue #16)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import TreeVersion, User
from app.parser_models import ExternalParser
from app.services.external import UploadError, set_plugin
from app.services.preannotate import pool_targets
from parsing.conllu_io import parse_conllu
from parsing.external import ExternalParserError, run_command_parser
from tests.app.helpers import import_without_dev, run_round
from tests.app.test_compare import GOLD

# a "parser" attaching every word to the previous one (the first to ROOT); {mangle} may break it
CHAIN = (
    "import sys\n"
    "for line in sys.stdin:\n"
    "    cols = line.rstrip('\\n').split('\\t')\n"
    "    if len(cols) == 10 and cols[0].isdigit():\n"
    "        cols[6], cols[7] = str(int(cols[0]) - 1), 'dep' if cols[0] != '1' else 'root'\n"
    "        {mangle}\n"
    "    print('\\t'.join(cols))\n"
)


def script(tmp_path: Path, name: str, mangle: str = "pass") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(CHAIN.format(mangle=mangle))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def test_preannotation_runs_plugins_and_reports_a_failing_one(
    app: Flask, session: Session, user: User, fast: Path, tmp_path: Path
) -> None:
    treebank = import_without_dev(session, user, train=20, pool=6)
    set_plugin(session, treebank, label="chain", command=script(tmp_path, "chain"), timeout=30, user=user)
    set_plugin(
        session,
        treebank,
        label="mangler",
        timeout=30,
        user=user,
        command=script(tmp_path, "mangler", "cols[1] = cols[1] + 'x'"),
    )
    session.commit()
    pool = pool_targets(session, treebank)
    run_round(app, session, user, treebank, ["graph1"])
    chain = session.scalars(select(TreeVersion).where(TreeVersion.name == "chain")).all()
    assert sorted(tree.sentence_id for tree in chain) == sorted(pool)
    assert all(tree.heads == list(range(len(tree.heads))) for tree in chain)  # 0, 1, 2, ...
    assert not session.scalars(select(TreeVersion).where(TreeVersion.name == "mangler")).all()
    job = session.scalars(select(Job).order_by(Job.id.desc())).first()
    assert job is not None and job.result is not None
    plugins = job.result["plugins"]
    assert plugins["chain"] == {"sentences": len(pool), "error": None}
    assert plugins["mangler"]["sentences"] == 0
    assert "returned other tokens: word 1 is" in plugins["mangler"]["error"]


def test_plugin_settings_are_checked(session: Session, user: User) -> None:
    treebank = import_without_dev(session, user, train=2, pool=1)
    with pytest.raises(UploadError, match="timeout"):
        set_plugin(session, treebank, label="p", command="cat", timeout=0, user=user)
    with pytest.raises(UploadError, match="command"):
        set_plugin(session, treebank, label="p", command="  ", timeout=5, user=user)
    with pytest.raises(UploadError, match="parser label"):
        set_plugin(session, treebank, label="eager", command="cat", timeout=5, user=user)


def test_cli_configures_and_removes_a_plugin(
    runner: FlaskCliRunner, session: Session, user: User, make_user: Callable[..., int]
) -> None:
    make_user("admin", admin=True)
    import_without_dev(session, user, train=2, pool=1)
    session.commit()
    added = runner.invoke(
        args=[
            "treebank",
            "plugin",
            "no dev",
            "udpipe",
            "--command",
            "udpipe --parse m.udpipe",
            "--timeout",
            "120",
        ]
    )
    assert added.exit_code == 0, added.output
    parser = session.scalars(select(ExternalParser)).one()
    assert (parser.label, parser.command, parser.timeout_s) == ("udpipe", "udpipe --parse m.udpipe", 120.0)
    assert runner.invoke(args=["treebank", "plugin", "no dev", "udpipe"]).exit_code != 0
    assert runner.invoke(args=["treebank", "plugin", "no dev", "udpipe", "--url", "http://x.org/",
                               "--command", "cat"]).exit_code != 0
    web = runner.invoke(args=["treebank", "plugin", "no dev", "web", "--url", "https://parser.example/parse"])
    assert web.exit_code == 0, web.output
    bad = runner.invoke(args=["treebank", "plugin", "no dev", "web", "--url", "file:///etc/passwd"])
    assert bad.exit_code != 0 and "only http:// and https://" in bad.output
    removed = runner.invoke(args=["treebank", "plugin", "no dev", "udpipe", "--remove"])
    assert removed.exit_code == 0
    session.expire_all()
    found = {p.label: (p.command, p.url) for p in session.scalars(select(ExternalParser))}
    assert found == {"udpipe": (None, None), "web": (None, "https://parser.example/parse")}


# -- the runner (parsing.external) -------------------------------------------------------------


def test_plugin_command_parses_through_stdin_and_stdout(tmp_path: Path) -> None:
    raws = parse_conllu(GOLD)
    script = tmp_path / "chain.py"
    script.write_text(CHAIN.format(mangle="pass"))
    parses = run_command_parser([sys.executable, str(script)], raws, timeout=20, name="chain")
    assert [p.heads.tolist() for p in parses] == [[-1, 0, 1, 2], [-1, 0, 1], [-1, 0, 1]]
    script.write_text(CHAIN.format(mangle="cols[1] = cols[1].upper() if cols[1] == 'dog' else cols[1]"))
    with pytest.raises(
        ExternalParserError, match=r"sentence 1 \(sent_id s1\): returned other tokens: word 2"
    ):
        run_command_parser([sys.executable, str(script)], raws, timeout=20, name="chain")


def test_plugin_command_is_killed_after_its_timeout() -> None:
    raws = parse_conllu(GOLD)
    started = datetime.now(UTC)
    with pytest.raises(ExternalParserError, match=r"did not finish within 0.5 s"):
        run_command_parser([sys.executable, "-c", "import time; time.sleep(30)"], raws, timeout=0.5)
    assert (datetime.now(UTC) - started).total_seconds() < 10


def test_plugin_command_failures_are_named() -> None:
    raws = parse_conllu(GOLD)
    with pytest.raises(ExternalParserError, match="exited with status 3: boom"):
        run_command_parser(
            [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"], raws, timeout=20
        )
    with pytest.raises(ExternalParserError, match="cannot run"):
        run_command_parser(["/nonexistent/parser"], raws, timeout=5)
