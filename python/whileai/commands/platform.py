"""Platform commands (login, status, logout, datasets, pull, purge, signup)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add the platform commands to the CLI."""
