"""The store's migrations against its table definitions, on SQLite and (``make pytest-postgres``)
on PostgreSQL: every table the code declares is what the migrations build, foreign keys survive
a migration that rebuilds a referenced table, and the URL's dialect decides the engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_server import fresh_database, require_server_extra

require_server_extra()

import sqlalchemy as sa  # noqa: E402  (after the skip: the server extra)

from whileai.errors import ConfigError  # noqa: E402
from whileai.server.config import ServerConfig  # noqa: E402
from whileai.server.store.db import dialect_of, migrate, open_engine  # noqa: E402


def _engine(tmp_path: Path) -> sa.Engine:
    """An empty database of its own (SQLite in ``tmp_path``, or one in the test cluster)."""
    return open_engine(ServerConfig(directory=tmp_path, database=fresh_database()).database_url)


def test_a_database_migrated_to_head_is_what_every_table_declares(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from whileai.server.store.schema import metadata

    engine = _engine(tmp_path)
    migrate(engine)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, metadata) == []
        stored = set(sa.inspect(conn).get_table_names()) - {"alembic_version"}
    # Every table is compared: the ones the services use, including those declared apart.
    assert stored == set(metadata.tables)
    assert {"page_sessions", "runs", "run_points", "trace_spans", "parts"} <= stored
    engine.dispose()


def test_the_comparison_sees_a_column_the_migrations_do_not_make(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from whileai.server.store.schema import metadata

    engine = _engine(tmp_path)
    migrate(engine)
    drifted = sa.MetaData()
    for table in metadata.tables.values():
        table.to_metadata(drifted)
    drifted.tables["runs"].append_column(sa.Column("colour", sa.String(20), nullable=True))
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), drifted)
    assert [(d[0], d[2], d[3].name) for d in diff] == [("add_column", "runs", "colour")]
    engine.dispose()


def test_rebuilding_a_referenced_table_keeps_the_rows_that_refer_to_it(tmp_path: Path) -> None:
    """Migration 0009 rebuilds ``runs`` (SQLite copies the table, drops it, renames the copy);
    its points and events refer to it and must all be there afterwards, still enforced."""
    from whileai.server.store.run_tables import run_events, run_points, runs
    from whileai.server.store.tables import accounts

    engine = _engine(tmp_path)
    migrate(engine, "0008")
    with engine.begin() as conn:
        conn.execute(sa.insert(accounts).values(id="acct_1", name="a", tier="t",
                                                is_admin=False, created_at=0.0))
        conn.execute(sa.insert(runs).values(  # the columns of 0008: no run_id yet
            id="run_1", account_id="acct_1", name="r", status="running", points=2,
            created_at=0.0, updated_at=0.0))
        conn.execute(sa.insert(run_points), [
            {"run_id": "run_1", "seq": i, "step": i, "time": None, "metrics": "{}"}
            for i in range(2)])
        conn.execute(sa.insert(run_events).values(run_id="run_1", seq=0, kind="note",
                                                  step=None, time=None, body="{}"))
    migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(run_points)).scalar() == 2
        assert conn.execute(sa.select(sa.func.count()).select_from(run_events)).scalar() == 1
        assert conn.execute(sa.select(runs.c.run_id)).scalars().all() == ["run_1"]
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):  # still enforced
        conn.execute(sa.insert(run_points).values(run_id="run_gone", seq=0, step=0,
                                                  metrics="{}"))
    engine.dispose()


@pytest.mark.parametrize(("url", "dialect"), [
    ("sqlite:////srv/whileai.db", "sqlite"),
    ("sqlite+pysqlite:///relative.db", "sqlite"),
    ("postgresql://u@db.example/whileai", "postgresql"),
    ("postgresql+psycopg://u:pw@db.example:5433/whileai", "postgresql"),
])
def test_the_dialect_comes_from_the_url(url: str, dialect: str) -> None:
    assert dialect_of(url) == dialect


@pytest.mark.parametrize("url", [
    "mysql+pymysql://root:hunter2@db.example/whileai",
    "oracle://scott:hunter2@db.example/whileai",
])
def test_an_unknown_dialect_is_refused_naming_it_with_the_password_masked(url: str) -> None:
    scheme = url.partition("://")[0]
    with pytest.raises(ConfigError, match="supported: sqlite, postgresql") as info:
        open_engine(url)
    assert scheme in str(info.value)
    assert "hunter2" not in str(info.value)
    assert "***" in str(info.value)


def test_a_url_that_does_not_parse_is_refused_naming_its_scheme() -> None:
    with pytest.raises(ConfigError, match="scheme 'nonsense'"):
        dialect_of("nonsense:here")


def test_a_server_on_an_unknown_dialect_does_not_start_as_sqlite(tmp_path: Path) -> None:
    from whileai.server.app import open_store

    config = ServerConfig(directory=tmp_path / "srv", database="mysql://root:pw@db/whileai")
    with pytest.raises(ConfigError, match="'mysql'"):
        open_store(config)
    assert not (tmp_path / "srv" / "whileai.db").exists()
