"""Command line: ``python -m parsing COMMAND ...``.

Each module in :mod:`parsing.commands` defines ``register(subparsers)``, which adds its
sub-commands with ``set_defaults(run=function)``; ``function(args) -> int`` is the exit code.

Commands run with BLAS limited to one thread: the parsers multiply small matrices, for which
OpenBLAS's threads cost far more in synchronisation than they save (parsing Afrikaans with the
second-order graph parser took several times longer with two threads on a busy machine).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from threadpoolctl import threadpool_limits

import parsing.commands
from parsing.conllu_io import ConlluError
from parsing.persist import ModelFormatError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command module's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="python -m parsing", description="arcvote parsing library: train, parse, evaluate."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_info in sorted(pkgutil.iter_modules(parsing.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"parsing.commands.{module_info.name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; bad input (malformed CoNLL-U, a missing file, an unknown parser
    name) exits with status 2 and a one-line message."""
    args = build_parser().parse_args(argv)
    try:
        with threadpool_limits(limits=1, user_api="blas"):  # see the module docstring
            status: int = args.run(args)
    except (ConlluError, FileNotFoundError, ModelFormatError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return status
