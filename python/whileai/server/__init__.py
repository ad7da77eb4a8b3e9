"""``whileai serve``: the platform (datasets, agents, accounts) as a self-hosted server.

Layers, each knowing only the one below: ``routes`` (parse, authenticate, call a service),
``services`` (the rules: ownership, quotas, profiles), ``store`` (SQLAlchemy Core tables, blob
parts on disk, Alembic migrations). Needs the ``server`` extra (``pip install 'whileai[server]'``).
The core (``whileai.simulations``) never imports this package.
"""

from __future__ import annotations

import sys

__all__ = ["extra_missing", "require_extra"]


def require_extra() -> None:
    """Raise ``ImportError`` naming the ``server`` extra when its packages are missing.

    >>> require_extra()  # doctest: +SKIP
    """
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn", "sqlalchemy", "alembic", "jinja2")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(
            f"whileai serve needs {', '.join(missing)}: pip install 'whileai[server]'"
        )


def extra_missing(command: str) -> bool:
    """``True``, after saying what to install on stderr (as ``command``), when the ``server``
    extra is missing: what ``whileai serve`` and ``whileai view`` check first (exit 2).

    >>> extra_missing("whileai view")  # doctest: +SKIP
    False
    """
    try:
        require_extra()
    except ImportError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return True
    return False
