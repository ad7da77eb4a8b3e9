"""``whileai serve`` attacked as a stranger, a careless user and another local user would:
credentials that overreach, the server folder, account squatting, CSRF, guessing, headers,
``/docs``, keys in argv, and the start-up checks. Every test starts (or shares) the real server.
"""

from __future__ import annotations

import http.client
import os
import pty
import re
import secrets
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from platform_server import Server, start_server
from platform_server import require_server_extra as _require
from whileai.cli import main

_require()

ON_SQLITE = not os.environ.get("WHILEAI_DATABASE_URL")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def delegated(url: str, token: str, **body: object) -> requests.Response:
    return requests.post(url + "/v1/auth/delegated", json=body, headers=bearer(token),
                         timeout=30)


def form_token(session: requests.Session, url: str) -> str:
    """Open the sign-in page as a browser would; the CSRF token its form carries."""
    page = session.get(url + "/signin", timeout=30)
    assert page.status_code == 200
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert found is not None, "the sign-in form has no CSRF field"
    return found.group(1)


def sign_in(url: str, key: str) -> requests.Session:
    """A browser session signed in with ``key``."""
    session = requests.Session()
    token = form_token(session, url)
    done = session.post(url + "/signin", data={"key": key, "csrf": token},
                        allow_redirects=False, timeout=30)
    assert done.status_code == 303, done.text
    assert session.cookies.get("whileai_session", "").startswith("wps_")
    return session


def signed_in(session: requests.Session, url: str) -> bool:
    page = session.get(url + "/datasets", allow_redirects=False, timeout=30)
    return page.status_code == 200


@pytest.fixture
def admin(platform_server: Server) -> str:
    return platform_server.key(f"root-{secrets.token_hex(4)}", admin=True)


@pytest.fixture
def alice(platform_server: Server) -> tuple[str, str]:
    name = f"alice-{secrets.token_hex(4)}"
    return name, platform_server.key(name)


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with open sign-up and Secure cookies forced."""
    server = start_server(tmp_path_factory.mktemp("open"), "--open-signup", "--secure-cookies")
    yield server
    server.stop()


# 1. Privilege escalation: only an admin's API key mints keys for other accounts.

def test_a_delegated_credential_or_page_session_of_an_admin_cannot_mint_keys(
        platform_server: Server, admin: str, alice: tuple[str, str]) -> None:
    url = platform_server.url
    name, _ = alice
    short = delegated(url, admin, ttl_seconds=60).json()["credential"]
    minted = requests.post(url + "/v1/admin/keys", json={"account": name, "existing": True},
                           headers=bearer(short), timeout=30)
    assert minted.status_code == 403
    assert "delegated credential cannot mint keys for other accounts" in minted.json()["message"]
    cookie = sign_in(url, admin).cookies["whileai_session"]
    as_bearer = requests.post(url + "/v1/admin/keys", json={"account": name, "existing": True},
                              headers=bearer(cookie), timeout=30)
    assert as_bearer.status_code == 401
    assert "only as the pages' cookie" in as_bearer.json()["message"]
    by_key = requests.post(url + "/v1/admin/keys", json={"account": name, "existing": True},
                           headers=bearer(admin), timeout=30)
    assert by_key.status_code == 201


def test_every_operation_declares_the_capability_it_needs(platform_server: Server) -> None:
    spec = requests.get(platform_server.url + "/openapi.json", timeout=30).json()
    public = {("get", "/health"), ("get", "/v1/catalog"), ("post", "/v1/signup")}
    # every credential may also come as the plain X-Api-Key header: the same capability rule
    needs = {(method, path): [name for rule in op.get("security", []) for name in rule
                              if name != "x-api-key"]
             for path, ops in spec["paths"].items() for method, op in ops.items()}
    assert {k for k, v in needs.items() if not v} == public
    assert all(len(v) == 1 for k, v in needs.items() if k not in public)
    assert needs[("post", "/v1/admin/keys")] == ["admin"]
    assert needs[("post", "/v1/keys")] == needs[("post", "/v1/keys/{key_id}/revoke")] == ["keys"]
    assert needs[("post", "/v1/datasets")] == ["write"]
    assert needs[("get", "/v1/datasets")] == ["read"]
    assert needs[("get", "/v1/datasets/{dataset_id}/manifest")] == ["optional"]


# 6. Delegated credentials stay inside their issuer's limits; sign-out ends the session.

def test_a_delegated_credential_cannot_outlive_or_outgrow_its_issuer(
        platform_server: Server, alice: tuple[str, str]) -> None:
    url = platform_server.url
    _, key = alice
    short = delegated(url, key, ttl_seconds=60).json()
    week = delegated(url, short["credential"], ttl_seconds=604800).json()
    assert week["expiresAt"] <= short["expiresAt"]
    assert week["ttlSeconds"] <= 60
    refreshed = requests.post(url + "/v1/auth/delegated/refresh", headers=bearer(
        short["credential"]), json={"credential": short["credential"], "ttl_seconds": 604800},
        timeout=30).json()
    assert refreshed["expiresAt"] <= short["expiresAt"]
    by_key = requests.post(url + "/v1/auth/delegated/refresh", headers=bearer(key), timeout=30,
                           json={"credential": short["credential"], "ttl_seconds": 7200}).json()
    assert by_key["expiresAt"] > short["expiresAt"]  # the key holder may extend it

    reader = delegated(url, key, ttl_seconds=600, scope=["read"]).json()
    assert reader["scope"] == ["read"]
    assert requests.get(url + "/v1/datasets", headers=bearer(reader["credential"]),
                        timeout=30).status_code == 200
    push = requests.post(url + "/v1/datasets", params={"name": "x"}, data=b'{"prompt":"p"}\n',
                         headers=bearer(reader["credential"]), timeout=30)
    assert push.status_code == 403
    assert "may only read" in push.json()["message"]
    wider = delegated(url, reader["credential"], ttl_seconds=60, scope=["read", "write"]).json()
    assert wider["scope"] == ["read"]


def test_a_delegated_credential_cannot_mint_or_revoke_keys(
        platform_server: Server, alice: tuple[str, str]) -> None:
    url = platform_server.url
    _, key = alice
    short = delegated(url, key, ttl_seconds=60).json()["credential"]
    key_id = next(k["keyId"] for k in requests.get(url + "/v1/keys", headers=bearer(key),
                                                   timeout=30).json()["keys"])
    revoke = requests.post(url + f"/v1/keys/{key_id}/revoke", headers=bearer(short),
                           timeout=30)
    assert revoke.status_code == 403
    assert "cannot mint or revoke API keys" in revoke.json()["message"]
    assert requests.post(url + "/v1/keys", json={"name": "x"}, headers=bearer(short),
                         timeout=30).status_code == 403
    assert requests.get(url + "/v1/account", headers=bearer(key), timeout=30).ok


def test_sign_out_revokes_the_session_on_the_server(
        platform_server: Server, alice: tuple[str, str]) -> None:
    url = platform_server.url
    _, key = alice
    session = sign_in(url, key)
    cookie = session.cookies["whileai_session"]
    assert signed_in(session, url)
    token = re.search(r'name="csrf" value="([0-9a-f]+)"',
                      session.get(url + "/datasets", timeout=30).text)
    assert token is not None
    out = session.post(url + "/signout", data={"csrf": token.group(1)}, allow_redirects=False,
                       timeout=30)
    assert out.status_code == 303
    replay = requests.Session()
    replay.cookies.set("whileai_session", cookie)
    assert not signed_in(replay, url)
    assert requests.get(url + "/v1/datasets", headers=bearer(cookie), timeout=30).status_code \
        == 401


def test_revoking_a_key_ends_the_page_sessions_opened_with_it(platform_server: Server) -> None:
    url = platform_server.url
    name = f"carol-{secrets.token_hex(4)}"
    first, second = platform_server.key(name), platform_server.key(name, existing=True)
    session = sign_in(url, first)
    assert signed_in(session, url)
    first_id = next(k["keyId"] for k in requests.get(url + "/v1/keys", headers=bearer(first),
                                                     timeout=30).json()["keys"] if k["current"])
    assert requests.post(url + f"/v1/keys/{first_id}/revoke", headers=bearer(second),
                         timeout=30).ok
    assert not signed_in(session, url)
    assert signed_in(sign_in(url, second), url)


# 7. Login and logout CSRF.

def test_forms_posted_from_another_site_are_refused(
        platform_server: Server, alice: tuple[str, str]) -> None:
    url = platform_server.url
    _, key = alice
    victim = requests.Session()
    token = form_token(victim, url)
    forged = victim.post(url + "/signin", data={"key": key, "csrf": token},
                         headers={"Origin": "https://evil.example"}, allow_redirects=False,
                         timeout=30)
    assert forged.status_code == 403
    assert "whileai_session" not in victim.cookies
    no_token = victim.post(url + "/signin", data={"key": key}, allow_redirects=False,
                           timeout=30)
    assert no_token.status_code == 403
    assert "token is missing or stale" in no_token.text
    other_browser = requests.Session()  # a token rendered for another browser is no good
    form_token(other_browser, url)
    stolen = other_browser.post(url + "/signin", data={"key": key, "csrf": token},
                                allow_redirects=False, timeout=30)
    assert stolen.status_code == 403

    session = sign_in(url, key)
    good = {"csrf": form_token(session, url)}
    for headers, data in (({"Origin": "https://evil.example"}, good),
                          ({"Referer": "https://evil.example/page"}, good),
                          ({"Origin": "null"}, good),
                          ({}, {}), ({}, {"csrf": "0" * 64})):
        out = session.post(url + "/signout", data=data, headers=headers, allow_redirects=False,
                           timeout=30)
        assert out.status_code == 403, (headers, data)
    assert signed_in(session, url)


# 2. The server folder is private whatever the umask; an open one is refused.

def test_the_server_folder_and_every_file_in_it_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        server = start_server(tmp_path)
    finally:
        os.umask(old)
    try:
        key = server.key("owner")
        pushed = requests.post(server.url + "/v1/datasets", params={"name": "d"},
                               data=b'{"prompt":"p"}\n', headers=bearer(key), timeout=30)
        assert pushed.status_code == 201, pushed.text
        paths = [server.directory, *server.directory.rglob("*")]
        assert len(server.files("parts")) == 1
        if ON_SQLITE:
            assert {p.name for p in paths} >= {"whileai.db", "whileai.db-wal", "parts", "tmp"}
        modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in paths}
        assert {k: oct(m) for k, m in modes.items()
                if m != (0o700 if Path(tmp_path, k).is_dir() else 0o600)} == {}
    finally:
        server.stop()


@pytest.mark.skipif(not ON_SQLITE, reason="the database file is SQLite's")
def test_a_folder_or_database_other_users_can_read_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "server"
    assert main(["serve", "--dir", str(folder), "--create-key", "me"]) == 0
    capsys.readouterr()
    for path, mode in ((folder / "whileai.db", 0o644), (folder, 0o755)):
        os.chmod(path, mode)
        assert main(["serve", "--dir", str(folder), "--create-key", "me", "--existing"]) == 2
        err = capsys.readouterr().err
        assert f"{path} is readable by other users (mode {mode:o})" in err
        assert f"chmod -R go= {folder}" in err
    subprocess.run(["chmod", "-R", "go=", str(folder)], check=True)
    assert main(["serve", "--dir", str(folder), "--create-key", "me", "--existing"]) == 0


# 3. Account squatting with open sign-up.

def test_create_key_for_an_account_a_stranger_signed_up_asks_first(
        open_server: Server, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    email = f"newhire-{secrets.token_hex(3)}@corp.example"
    signup = requests.post(open_server.url + "/v1/signup", json={"email": email}, timeout=30)
    assert signup.status_code == 201
    monkeypatch.setenv("WHILEAI_DATABASE_URL", open_server.database)
    args = ["serve", "--dir", str(open_server.directory), "--create-key", email]
    assert main(args) == 2  # no terminal to ask on: refused
    err = capsys.readouterr().err
    assert f"account {email} ({signup.json()['accountId']}) exists: made by open sign-up" in err
    assert "nobody checked that address" in err
    assert "--existing" in err
    keys = requests.get(open_server.url + "/v1/keys",
                        headers=bearer(signup.json()["key"]), timeout=30).json()
    assert keys["count"] == 1  # nothing was minted into the stranger's account
    assert main([*args, "--existing"]) == 0
    assert "for existing account" in capsys.readouterr().err


def _create_key_on_a_terminal(server: Server, account: str, answer: bytes) -> tuple[int, str]:
    """``whileai serve --create-key`` with a terminal on stdin that answers ``answer``."""
    main_end, term_end = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "whileai", "serve", "--dir", str(server.directory),
             "--create-key", account], stdin=term_end, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=server.env())
        os.write(main_end, answer)
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(main_end)
        os.close(term_end)
    assert "exists: made by open sign-up" in err.decode(), (out, err)
    return proc.returncode, out.decode().strip()  # stdout holds the key alone


def test_create_key_on_a_terminal_adds_the_key_only_when_confirmed(open_server: Server) -> None:
    email = f"later-{secrets.token_hex(3)}@corp.example"
    signup = requests.post(open_server.url + "/v1/signup", json={"email": email}, timeout=30)
    assert signup.status_code == 201
    assert _create_key_on_a_terminal(open_server, email, b"n\n")[0] == 2
    code, key = _create_key_on_a_terminal(open_server, email, b"y\n")
    assert code == 0
    assert requests.get(open_server.url + "/v1/account", headers=bearer(key),
                        timeout=30).json()["accountId"] == signup.json()["accountId"]


def test_the_admin_route_says_whose_an_existing_account_is(
        platform_server: Server, admin: str, alice: tuple[str, str]) -> None:
    name, _ = alice
    taken = requests.post(platform_server.url + "/v1/admin/keys", json={"account": name},
                          headers=bearer(admin), timeout=30)
    assert taken.status_code == 409
    assert f"account {name} (acct_" in taken.json()["message"]
    assert "existing: true" in taken.json()["message"]


# 13. The public catalog cannot be spoofed.

def test_catalog_cards_name_their_owner_and_lookalikes_are_refused(
        platform_server: Server, alice: tuple[str, str]) -> None:
    url = platform_server.url
    name, key = alice
    mallory = platform_server.key(f"mallory-{secrets.token_hex(4)}")
    agent = f"support-{secrets.token_hex(3)}"
    card = {"agent": agent, "description": "the real one"}
    ids = []
    for token, set_name in ((key, "Orders v1"), (mallory, "orders  V1")):
        pushed = requests.post(url + "/v1/datasets", params={"name": set_name},
                               data=b'{"prompt":"p"}\n', headers=bearer(token), timeout=30)
        ids.append(pushed.json()["datasetId"])
    first = requests.post(url + f"/v1/datasets/{ids[0]}/publish", json=card,
                          headers=bearer(key), timeout=30)
    assert first.status_code == 200, first.text
    assert first.json()["owner"] == name
    spoof = requests.post(url + f"/v1/datasets/{ids[1]}/publish",
                          json={**card, "agent": agent.upper()}, headers=bearer(mallory),
                          timeout=30)
    assert spoof.status_code == 409
    assert f"account {name} publishes 'Orders v1'" in spoof.json()["message"]
    listed = [c for c in requests.get(url + "/v1/catalog", timeout=30).json()["datasets"]
              if c["agent"] == agent]
    assert [(c["datasetId"], c["owner"]) for c in listed] == [(ids[0], name)]
    assert name in requests.get(url + "/catalog", timeout=30).text


# 14. Guesses and sign-ups are throttled.

def test_refused_credentials_are_throttled_per_address(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--max-auth-failures", "5")
    try:
        key = server.key("victim")
        statuses = [requests.get(server.url + "/v1/datasets", timeout=30,
                                 headers=bearer(f"wai_{secrets.token_urlsafe(32)}")).status_code
                    for _ in range(8)]
        assert statuses == [401] * 5 + [429] * 3
        late = requests.get(server.url + "/v1/datasets", headers=bearer(key), timeout=30)
        assert late.status_code == 429  # not even a right guess is checked now
        assert 1 <= int(late.headers["Retry-After"]) <= 60
        browser = requests.Session()
        page = browser.post(server.url + "/signin", allow_redirects=False, timeout=30,
                            data={"key": key, "csrf": form_token(browser, server.url)})
        assert page.status_code == 429
        assert "Retry-After" in page.headers
    finally:
        server.stop()


def _get_from(source: str, server: Server, path: str, token: str) -> int:
    """The status of a GET sent from loopback address ``source`` (another client)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request("GET", path, headers=bearer(token))
        return conn.getresponse().status
    finally:
        conn.close()


def test_forged_delegated_credentials_are_throttled_per_account(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--max-auth-failures", "3")
    try:
        key = server.key("target")
        good = delegated(server.url, key, ttl_seconds=600).json()["credential"]
        forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
        codes = [_get_from("127.0.0.1", server, "/v1/account", forged) for _ in range(3)]
        assert codes == [401, 401, 401]
        # from a fresh address: the account's budget is spent, the address's is not
        assert _get_from("127.0.0.2", server, "/v1/account", forged) == 429
        assert _get_from("127.0.0.2", server, "/v1/account", good) == 429
        assert _get_from("127.0.0.2", server, "/v1/account", "wai_wrong") == 401
        assert _get_from("127.0.0.3", server, "/v1/account", key) == 200  # keys still work
    finally:
        server.stop()


def test_sign_ups_are_throttled_per_address(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--open-signup", "--max-signups", "3")
    try:
        answers = [requests.post(server.url + "/v1/signup", timeout=30,
                                 json={"email": f"bot{i}@x.example"}) for i in range(5)]
        assert [a.status_code for a in answers] == [201, 201, 201, 429, 429]
        assert int(answers[-1].headers["Retry-After"]) > 60  # 3 an hour: a token in 20 min
    finally:
        server.stop()


# 15. Page headers and cookies.

def test_every_page_forbids_framing_sniffing_and_other_sources(platform_server: Server) -> None:
    for path in ("/signin", "/catalog", "/docs", "/v1/catalog", "/nope"):
        got = requests.get(platform_server.url + path, timeout=30)
        assert got.headers["X-Frame-Options"] == "DENY", path
        assert got.headers["X-Content-Type-Options"] == "nosniff", path
        csp = got.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp
        assert "default-src 'self'" in csp
        assert "http" not in csp  # no source on another host


def test_cookies_are_secure_behind_https_or_when_asked(
        platform_server: Server, open_server: Server, alice: tuple[str, str]) -> None:
    _, key = alice
    plain = requests.get(platform_server.url + "/signin", timeout=30).headers["set-cookie"]
    assert "whileai_csrf=" in plain
    assert "secure" not in plain.lower()
    browser = requests.Session()
    token = form_token(browser, platform_server.url)
    # a TLS proxy on this machine says the request came over https (uvicorn trusts loopback)
    proxied = browser.post(platform_server.url + "/signin", data={"key": key, "csrf": token},
                           headers={"X-Forwarded-Proto": "https"}, allow_redirects=False,
                           timeout=30)
    assert proxied.status_code == 303
    assert "secure" in proxied.headers["set-cookie"].lower()
    forced = requests.get(open_server.url + "/signin", timeout=30)
    assert "secure" in forced.headers["set-cookie"].lower()


# 16. /docs makes no request to another host.

def test_docs_are_served_from_this_server_only(platform_server: Server) -> None:
    page = requests.get(platform_server.url + "/docs", timeout=30)
    assert page.status_code == 200
    assert "<script" not in page.text
    assert re.findall(r'(?:src|href)="(?:https?:)?//[^"]*"', page.text) == []
    assert "/v1/admin/keys" in page.text
    assert "admin" in page.text


# 17. whileai login keeps the key out of argv.

def _login(server: Server, stdin: bytes | None, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "WHILEAI_API_KEY"}
    return subprocess.run([sys.executable, "-m", "whileai", "login", "--url", server.url, *args],
                          input=stdin, stdin=subprocess.DEVNULL if stdin is None else None,
                          capture_output=True, env=env, timeout=120, check=False)


def test_login_reads_the_key_from_stdin_and_says_how_when_there_is_none(
        platform_server: Server, alice: tuple[str, str]) -> None:
    name, key = alice
    piped = _login(platform_server, key.encode() + b"\n")
    assert piped.returncode == 0, piped.stderr
    assert f"as {name}" in piped.stdout.decode()
    forced = _login(platform_server, key.encode() + b"\n", "--key-stdin")
    assert forced.returncode == 0, forced.stderr
    empty = _login(platform_server, None)
    assert empty.returncode == 2
    assert "internal error" not in empty.stderr.decode()
    assert "no API key: run it in a terminal" in empty.stderr.decode()
    argv = _login(platform_server, None, "--key", key)
    assert argv.returncode == 0
    assert "other users of this machine can read" in argv.stderr.decode()


# #39 item 14: start-up checks and where the server folder is.

def test_a_busy_port_is_reported_before_the_folder_is_made(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "whileai", "serve", "--dir",
                               str(tmp_path / "new"), "--port", str(port)],
                              capture_output=True, timeout=120, check=False)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert f"port {port} on 127.0.0.1 is in use" in err
    assert "Errno" not in err
    assert not (tmp_path / "new").exists()


def test_a_key_of_another_server_folder_is_refused_with_a_hint(tmp_path: Path) -> None:
    elsewhere = Server(directory=tmp_path / "other", database="")
    key = elsewhere.key("me")
    server = start_server(tmp_path)
    try:
        refused = requests.get(server.url + "/v1/account", headers=bearer(key), timeout=30)
        assert refused.status_code == 401
        assert "minted in: check --dir" in refused.json()["message"]
    finally:
        server.stop()


@pytest.mark.skipif(not ON_SQLITE, reason="the SQLite file shows where the folder went")
def test_whileai_home_moves_the_default_server_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WHILEAI_SERVER_DIR", raising=False)
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WHILEAI_DATABASE_URL", "")
    assert main(["serve", "--create-key", "me"]) == 0
    assert (tmp_path / "home" / "server" / "whileai.db").is_file()
