"""The server's settings: one frozen value built from flags and the environment.

>>> cfg = ServerConfig(directory=Path("/tmp/x"))
>>> cfg.database_url
'sqlite:////tmp/x/whileai.db'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_PORT", "ServerConfig", "default_directory"]

DEFAULT_PORT = 6070
GIB = 1024**3


def default_directory() -> Path:
    """``WHILEAI_SERVER_DIR``, else ``~/.whileai/server``."""
    env = os.environ.get("WHILEAI_SERVER_DIR")
    return Path(env).expanduser() if env else Path.home() / ".whileai" / "server"


def _sqlalchemy_url(url: str) -> str:
    """Pick the psycopg (v3) driver for a plain ``postgresql://`` URL."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """Where the server keeps its data and the limits it enforces.

    Attributes:
        directory: the server folder (SQLite file, dataset parts, temp uploads).
        database: a SQLAlchemy/PostgreSQL URL; empty means SQLite in ``directory``.
        max_storage_bytes: stored bytes per account (storage quota).
        max_rows_per_dataset: rows one dataset may hold.
        max_request_bytes: the largest request body accepted (413 above it).
        open_signup: whether ``POST /v1/signup`` may create accounts.
    """

    directory: Path
    database: str = ""
    max_storage_bytes: int = 50 * GIB
    max_rows_per_dataset: int = 50_000_000
    max_request_bytes: int = 8 * GIB
    open_signup: bool = False

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
