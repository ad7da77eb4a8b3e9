"""Settings read from the environment: ``WHILEAI_*`` first, then the legacy ``ZEROPROOF_*``.

An empty value counts as unset, so ``WHILEAI_PURE= python ...`` does not switch anything on.

>>> import os
>>> os.environ["WHILEAI_EXAMPLE_FLAG"] = ""
>>> setting("EXAMPLE_FLAG") is None
True
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["flag", "home", "setting"]

_PREFIXES = ("WHILEAI_", "ZEROPROOF_")


def setting(name: str, default: str | None = None) -> str | None:
    """Return the value of ``WHILEAI_<name>`` (else ``ZEROPROOF_<name>``), or ``default``.

    Args:
        name: the setting's name without prefix, for example ``"HOME"``.
        default: what to return when neither variable holds a non-empty value.
    """
    for prefix in _PREFIXES:
        value = os.environ.get(prefix + name, "")
        if value != "":
            return value
    return default


def flag(name: str) -> bool:
    """Return True when the setting holds a truthy value (``1``, ``true``, ``yes``, ``on``)."""
    value = setting(name)
    return value is not None and value.strip().lower() in {"1", "true", "yes", "on"}


def home() -> Path:
    """Return the whileai home folder: ``WHILEAI_HOME``, else ``~/.whileai``. Not created here."""
    value = setting("HOME")
    return Path(value).expanduser() if value else Path.home() / ".whileai"
