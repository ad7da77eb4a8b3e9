"""Subcommands of the ``whileai`` CLI, one module per area, each with ``register(subparsers)``."""
