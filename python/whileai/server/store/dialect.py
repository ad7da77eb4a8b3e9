"""Inserts that tolerate a row already being there, for SQLite and PostgreSQL alike.

Both dialects have ``INSERT ... ON CONFLICT``; SQLAlchemy spells it per dialect, so the store
picks the spelling from the connection here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

__all__ = ["accumulate", "insert_new", "inserted_keys", "upsert"]


def _insert(conn: sa.Connection, table: sa.Table) -> Any:
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def insert_new(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]]) -> int:
    """Insert the rows whose key is not stored yet; return how many were new.

    The count comes from ``RETURNING`` (one returned key per inserted row): a driver's
    ``rowcount`` after a batch is not reliable (psycopg reports -1).
    """
    return len(inserted_keys(conn, table, rows))


def inserted_keys(conn: sa.Connection, table: sa.Table,
                  rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Insert the rows whose key is not stored yet; return the primary keys of those inserted."""
    if not rows:
        return []
    stmt = _insert(conn, table).on_conflict_do_nothing().returning(*table.primary_key.columns)
    return [tuple(r) for r in conn.execute(stmt, list(rows))]


def upsert(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]],
           keys: Sequence[str], update: Sequence[str]) -> None:
    """Insert the rows, or update the ``update`` columns of those whose ``keys`` exist."""
    if not rows:
        return
    stmt = _insert(conn, table)
    stmt = stmt.on_conflict_do_update(index_elements=list(keys),
                                      set_={c: stmt.excluded[c] for c in update})
    conn.execute(stmt, list(rows))


def accumulate(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]],
               keys: Sequence[str], add: Sequence[str]) -> None:
    """Insert the rows, or add their ``add`` columns to those of the row with the same ``keys``
    (one atomic statement per row: concurrent writers never lose a count)."""
    if not rows:
        return
    stmt = _insert(conn, table)
    stmt = stmt.on_conflict_do_update(index_elements=list(keys),
                                      set_={c: table.c[c] + stmt.excluded[c] for c in add})
    conn.execute(stmt, list(rows))
