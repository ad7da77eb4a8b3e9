"""Quotas, 413, and atomic pushes: a refused, interrupted or crashed upload leaves nothing."""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

import whileai.simulations as zps
from platform_server import Server, require_server_extra, start_server
from whileai.platform import PlatformQuotaError, RequestTooLargeError

require_server_extra()

KILLED_CLIENT = """
import sys, time
from whileai.platform.http import call, connect

def body():
    yield b'{"prompt": "row"}\\n' * 5000
    time.sleep(600)

call(connect(sys.argv[2], base_url=sys.argv[1]), "POST", "/v1/datasets",
     params={"name": "interrupted"}, body=body, retry=False)
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with tiny quotas: 2 MB per account, 1,000 rows per set, 1 MB per request."""
    server = start_server(tmp_path_factory.mktemp("quota"), "--max-storage-bytes", "2000000",
                          "--max-rows-per-dataset", "1000", "--max-request-bytes", "1000000")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of its own, for tests that kill or restart it."""
    server = start_server(tmp_path_factory.mktemp("restart"))
    try:
        yield server
    finally:
        server.stop()


def padded(count: int, size: int) -> list[dict[str, str]]:
    return [{"prompt": f"{i}:" + "x" * size} for i in range(count)]


def wait_for(test: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not test():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_row_quota_refuses_and_stores_nothing(small: Server) -> None:
    key = small.key(f"rows-{secrets.token_hex(4)}")
    with pytest.raises(PlatformQuotaError, match="at most 1000 rows"):
        zps.push_rows(padded(1001, 1), "too-many", api_key=key, base_url=small.url)
    assert zps.datasets(api_key=key, base_url=small.url)["count"] == 0
    assert zps.push_rows(padded(1000, 1), "ok", api_key=key, base_url=small.url)["rows"] == 1000


def test_oversized_requests_get_413(small: Server, tmp_path: Path) -> None:
    key = small.key(f"big-{secrets.token_hex(4)}")
    big = tmp_path / "big.jsonl"
    zps.write_jsonl(big, padded(500, 10_000))  # ~5 MB, sent with a Content-Length
    with pytest.raises(RequestTooLargeError, match="at most 1000000"):
        zps.push_file(str(big), gate=False, api_key=key, base_url=small.url)
    with pytest.raises(RequestTooLargeError, match="passed 1000000 bytes"):  # chunked
        zps.push_rows(padded(150, 10_000), "chunked", api_key=key, base_url=small.url)
    assert zps.datasets(api_key=key, base_url=small.url)["count"] == 0


def test_storage_quota_refuses_the_push_that_passes_it(small: Server) -> None:
    key = small.key(f"store-{secrets.token_hex(4)}")
    before = len(small.files("parts"))
    for name in ("one", "two"):
        zps.push_rows(padded(90, 10_000), name, api_key=key, base_url=small.url)
    with pytest.raises(PlatformQuotaError, match="storage quota"):
        zps.push_rows(padded(90, 10_000), "three", api_key=key, base_url=small.url)
    listing = zps.datasets(api_key=key, base_url=small.url)
    assert [d["name"] for d in listing["datasets"]] == ["two", "one"]
    assert len(small.files("parts")) == before + 2
    assert small.files("tmp") == []


def _start_killed_client(server: Server, key: str) -> subprocess.Popen[bytes]:
    client = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, server.url, key])
    wait_for(lambda: any(p.stat().st_size > 0 for p in server.files("tmp")),
             "the upload to reach the server")
    return client


def test_killed_client_leaves_no_dataset_and_no_part(fresh: Server) -> None:
    key = fresh.key("killer")
    client = _start_killed_client(fresh, key)
    client.kill()
    client.wait(timeout=30)
    wait_for(lambda: fresh.files("tmp") == [], "the server to drop the temp part")
    assert zps.datasets(api_key=key, base_url=fresh.url)["count"] == 0
    assert fresh.files("parts") == []


def test_minting_a_key_beside_a_running_server_keeps_its_uploads(fresh: Server) -> None:
    key = fresh.key("uploader")
    client = _start_killed_client(fresh, key)  # an upload in progress, its temp part on disk
    try:
        uploading = fresh.files("tmp")
        fresh.key("someone-else")  # ``whileai serve --create-key`` on the same folder
        assert fresh.files("tmp") == uploading  # not swept as a stray file
    finally:
        client.kill()
        client.wait(timeout=30)


def test_server_killed_mid_write_leaves_nothing_after_restart(fresh: Server) -> None:
    key = fresh.key("crash")
    kept = zps.push_rows(padded(10, 5), "kept", api_key=key, base_url=fresh.url)
    client = _start_killed_client(fresh, key)
    fresh.stop(kill=True)
    client.kill()
    client.wait(timeout=30)
    assert fresh.files("tmp") != []  # the crash left a temp part behind...
    fresh.start()
    assert fresh.files("tmp") == []  # ...which the restart swept
    listing = zps.datasets(api_key=key, base_url=fresh.url)
    assert [d["datasetId"] for d in listing["datasets"]] == [kept["datasetId"]]
    assert len(fresh.files("parts")) == 1


def test_restarted_server_finds_every_dataset(fresh: Server) -> None:
    key = fresh.key("restart")
    pushed = {}
    for i in range(5):
        rows = padded(20 + i, 30)
        pushed[zps.push_rows(rows, f"set{i}", api_key=key, base_url=fresh.url)["datasetId"]] = rows
    fresh.stop()
    fresh.start()
    listing = zps.datasets(api_key=key, base_url=fresh.url)
    assert {d["datasetId"] for d in listing["datasets"]} == set(pushed)
    for dataset_id, rows in pushed.items():
        assert zps.pull(dataset_id, api_key=key, base_url=fresh.url) == rows


def test_the_schema_is_migrated_to_the_newest_revision(fresh: Server) -> None:
    if fresh.database:
        import psycopg

        with psycopg.connect(fresh.database) as conn:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    else:
        import sqlite3

        with closing(sqlite3.connect(fresh.directory / "whileai.db")) as conn:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(
        Path(__file__).resolve().parents[1] / "python/whileai/server/migrations"))
    assert row == (ScriptDirectory.from_config(config).get_current_head(),)
