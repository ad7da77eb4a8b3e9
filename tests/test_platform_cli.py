"""``whileai login/status/logout/datasets/pull/purge/signup`` against a real server."""

from __future__ import annotations

import json
import secrets
import stat
from pathlib import Path

import pytest

import whileai.simulations as zps
from platform_server import Server, require_server_extra
from whileai.cli import main
from whileai.platform.credentials import credentials_path

require_server_extra()


@pytest.fixture
def env(platform_server: Server, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    monkeypatch.delenv("WHILEAI_BASE_URL", raising=False)
    return platform_server


def test_login_checks_the_key_before_saving(
    env: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = "wai_" + secrets.token_urlsafe(32)
    assert main(["login", "--key", wrong, "--url", env.url]) == 2
    err = capsys.readouterr().err
    assert "refused" in err
    assert wrong not in err
    assert not credentials_path().exists()
    key = env.key(f"cli-{secrets.token_hex(4)}")
    assert main(["login", "--key", key, "--url", env.url]) == 0
    assert "logged in" in capsys.readouterr().out
    saved = credentials_path()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text()) == {"api_key": key, "base_url": env.url}
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert env.url in out
    assert "0 datasets" in out
    assert key not in out
    assert main(["logout"]) == 0
    assert not saved.exists()
    assert main(["status"]) == 1
    assert "not logged in" in capsys.readouterr().out


def test_datasets_pull_and_purge(env: Server, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    key = env.key(f"cli-{secrets.token_hex(4)}")
    assert main(["login", "--key", key, "--url", env.url]) == 0
    rows = [{"prompt": "a"}, {"prompt": "b"}]
    kept = zps.push_rows(rows, "kept", agent="shop")
    empty = zps.push_rows([], "empty")
    capsys.readouterr()
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert kept["datasetId"] in out
    assert empty["datasetId"] in out
    assert "2 datasets" in out
    target = tmp_path / "pulled.jsonl"
    assert main(["pull", kept["datasetId"], "-o", str(target)]) == 0
    assert [json.loads(x) for x in target.read_text().splitlines()] == rows
    assert main(["purge", "--empty", "--dry-run"]) == 0
    assert f"would delete 1 dataset(s): {empty['datasetId']}" in capsys.readouterr().out
    assert main(["purge", "--empty"]) == 0
    assert main(["purge", "--agent", "shop", "--dry-run"]) == 0
    assert "would delete agent shop: 1 dataset(s)" in capsys.readouterr().out
    assert main(["purge", "--agent", "shop"]) == 0
    assert zps.datasets()["count"] == 0
    assert main(["purge"]) == 2
    assert main(["pull", "ds_missing"]) == 2
    assert "ds_missing" in capsys.readouterr().err


def test_signup_needs_an_open_server(env: Server, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signup", "--email", "a@example.com", "--url", env.url]) == 2
    assert "does not allow sign-up" in capsys.readouterr().err
    assert not credentials_path().exists()


def test_signup_on_an_open_server_saves_a_working_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_server import start_server

    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    server = start_server(tmp_path, "--open-signup")
    try:
        assert main(["signup", "--email", "new@example.com", "--url", server.url]) == 0
        assert "account new@example.com created" in capsys.readouterr().out
        assert zps.datasets()["count"] == 0  # the saved key and URL work
        assert main(["signup", "--email", "new@example.com", "--url", server.url]) == 2
        assert "exists already" in capsys.readouterr().err
    finally:
        server.stop()
