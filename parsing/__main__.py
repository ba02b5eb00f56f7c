"""``python -m parsing``: see :mod:`parsing.cli`."""

from parsing.cli import main

raise SystemExit(main())
