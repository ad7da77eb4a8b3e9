"""The server's settings: one frozen value built from flags and the environment.

>>> cfg = ServerConfig(directory=Path("/tmp/x"))
>>> cfg.database_url
'sqlite:////tmp/x/whileai.db'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from whileai.config import home

__all__ = ["DEFAULT_PORT", "LIMITS", "ServerConfig", "default_directory"]

DEFAULT_PORT = 6070
GIB = 1024**3


def default_directory() -> Path:
    """``WHILEAI_SERVER_DIR``, else ``server`` in the whileai home (``WHILEAI_HOME``, else
    ``~/.whileai``)."""
    env = os.environ.get("WHILEAI_SERVER_DIR")
    return Path(env).expanduser() if env else home() / "server"


def _sqlalchemy_url(url: str) -> str:
    """Pick the psycopg (v3) driver for a PostgreSQL URL that names none (``postgresql://``,
    or the ``postgres://`` many hosts hand out); any other URL is kept as it is."""
    import sqlalchemy as sa  # the server extra: the CLI imports this module without it

    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return url  # refused, with the reason, where the store opens it (store.db.dialect_of)
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return url


# The limits a server enforces, each at least 1 (``whileai serve --max-...`` flags).
LIMITS = ("max_storage_bytes", "max_rows_per_dataset", "max_request_bytes",
          "max_pending_exports", "max_exports_per_account", "read_timeout", "idle_timeout",
          "min_body_rate", "max_auth_failures", "max_signups")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """Where the server keeps its data and the limits it enforces.

    Attributes:
        directory: the server folder (SQLite file, dataset parts, temp uploads).
        database: a SQLAlchemy/PostgreSQL URL; empty means SQLite in ``directory``.
        max_storage_bytes: stored bytes per account (storage quota).
        max_rows_per_dataset: rows one dataset may hold.
        max_request_bytes: the largest request body accepted (413 above it).
        max_pending_exports: OTLP export requests the trace receiver holds at once (reading,
            queued or being stored); one more is answered 429 with ``Retry-After`` at once, so a
            flood of spans never queues without bound.
        max_exports_per_account: of those, how many one account may hold (at most
            ``max_pending_exports``), so one account cannot take every place.
        read_timeout: seconds a client has to send a request's headers, and to deliver each
            piece of its body; a connection that misses it is closed (408 once a request began).
        idle_timeout: seconds a kept-alive connection may sit idle between requests.
        min_body_rate: bytes per second a body must average after the first ``read_timeout``
            seconds, so a body trickled in a byte at a time is cut off too.
        max_auth_failures: refused credentials per client address (and per account a
            delegated credential names) per minute; past them, 429 with ``Retry-After``.
        max_signups: sign-ups per client address per hour.
        open_signup: whether ``POST /v1/signup`` may create accounts.
        secure_cookies: mark the pages' cookies ``Secure`` on every request (without it, they
            are ``Secure`` when the request came over https, as a TLS proxy reports).
    """

    directory: Path
    database: str = ""
    max_storage_bytes: int = 50 * GIB
    max_rows_per_dataset: int = 50_000_000
    max_request_bytes: int = 8 * GIB
    max_pending_exports: int = 8
    max_exports_per_account: int = 4
    read_timeout: int = 30
    idle_timeout: int = 5
    min_body_rate: int = 64 * 1024
    max_auth_failures: int = 60
    max_signups: int = 20
    open_signup: bool = False
    secure_cookies: bool = False

    def __post_init__(self) -> None:
        for name in LIMITS:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1; got {getattr(self, name)}")

    @property
    def database_url(self) -> str:
        """The SQLAlchemy URL of the metadata store."""
        if self.database:
            return _sqlalchemy_url(self.database)
        return f"sqlite:///{self.directory / 'whileai.db'}"

    @property
    def parts_dir(self) -> Path:
        """Finished, immutable dataset parts."""
        return self.directory / "parts"

    @property
    def tmp_dir(self) -> Path:
        """Uploads in flight; emptied at every start."""
        return self.directory / "tmp"
