"""The server's limits and input checks as an attacker or a careless client meets them, on a real
``whileai serve`` (issue #34: items 4, 5, 8, 9, 10, 11, 12; one test per item, named after it).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from platform_server import Server, require_server_extra, start_server

require_server_extra()

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with short deadlines (1 s to send headers or a piece of a body) and the default
    eight ingest places, four per account."""
    server = start_server(tmp_path_factory.mktemp("limits"), "--read-timeout", "1",
                          "--idle-timeout", "1", "--max-request-bytes", str(64 * MIB))
    try:
        yield server
    finally:
        server.stop()


def _connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30)


def _head(path: str, *, key: str | None = None, length: int | None = None,
          content_type: str = "application/json", chunked: bool = False) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or 30 s pass)."""
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return out


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def _rss(server: Server) -> int:
    """The server process's resident memory in bytes."""
    assert server.proc is not None
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _export_body(trace: str) -> bytes:
    span = {"traceId": trace, "spanId": "01" * 8, "name": "s", "startTimeUnixNano": "1",
            "endTimeUnixNano": "2", "attributes": [
                {"key": "gen_ai.agent.name", "value": {"stringValue": "fair"}}]}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


# Item 4: one account cannot stall everyone's trace ingest; slow and idle connections close.

def test_item4_one_account_cannot_hold_every_ingest_place(strict: Server) -> None:
    stalling, other = strict.key("staller"), strict.key("bystander")
    held = []
    try:
        for _ in range(8):  # each declares a megabyte and sends one byte
            sock = _connect(strict)
            sock.sendall(_head("/v1/traces", key=stalling, length=1_000_000) + b"{")
            held.append(sock)
        answer = requests.post(f"{strict.url}/v1/traces", data=_export_body("ab" * 16),
                               headers={"Authorization": f"Bearer {other}",
                                        "Content-Type": "application/json"}, timeout=30)
        assert answer.status_code == 200, answer.text
        # The staller got at most four places; the rest were turned away with 429 at once,
        # and the four it holds are cut off by the body deadline (408, connection closed).
        statuses = sorted(_status(_answer(sock)) for sock in held)
        assert statuses.count(429) >= 4
        assert set(statuses) <= {408, 429}
    finally:
        for sock in held:
            sock.close()


def test_item4_idle_slowloris_and_slow_body_connections_are_closed(strict: Server) -> None:
    key = strict.key("slow")
    idle = _connect(strict)  # never sends a byte
    loris = _connect(strict)
    loris.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # headers never finish
    trickle = _connect(strict)
    trickle.sendall(_head("/v1/runs", key=key, length=100))
    started = time.monotonic()
    for _ in range(20):  # a byte every 0.2 s: within each piece's second, far below the rate
        try:
            loris.sendall(b"X-A: b\r\n")
            trickle.sendall(b" ")
        except OSError:
            break
        time.sleep(0.2)
    assert _answer(idle) == b""  # closed, nothing said
    assert _answer(loris) == b""
    late = _answer(trickle)
    assert _status(late) == 408
    assert b'"timeout"' in late
    assert time.monotonic() - started < 29  # closed by the server, not by our 30 s timeout
    for sock in (idle, loris, trickle):
        sock.close()
    # A kept-alive connection is closed after the idle timeout too.
    kept = _connect(strict)
    kept.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _status(_answer(kept)) == 200  # the answer, then the close
    kept.close()


# Item 5: the key is checked before the body is read; every route has a size limit (413).

def test_item5_no_key_is_refused_before_the_body_is_read(strict: Server) -> None:
    for path in ("/v1/runs", "/v1/scores", "/v1/datasets?name=x", "/v1/traces"):
        sock = _connect(strict)
        sock.sendall(_head(path, length=200 * MIB) + b"{")  # 200 MiB declared, 1 byte sent
        answer = _answer(sock)
        sock.close()
        assert _status(answer) == 401, (path, answer[:200])
    sock = _connect(strict)
    sock.sendall(_head("/v1/runs", key="wai_" + "x" * 43, length=200 * MIB) + b"{")
    assert _status(_answer(sock)) == 401
    sock.close()


def test_item5_json_routes_have_a_size_limit_and_memory_stays_bounded(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--max-request-bytes", "2000")
    try:
        key = server.key("big")
        auth = {"Authorization": f"Bearer {key}"}
        padded = {"name": "r", "config": {"pad": "x" * 4000}}
        answer = requests.post(f"{server.url}/v1/runs", json=padded, headers=auth, timeout=30)
        assert answer.status_code == 413, answer.text  # not a 400 about a field
        assert answer.json()["error"] == "too_large"
        assert requests.get(f"{server.url}/v1/runs", headers=auth, timeout=30).json()[
            "total"] == 0
    finally:
        server.stop()
    (tmp_path / "wide").mkdir()
    server = start_server(tmp_path / "wide")
    try:
        key = server.key("wide")
        before = _rss(server)

        def chunks() -> Iterator[bytes]:  # 100 MiB, framed in chunks: no Content-Length
            block = b" " * MIB
            yield b'{"scores": ['
            for _ in range(100):
                yield block

        for path in ("/v1/scores", "/v1/runs", "/v1/agents/x"):
            method = requests.put if path.startswith("/v1/agents") else requests.post
            try:
                answer = method(f"{server.url}{path}", data=chunks(), timeout=60,
                                headers={"Authorization": f"Bearer {key}",
                                         "Content-Type": "application/json"})
                assert answer.status_code == 413, (path, answer.text)
            except requests.ConnectionError:
                pass  # refused and closed while we were still sending: nothing was held
        assert _rss(server) - before < 120 * MIB
    finally:
        server.stop()
