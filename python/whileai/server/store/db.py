"""Open the metadata store: an engine for the URL's dialect, migrated to the newest schema.

SQLite runs in WAL mode and every transaction starts with ``BEGIN IMMEDIATE`` (but those of a
:func:`reading` connection), so concurrent writers queue on the lock instead of failing
half-way; PostgreSQL uses its own locking
(``SELECT ... FOR UPDATE`` on the account row in the services layer).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, Literal, get_args

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from whileai.errors import ConfigError
from whileai.server.store.tables import settings

__all__ = ["Dialect", "dialect_of", "migrate", "open_engine", "reading", "server_secret"]

Dialect = Literal["sqlite", "postgresql"]
SUPPORTED: tuple[Dialect, ...] = get_args(Dialect)

_MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_READS_ONLY = "whileai_reads_only"  # the execution option ``reading`` sets
# A commit that grows the log past this many pages checkpoints it; the server's background
# thread (``store.checkpoint``) does that long before, so this is the backstop.
AUTOCHECKPOINT_PAGES = 16384
WAL_LIMIT_BYTES = 64 * 1024 * 1024  # a log grown past this is cut back when it restarts


def dialect_of(url: str) -> Dialect:
    """The store's dialect, read from the URL by SQLAlchemy (not from its spelling).

    >>> dialect_of("sqlite:////srv/whileai.db"), dialect_of("postgresql+psycopg://u@h/db")
    ('sqlite', 'postgresql')
    >>> dialect_of("mysql://root:secret@db/whileai")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    whileai.errors.ConfigError: the database URL mysql://root:***@db/whileai uses 'mysql', ...

    Raises:
        ConfigError: the URL does not parse, or names a dialect other than SQLite/PostgreSQL.
    """
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        scheme = url.partition(":")[0]
        raise ConfigError(f"the database URL (scheme {scheme!r}) does not parse; use "
                          "sqlite:///PATH or postgresql://USER@HOST/DATABASE") from None
    name = parsed.get_backend_name()
    for known in SUPPORTED:
        if name == known:
            return known
    raise ConfigError(f"the database URL {parsed.render_as_string(hide_password=True)} uses "
                      f"{name!r}, which whileai serve does not support; use sqlite:///PATH or "
                      f"postgresql://USER@HOST/DATABASE (supported: {', '.join(SUPPORTED)})")


def open_engine(url: str) -> sa.Engine:
    """Create the engine for ``url`` (SQLite file or PostgreSQL; any other dialect is refused
    by :func:`dialect_of`)."""
    if dialect_of(url) == "sqlite":
        engine = sa.create_engine(url, connect_args={"timeout": 60, "check_same_thread": False},
                                  pool_size=8, max_overflow=16)

        @sa.event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
            cursor.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            cursor.close()

        @sa.event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            reads_only = conn.get_execution_options().get(_READS_ONLY, False)
            conn.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")

        return engine
    return sa.create_engine(url, pool_size=8, max_overflow=16, pool_pre_ping=True)


def reading(engine: sa.Engine) -> sa.Connection:
    """A connection that only reads: on SQLite its transactions begin deferred, so (in WAL mode)
    it reads the last commit at once instead of queueing behind a writer's ``BEGIN IMMEDIATE``
    in SQLite's busy handler, which sleeps in steps of up to 100 ms."""
    return engine.connect().execution_options(**{_READS_ONLY: True})


def migrate(engine: sa.Engine, revision: str = "head") -> None:
    """Upgrade the database to ``revision`` (the newest by default; a no-op when current).

    On SQLite, foreign keys are off while the migrations run: a migration that rebuilds a table
    (copy, drop, rename) would otherwise have the drop delete or refuse the rows that refer to
    it. Before they are turned back on, ``PRAGMA foreign_key_check`` must find nothing dangling.

    Raises:
        ConfigError: after an SQLite migration, rows refer to rows that are gone.
    """
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:  # outside any transaction: inside one SQLite ignores the pragma
            conn.connection.dbapi_connection.execute(  # type: ignore[union-attr]
                "PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                config.attributes["connection"] = conn
                command.upgrade(config, revision)
                dangling = (conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                            if sqlite else [])
                if dangling:
                    table, rowid, parent, _ = dangling[0]
                    raise ConfigError(f"migrating the store left {len(dangling)} row(s) "
                                      f"referring to missing rows (first: {table} row {rowid} "
                                      f"-> {parent}); nothing was changed; report this")
        finally:
            if sqlite:
                conn.connection.dbapi_connection.execute(  # type: ignore[union-attr]
                    "PRAGMA foreign_keys=ON")


def server_secret(engine: sa.Engine) -> bytes:
    """The key that signs delegated credentials, made once and kept in ``settings``."""
    with engine.begin() as conn:
        value = conn.execute(
            sa.select(settings.c.value).where(settings.c.key == "signing_key")
        ).scalar()
        if value is None:
            value = secrets.token_hex(32)
            conn.execute(sa.insert(settings).values(key="signing_key", value=value))
    return bytes.fromhex(value)
