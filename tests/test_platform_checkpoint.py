"""The server's SQLite log is checkpointed by a background thread, not by the commits."""

from __future__ import annotations

import time
from pathlib import Path

from platform_server import require_server_extra

require_server_extra()

import sqlalchemy as sa  # noqa: E402

from whileai.server.store.checkpoint import background_checkpoints  # noqa: E402
from whileai.server.store.db import AUTOCHECKPOINT_PAGES, open_engine  # noqa: E402


def test_commits_leave_the_log_to_the_background_thread(tmp_path: Path) -> None:
    # Sizes tell without checkpointing (this SQLite has no NOOP checkpoint): rows live in the
    # log until a checkpoint copies them into the database file.
    path = tmp_path / "x.db"
    engine = open_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (v TEXT)")
    blob = "x" * 4000
    for _ in range(1100):  # more than the 1,000 pages SQLite would checkpoint at by itself
        with engine.begin() as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES (?)", (blob,))
    rows = 1100 * len(blob)
    assert Path(f"{path}-wal").stat().st_size > rows
    assert path.stat().st_size < rows // 10  # no commit checkpointed
    with background_checkpoints(engine):
        deadline = time.monotonic() + 30
        while path.stat().st_size < rows and time.monotonic() < deadline:
            time.sleep(0.05)
    assert path.stat().st_size >= rows  # the thread copied the log into the database
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar() == 1100
    engine.dispose()


def test_no_thread_for_another_database() -> None:
    engine = sa.create_engine("sqlite://")  # in memory: nothing to checkpoint
    with background_checkpoints(engine):
        import threading

        assert "whileai-checkpoint" not in {t.name for t in threading.enumerate()}


def test_connections_checkpoint_only_as_a_backstop(tmp_path: Path) -> None:
    engine = open_engine(f"sqlite:///{tmp_path / 'y.db'}")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == AUTOCHECKPOINT_PAGES
    assert AUTOCHECKPOINT_PAGES > 1000  # SQLite's own default
    engine.dispose()
