"""SQLite's write-ahead log copied back into the database by a background thread.

By default the connection whose commit grows the log past 1,000 pages copies it back (a
checkpoint) before that commit returns, and the copy ends with an fsync: while receiving traces
that was every second or third request, which then held the write lock 20-200 ms instead of
3 ms while the other requests queued behind it. Here a thread runs a ``PASSIVE`` checkpoint
twice a second on its own connection (it never waits for, nor blocks, readers and writers;
SQLite releases the GIL meanwhile), so commits only append to the log. The connections'
own automatic checkpoint stays as a backstop at 64 MiB of log (``db.AUTOCHECKPOINT_PAGES``)
for processes without the thread.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

__all__ = ["background_checkpoints"]

log = logging.getLogger("whileai.server")
INTERVAL_S = 0.5


def _checkpoint(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as exc:  # a busy or full disk: try again on the next tick
        log.warning("background checkpoint failed: %s", exc)


def _run(path: str, stop: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        while not stop.wait(INTERVAL_S):
            _checkpoint(conn)
    finally:
        conn.close()


@contextmanager
def background_checkpoints(engine: sa.Engine) -> Iterator[None]:
    """Checkpoint ``engine``'s SQLite database in a thread for the duration of the block
    (nothing for another database)."""
    path = engine.url.database
    if engine.dialect.name != "sqlite" or not path or path == ":memory:":
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(target=_run, args=(path, stop), name="whileai-checkpoint",
                              daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
