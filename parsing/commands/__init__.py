"""Sub-commands of ``python -m parsing``; one module each, each with ``register(subparsers)``."""
