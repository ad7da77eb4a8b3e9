"""Keys, accounts, delegated credentials, discovery and failures, against a real server."""

from __future__ import annotations

import json
import secrets
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import whileai
import whileai.simulations as zps
from platform_server import Server, free_port, require_server_extra
from whileai.platform import (
    KeyRefusedError,
    NoKeyError,
    NotFoundError,
    PlatformError,
    UnreachableError,
    signup,
)
from whileai.platform.credentials import (
    credentials_path,
    find_key,
    find_url,
    legacy_credentials_path,
    save_login,
)
from whileai.platform.http import call, connect
from whileai.retry import Retry

require_server_extra()


@pytest.fixture
def url(platform_server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("WHILEAI_BASE_URL", platform_server.url)
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    return platform_server.url


def test_accounts_are_isolated(platform_server: Server, url: str) -> None:
    alice = platform_server.key(f"alice-{secrets.token_hex(4)}")
    bob = platform_server.key(f"bob-{secrets.token_hex(4)}")
    mine = zps.push_rows([{"prompt": "secret"}], "alice-set", api_key=alice, agent="a")
    ds = mine["datasetId"]
    assert zps.datasets(api_key=bob)["datasets"] == []
    assert zps.agents(api_key=bob) == []
    for attempt in (
        lambda: zps.pull(ds, api_key=bob),
        lambda: zps.preview(ds, api_key=bob),
        lambda: zps.profile(ds, api_key=bob),
        lambda: zps.update_dataset(ds, purpose="eval", api_key=bob),
        lambda: zps.publish(ds, "x", api_key=bob),
        lambda: zps.delete_dataset(ds, api_key=bob),
        lambda: zps.push_rows([{"prompt": "p"}], "child", parent=ds, api_key=bob),
    ):
        with pytest.raises(NotFoundError, match=ds):
            attempt()
    assert zps.delete_empty_datasets(max_rows=10, api_key=bob)["deleted"] == []
    with pytest.raises(NotFoundError):
        zps.purge_agent("a", api_key=bob)
    assert zps.pull(ds, api_key=alice) == [{"prompt": "secret"}]


def test_no_key_and_refused_key_never_show_the_key(url: str) -> None:
    with pytest.raises(NoKeyError, match="WHILEAI_API_KEY"):
        zps.datasets()
    wrong = "wai_" + secrets.token_urlsafe(32)
    with pytest.raises(KeyRefusedError) as caught:
        zps.datasets(api_key=wrong)
    assert wrong not in str(caught.value)
    assert wrong not in repr(connect(wrong))
    assert "refused" in str(caught.value)


def test_account_reports_tier_limits_and_usage(platform_server: Server, url: str) -> None:
    key = platform_server.key(f"carol-{secrets.token_hex(4)}")
    entry = zps.push_rows([{"prompt": "a"}, {"prompt": "b"}], "c", api_key=key)
    info = whileai.account(api_key=key)
    assert info["tier"] == "self-hosted"
    assert info["usage"] == {"storageBytes": entry["bytes"], "datasets": 1}
    assert info["limits"]["storageBytes"] > 0
    assert info["limits"]["rowsPerDataset"] > 0


def test_delegated_credentials_work_refresh_and_expire(platform_server: Server, url: str) -> None:
    key = platform_server.key(f"dan-{secrets.token_hex(4)}")
    entry = zps.push_rows([{"prompt": "a"}], "d", api_key=key)
    issued = whileai.issue_delegated_credential(key, ttl_seconds=600, name="ci")
    assert issued["credential"].startswith("wdc_")
    assert issued["name"] == "ci"
    assert zps.pull(entry["datasetId"], api_key=issued["credential"]) == [{"prompt": "a"}]
    fresh = whileai.refresh_delegated_credential(key, issued["credential"], ttl_seconds=900)
    assert fresh["credential"] != issued["credential"]
    assert fresh["name"] == "ci"
    assert fresh["expiresAt"] > issued["expiresAt"]
    forged = issued["credential"][:-4] + ("AAAA" if not issued["credential"].endswith("AAAA")
                                          else "BBBB")
    with pytest.raises(KeyRefusedError, match="not signed"):
        zps.datasets(api_key=forged)
    short = whileai.issue_delegated_credential(key, ttl_seconds=1)
    time.sleep(1.5)
    with pytest.raises(KeyRefusedError, match="expired"):
        zps.datasets(api_key=short["credential"])


def test_admin_route_mints_keys_only_for_admins(platform_server: Server, url: str) -> None:
    admin = platform_server.key(f"root-{secrets.token_hex(4)}", admin=True)
    plain = platform_server.key(f"eve-{secrets.token_hex(4)}")
    made = call(connect(admin), "POST", "/v1/admin/keys", json={"account": "frank"}).json()
    assert made["key"].startswith("wai_")
    assert zps.datasets(api_key=made["key"])["count"] == 0
    with pytest.raises(KeyRefusedError, match="only an admin"):
        call(connect(plain), "POST", "/v1/admin/keys", json={"account": "x"})


def test_signup_is_closed_by_default(url: str) -> None:
    with pytest.raises(KeyRefusedError, match="does not allow sign-up"):
        signup("x@example.com")


def test_openapi_describes_every_route(url: str) -> None:
    spec = call(connect(None, need_key=False), "GET", "/openapi.json").json()
    paths = set(spec["paths"])
    for route in ("/health", "/v1/datasets", "/v1/datasets/{dataset_id}/manifest",
                  "/v1/datasets/{dataset_id}/parts/{index}", "/v1/agents", "/v1/account",
                  "/v1/catalog", "/v1/auth/delegated", "/v1/signup"):
        assert route in paths
    assert "DatasetOut" in spec["components"]["schemas"]


def test_errors_are_json_with_a_code(url: str) -> None:
    import requests

    reply = requests.get(url + "/v1/nothing-here", timeout=10)
    assert reply.status_code == 404
    assert reply.json()["error"] == "not_found"
    reply = requests.get(url + "/v1/datasets", timeout=10)
    assert reply.status_code == 401
    assert reply.json()["error"] == "no_key"


def test_unreachable_server_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setattr("whileai.platform.http.POLICY", Retry(attempts=4, backoff=0.01))
    with pytest.raises(UnreachableError, match=dead.replace(".", r"\.")):
        zps.datasets(api_key="wai_x", base_url=dead)


@pytest.fixture
def flaky() -> Iterator[tuple[str, list[int]]]:
    """A tiny endpoint that answers 503, then 429, then 200 (to watch the client retry)."""
    statuses = [503, 429, 200]
    seen: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status = statuses[min(len(seen), len(statuses) - 1)]
            seen.append(status)
            body = json.dumps({"datasets": [], "count": 0, "storageBytes": 0}
                              if status == 200 else {"error": "internal", "message": "busy"})
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_429_and_5xx_are_retried(flaky: tuple[str, list[int]],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    base, seen = flaky
    monkeypatch.setattr("whileai.platform.http.POLICY", Retry(attempts=4, backoff=0.01))
    assert zps.datasets(api_key="k", base_url=base)["count"] == 0
    assert seen == [503, 429, 200]
    monkeypatch.setattr("whileai.platform.http.POLICY", Retry(attempts=1))
    seen.clear()
    with pytest.raises(PlatformError, match="busy"):
        zps.datasets(api_key="k", base_url=base)


def test_key_discovery_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    monkeypatch.delenv("WHILEAI_BASE_URL", raising=False)
    assert find_key() is None
    assert find_url() == "http://127.0.0.1:6070"
    legacy = legacy_credentials_path()
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"api_key": "legacy-key"}))
    assert find_key() == "legacy-key"
    path = save_login("saved-key", "localhost:9999/")
    assert path == credentials_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (find_key(), find_url()) == ("saved-key", "http://localhost:9999")
    monkeypatch.setenv("WHILEAI_API_KEY", "env-key")
    monkeypatch.setenv("WHILEAI_BASE_URL", "http://127.0.0.1:1")
    assert (find_key(), find_url()) == ("env-key", "http://127.0.0.1:1")
    assert find_key("arg-key") == "arg-key"
    assert isinstance(path, Path)


def test_health_names_the_database_in_use(url: str) -> None:
    import os

    import requests

    health = requests.get(url + "/health", timeout=10).json()
    expected = "postgresql" if os.environ.get("WHILEAI_DATABASE_URL") else "sqlite"
    assert (health["status"], health["database"]) == ("ok", expected)
