"""Inserts that tolerate a row already being there, for SQLite and PostgreSQL alike.

Both dialects have ``INSERT ... ON CONFLICT``; SQLAlchemy spells it per dialect, so the store
picks the spelling from the connection here and nowhere else.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

__all__ = ["accumulate", "insert_absent", "insert_many", "insert_new", "inserted_keys", "upsert"]


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


def insert_absent(conn: sa.Connection, table: sa.Table,
                  rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """:func:`inserted_keys` for a table whose primary key (of two columns or more) is its only
    unique key, for big batches: the primary keys of the rows inserted (a key stored already, or
    repeated in ``rows``, is inserted once).

    SQLite writes one transaction at a time (``BEGIN IMMEDIATE``), so the stored keys are read
    first and the rest go in with one ``executemany`` of plain tuples, which costs a fraction of
    a ``RETURNING`` insert built row by row; PostgreSQL, where writers run side by side, keeps
    ``RETURNING``.
    """
    if not rows or conn.dialect.name != "sqlite":
        return inserted_keys(conn, table, rows)
    key_columns = list(table.primary_key.columns)
    key_of = _getter([c.name for c in key_columns])
    keys = [key_of(row) for row in rows]
    by_lead: dict[Any, dict[Any, None]] = {}
    for key in keys:  # ``first = ? AND second IN (...)`` is an index range; a row-value IN is not
        by_lead.setdefault(key[0], {})[key[1]] = None
    stored: set[tuple[Any, ...]] = set()  # every stored key under those first two columns
    first, second = key_columns[0], key_columns[1]
    for lead, seconds in by_lead.items():
        values = list(seconds)
        for start in range(0, len(values), 500):
            stored.update(tuple(r) for r in conn.execute(sa.select(*key_columns).where(
                first == lead, second.in_(values[start:start + 500]))))
    fresh: list[tuple[Any, ...]] = []
    new: list[dict[str, Any]] = []
    for key, row in zip(keys, rows, strict=True):
        if key not in stored:
            stored.add(key)
            fresh.append(key)
            new.append(row)
    insert_many(conn, table, new)
    return fresh


def insert_many(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows known to be new (all with the keys of the first), in one ``executemany``.

    On SQLite the values go to the driver as plain tuples, skipping SQLAlchemy's per-row
    parameter processing (the columns hold plain str, int, float and bool values).
    """
    if not rows:
        return
    if conn.dialect.name != "sqlite":
        conn.execute(sa.insert(table), list(rows))
        return
    columns = list(rows[0])
    quote = conn.dialect.identifier_preparer.quote
    values = _getter(columns)
    conn.exec_driver_sql(
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join('?' for _ in columns)})",
        [values(row) for row in rows])


def _getter(names: Sequence[str]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A C-speed ``row -> tuple of row[name] for name in names`` (a tuple even for one name)."""
    if len(names) == 1:
        name = names[0]
        return lambda row: (row[name],)
    return operator.itemgetter(*names)


def upsert(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]],
           keys: Sequence[str], update: Sequence[str],
           absent: Sequence[dict[str, Any]] = ()) -> None:
    """Insert the rows, or update the ``update`` columns of those whose ``keys`` exist.

    ``absent`` are more rows the caller found missing earlier in this transaction. SQLite runs
    one writing transaction at a time, so there they are still missing and go in with
    :func:`insert_many`; PostgreSQL upserts them with the rest (a concurrent writer may have
    added them since).
    """
    if conn.dialect.name == "sqlite":
        insert_many(conn, table, absent)
    else:
        rows = [*rows, *absent]
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
    if conn.dialect.name == "sqlite":  # plain tuples, as in ``insert_many``
        columns = list(rows[0])
        quote = conn.dialect.identifier_preparer.quote
        name, values = quote(table.name), _getter(columns)
        conn.exec_driver_sql(
            f"INSERT INTO {name} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)}) "
            f"ON CONFLICT ({', '.join(quote(k) for k in keys)}) DO UPDATE SET "
            + ", ".join(f"{quote(c)} = {name}.{quote(c)} + excluded.{quote(c)}" for c in add),
            [values(row) for row in rows])
        return
    stmt = _insert(conn, table)
    stmt = stmt.on_conflict_do_update(index_elements=list(keys),
                                      set_={c: table.c[c] + stmt.excluded[c] for c in add})
    conn.execute(stmt, list(rows))
