"""Revoking API keys against a real server: refused at once, the other keys keep working."""

from __future__ import annotations

import hashlib
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import whileai
import whileai.simulations as zps
from platform_server import Server, fresh_database, require_server_extra
from whileai.cli import main
from whileai.platform import KeyRefusedError, NotFoundError

require_server_extra()


@pytest.fixture
def pair(platform_server: Server, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """Two keys of one fresh account (minted one after the other)."""
    monkeypatch.setenv("WHILEAI_BASE_URL", platform_server.url)
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    name = f"team-{secrets.token_hex(4)}"
    return platform_server.key(name), platform_server.key(name, existing=True)


def _ids(key: str) -> tuple[str, str]:
    """(the id of ``key``, the id of the account's other key)."""
    listing = zps.list_keys(api_key=key)["keys"]
    mine = [k["keyId"] for k in listing if k["current"]]
    other = [k["keyId"] for k in listing if not k["current"]]
    assert len(mine) == 1
    assert len(other) == 1
    return mine[0], other[0]


def test_keys_are_listed_by_id_never_by_value(pair: tuple[str, str]) -> None:
    first, second = pair
    listing = zps.list_keys(api_key=first)
    assert (listing["count"], listing["active"]) == (2, 2)
    assert first not in repr(listing)
    assert second not in repr(listing)
    assert all(k["keyId"].startswith("key_") and k["revokedAt"] is None
               for k in listing["keys"])
    assert _ids(first) == tuple(reversed(_ids(second)))


def test_a_revoked_key_is_refused_at_once_and_the_other_keeps_working(
        pair: tuple[str, str]) -> None:
    first, second = pair
    first_id, second_id = _ids(first)
    pushed = zps.push_rows([{"prompt": "kept"}], "before", api_key=first)
    entry = zps.revoke_key(first_id, api_key=second)
    assert entry["keyId"] == first_id
    assert entry["revokedAt"] is not None
    assert entry["current"] is False
    with pytest.raises(KeyRefusedError, match=rf"this API key \({first_id}\) was revoked at"):
        zps.datasets(api_key=first)
    with pytest.raises(KeyRefusedError, match="revoked") as caught:
        zps.push_rows([{"prompt": "late"}], "after", api_key=first)
    assert first not in str(caught.value)
    assert zps.pull(pushed["datasetId"], api_key=second) == [{"prompt": "kept"}]
    listing = zps.list_keys(api_key=second)
    assert listing["active"] == 1
    assert {k["keyId"]: k["revokedAt"] is not None for k in listing["keys"]} == {
        first_id: True, second_id: False}
    again = zps.revoke_key(first_id, api_key=second)  # idempotent: the time stays
    assert again["revokedAt"] == entry["revokedAt"]


def test_a_key_can_revoke_itself(pair: tuple[str, str]) -> None:
    first, second = pair
    first_id, _ = _ids(first)
    assert zps.revoke_key(first_id, api_key=first)["current"] is True
    with pytest.raises(KeyRefusedError, match="revoked"):
        zps.list_keys(api_key=first)
    assert zps.list_keys(api_key=second)["active"] == 1


def test_another_account_cannot_revoke_a_key(platform_server: Server,
                                             pair: tuple[str, str]) -> None:
    first, _ = pair
    first_id, _ = _ids(first)
    stranger = platform_server.key(f"stranger-{secrets.token_hex(4)}")
    with pytest.raises(NotFoundError, match=f"no API key {first_id} on this account"):
        zps.revoke_key(first_id, api_key=stranger)
    with pytest.raises(NotFoundError, match="no API key key_0000000000000000"):
        zps.revoke_key("key_0000000000000000", api_key=first)
    assert zps.list_keys(api_key=first)["active"] == 2


def test_delegated_credentials_die_with_their_key(pair: tuple[str, str]) -> None:
    first, second = pair
    first_id, _ = _ids(first)
    from_first = zps.issue_delegated_credential(first, ttl_seconds=600)["credential"]
    from_second = zps.issue_delegated_credential(second, ttl_seconds=600)["credential"]
    assert zps.datasets(api_key=from_first)["count"] == 0
    zps.revoke_key(first_id, api_key=second)
    with pytest.raises(KeyRefusedError, match=f"issued with API key {first_id}, which was "
                       "revoked"):
        zps.datasets(api_key=from_first)
    assert zps.datasets(api_key=from_second)["count"] == 0


def test_cli_lists_and_revokes(pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    first, second = pair
    first_id, second_id = _ids(first)
    monkeypatch.setenv("WHILEAI_API_KEY", second)
    assert main(["keys", "list"]) == 0
    out = capsys.readouterr().out
    assert f"* {second_id}" in out
    assert f"  {first_id}" in out
    assert "2 key(s), 2 active" in out
    assert main(["keys", "revoke", first_id]) == 0
    assert f"revoked {first_id}" in capsys.readouterr().out
    assert main(["keys", "list"]) == 0
    assert "2 key(s), 1 active" in capsys.readouterr().out
    with pytest.raises(KeyRefusedError):
        whileai.account(api_key=first)


@pytest.fixture
def old_database(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    """A server dir whose database stops at the revision before revocation, with one key."""
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from whileai.server.config import ServerConfig
    from whileai.server.store.db import open_engine

    server = Server(directory=tmp_path / "server", database=fresh_database())
    server.directory.mkdir()
    config = ServerConfig(directory=server.directory, database=server.database)
    engine = open_engine(config.database_url)
    alembic = Config()
    alembic.set_main_option("script_location", str(
        Path(__file__).resolve().parents[1] / "python/whileai/server/migrations"))
    key = "wai_" + secrets.token_urlsafe(32)
    with engine.begin() as conn:
        alembic.attributes["connection"] = conn
        command.upgrade(alembic, "0003")
        conn.execute(sa.text("INSERT INTO accounts (id, name, email, tier, is_admin, created_at) "
                             "VALUES ('acct_old', 'old', NULL, 'self-hosted', false, :t)"),
                     {"t": time.time()})
        conn.execute(sa.text("INSERT INTO api_keys (id, account_id, name, key_hash, created_at) "
                             "VALUES ('key_old', 'acct_old', 'default', :h, :t)"),
                     {"h": hashlib.sha256(key.encode()).hexdigest(), "t": time.time()})
    engine.dispose()
    # an older server left its folder open to other users: the owner closes it (else refused)
    subprocess.run(["chmod", "-R", "go=", str(server.directory)], check=True)
    server.start()
    try:
        yield server, key
    finally:
        server.stop()


def test_an_older_database_is_upgraded_in_place(old_database: tuple[Server, str]) -> None:
    server, key = old_database
    assert whileai.account(api_key=key, base_url=server.url)["name"] == "old"
    listing = zps.list_keys(api_key=key, base_url=server.url)
    assert [(k["keyId"], k["revokedAt"]) for k in listing["keys"]] == [("key_old", None)]
    zps.revoke_key("key_old", api_key=key, base_url=server.url)
    with pytest.raises(KeyRefusedError, match=r"this API key \(key_old\) was revoked"):
        whileai.account(api_key=key, base_url=server.url)


def test_rotate_mint_a_new_key_then_revoke_the_old(platform_server: Server,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_BASE_URL", platform_server.url)
    old = platform_server.key(f"rotate-{secrets.token_hex(4)}")
    made = zps.create_key("laptop", api_key=old)
    assert made["key"].startswith("wai_")
    assert made["keyId"].startswith("key_")
    old_id = next(k["keyId"] for k in zps.list_keys(api_key=old)["keys"] if k["current"])
    zps.revoke_key(old_id, api_key=made["key"])
    with pytest.raises(KeyRefusedError, match="revoked"):
        zps.datasets(api_key=old)
    assert zps.list_keys(api_key=made["key"])["active"] == 1
    delegated = zps.issue_delegated_credential(made["key"], ttl_seconds=60)["credential"]
    with pytest.raises(KeyRefusedError, match="delegated credential cannot mint"):
        zps.create_key("sneaky", api_key=delegated)


def test_cli_creates_a_key(pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("WHILEAI_API_KEY", pair[0])
    assert main(["keys", "create", "--name", "ci"]) == 0
    captured = capsys.readouterr()
    key = captured.out.strip()
    assert key.startswith("wai_")
    assert "minted key_" in captured.err
    assert key not in captured.err
    assert whileai.account(api_key=key)["name"] == whileai.account(api_key=pair[0])["name"]
