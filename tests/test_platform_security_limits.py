"""The server's limits and input checks as an attacker or a careless client meets them, on a real
``whileai serve`` (issue #34: items 4, 5, 8, 9, 10, 11, 12; one test per item, named after it).
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

import whileai.simulations as zps
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


# Item 8: a push stores only lines that are JSON rows every reader can read back.

BAD_LINES = {
    "not JSON": b"{not json at all}",
    "two values": b'{"a": 1}{"b": 2}',
    "invalid UTF-8": b'{"prompt": "\xff\xfe"}',
    "a NUL byte": b'{"prompt": "a\x00b"}',
    "an escaped NUL": b'{"prompt": "a\\u0000b"}',
    "a 5000-digit integer": b'{"prompt": "p", "n": ' + b"9" * 5000 + b"}",
    "NaN": b'{"prompt": "p", "reward": NaN}',
    "an infinite number": b'{"prompt": "p", "reward": 1e999}',
    "100k-deep nesting": b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "101-deep nesting": b'{"a": ' + b"[" * 100 + b"]" * 100 + b"}",
    "wrong field types": b'{"prompt": "p", "steps": 5, "reward": 1}',
    "a step of the wrong type": b'{"prompt": "p", "steps": ["call"]}',
    "a string reward": b'{"prompt": "p", "reward": "high"}',
    "an array": b"[1, 2]",
}


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _push(server: Server, key: str, body: bytes, name: str = "set") -> requests.Response:
    return requests.post(f"{server.url}/v1/datasets", params={"name": name}, data=body,
                         headers=_auth(key), timeout=60)


def test_item8_push_refuses_lines_that_are_not_json_rows(strict: Server) -> None:
    key = strict.key("pusher")
    good = b'{"prompt": "fine", "reward": 1.0, "steps": [{"tool": "t"}]}\n'
    for what, line in BAD_LINES.items():
        answer = _push(strict, key, good + line + b"\n" + good)
        assert answer.status_code == 400, (what, answer.text)
        assert answer.json()["message"].startswith("upload line 2:"), (what, answer.text)
    listed = requests.get(f"{strict.url}/v1/datasets", headers=_auth(key), timeout=30).json()
    assert listed["count"] == 0
    assert strict.files("tmp") == []
    # What is accepted reads back everywhere: preview, profile and a pull.
    made = _push(strict, key, good * 3 + b'{"task_id": "t", "n": 18446744073709551615}\n')
    assert made.status_code == 201, made.text
    ds = made.json()["datasetId"]
    for tail in ("/preview", "/profile"):
        assert requests.get(f"{strict.url}/v1/datasets/{ds}{tail}", headers=_auth(key),
                            timeout=30).status_code == 200
    rows = zps.pull(ds, api_key=key, base_url=strict.url)
    assert rows[-1]["n"] == 2**64 - 1


# Item 9: run events are typed; what would break the run page is refused.

def test_item9_run_events_that_would_break_the_run_page_are_refused(strict: Server) -> None:
    key = strict.key("events")
    url = f"{strict.url}/v1/runs"
    run = requests.post(url, json={"name": "typed"}, headers=_auth(key), timeout=30).json()
    events = f"{url}/{run['runId']}/events"
    for bad, field in (({"kind": "holdout"}, "events[0].holdout.before"),
                       ({"kind": "holdout", "before": 0.1, "after": "x", "verdict": "Better"},
                        "events[0].holdout.after"),
                       ({"kind": "delta", "report": "oops"}, "events[0].delta.report"),
                       ({"kind": "delta", "report": {"metrics": {"pass": 3}}},
                        "events[0].delta.report.metrics.pass"),
                       ({"kind": "alarm", "name": "drift", "message": "m", "step": "later"},
                        "events[0].alarm.step"),
                       ({"kind": ""}, "events[0].other.kind")):
        answer = requests.post(events, json={"events": [bad]}, headers=_auth(key), timeout=30)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["message"].startswith(field), answer.text
    fine = [{"kind": "holdout", "before": 0.4, "after": 0.6, "verdict": "Better"},
            {"kind": "delta", "report": {"metrics": {"pass_at_1": {"before": 0.4}}}},
            {"kind": "checkpoint", "path": "/ckpt/1", "anything": [1, {"x": None}]}]
    answer = requests.post(events, json={"events": fine}, headers=_auth(key), timeout=30)
    assert answer.json() == {"stored": 3, "skipped": 0}
    found = requests.get(f"{url}/{run['runId']}", headers=_auth(key), timeout=30).json()
    assert [e["kind"] for e in found["events"]] == ["holdout", "delta", "checkpoint"]
    assert found["holdout_result"]["verdict"] == "Better"


# Item 10: numbers and strings out of range get a 4xx naming the field, never a 500.

def test_item10_out_of_range_inputs_get_4xx_naming_the_field(strict: Server) -> None:
    key = strict.key("ranges")
    auth = _auth(key)
    base = strict.url
    run = requests.post(f"{base}/v1/runs", json={"name": "r"}, headers=auth, timeout=30).json()
    log = f"{base}/v1/runs/{run['runId']}/log"
    big = 10**400
    ds = _push(strict, key, b'{"prompt": "p"}\n').json()["datasetId"]
    otlp = {"Content-Type": "application/json", **auth}
    deep = b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("GET", f"/v1/datasets/{ds}/parts/99999999999999999999", {}, "index"),
        ("POST", "/v1/datasets/delete-empty?max_rows=100000000000000000000", {}, "max_rows"),
        ("POST", "/v1/runs", {"json": {"name": "r", "total_steps": 1e30}}, "total_steps"),
        ("POST", "/v1/runs", {"json": {"name": "r", "total_steps": 10**30}}, "integer"),
        ("POST", log, {"json": {"points": [{"step": 1e30}]}}, "points[0].step"),
        ("POST", log, {"json": {"points": [{"step": 1, "seq": 2**40}]}}, "points[0].seq"),
        ("POST", log, {"json": {"points": [{"step": 1, "time": "noon"}]}}, "points[0].time"),
        ("POST", log, {"data": json.dumps({"points": [{"step": 1, "loss": big}]}),
                       "headers": {"Content-Type": "application/json"}}, "integer"),
        ("POST", "/v1/scores", {"data": json.dumps({"scores": [{"traceId": "a", "value": big}]}),
                                "headers": {"Content-Type": "application/json"}}, "integer"),
        ("GET", "/v1/cuts?since=" + "9" * 320 + "d", {}, "since"),
        ("GET", "/v1/cuts?holdout=nan", {}, "holdout"),
        ("GET", "/v1/traces?offset=100000000000000000000", {}, "offset"),
        ("GET", "/v1/runs?offset=100000000000000000000", {}, "offset"),
        ("POST", "/v1/traces", {"data": b'{"resourceSpans": [{"resource": "x"}]}',
                                "headers": otlp}, "resource"),
        ("POST", "/v1/traces", {"data": deep, "headers": otlp}, "nested deeper"),
        ("PUT", "/v1/agents/" + "a" * 201, {"json": {}}, "at most 200 characters"),
        ("POST", "/v1/datasets?name=n&agent=" + "a" * 201, {"data": b'{"prompt": "p"}\n'},
         "at most 200 characters"),
        ("POST", "/v1/datasets?name=n&mode=" + "m" * 41, {"data": b'{"prompt": "p"}\n'},
         "at most 40 characters"),
        ("GET", "/v1/datasets?name=%00", {}, "NUL"),
    ]
    for method, path, extra, named in cases:
        headers = {**auth, **extra.pop("headers", {})}
        url = path if path.startswith("http") else base + path
        answer = requests.request(method, url, headers=headers, timeout=30, **extra)
        assert 400 <= answer.status_code < 500, (path, answer.status_code, answer.text[:300])
        assert named in answer.text, (path, answer.text[:300])
    found = requests.get(f"{base}/v1/runs/{run['runId']}", headers=auth, timeout=30).json()
    assert found["points"] == 0
    assert requests.get(f"{base}/v1/runs", headers=auth, timeout=30).json()["total"] == 1
    # A span naming an agent longer than a name may be is rejected, the others stored.
    spans = [{"traceId": f"{i:032x}", "spanId": f"{i:016x}", "name": "s", "attributes": [
        {"key": "gen_ai.agent.name", "value": {"stringValue": name}}]}
        for i, name in ((1, "a" * 201), (2, "fine"))]
    answer = requests.post(f"{base}/v1/traces", headers=otlp, timeout=30, data=json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    assert answer.json()["partialSuccess"]["rejectedSpans"] == "1"
    listed = requests.get(f"{base}/v1/traces", headers=auth, timeout=30).json()
    assert [t["agent"] for t in listed["traces"]] == ["fine"]


def test_item10_pages_past_the_last_answer_a_page_not_a_500(strict: Server) -> None:
    key = strict.key("pager")
    _push(strict, key, b'{"prompt": "p"}\n')
    browser = requests.Session()
    form = browser.get(strict.url + "/signin", timeout=30).text
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', form)
    assert csrf is not None
    signed = browser.post(strict.url + "/signin", data={"key": key, "csrf": csrf.group(1)},
                          allow_redirects=False, timeout=30)
    assert signed.status_code == 303, signed.text[:300]
    for page in ("/datasets", "/traces", "/runs", "/catalog"):
        for number in ("1e20", "99999999999999999999", "99999999999", "-1"):
            answer = browser.get(f"{strict.url}{page}?page={number}", timeout=30)
            assert answer.status_code == 200, (page, number, answer.status_code)


# Item 11: purging an agent removes its traces too, and says how many.

def test_item11_purging_an_agent_removes_its_traces(strict: Server) -> None:
    key = strict.key("purger")
    headers = {"Content-Type": "application/json", **_auth(key)}

    def export(agent: str, count: int, first: int) -> None:
        spans = [{"traceId": f"{first + i:032x}", "spanId": f"{first + i:016x}",
                  "name": "chat", "startTimeUnixNano": "1", "endTimeUnixNano": "2",
                  "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": agent}},
                                 {"key": "gen_ai.operation.name",
                                  "value": {"stringValue": "chat"}}]}
                 for i in range(count)]
        body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
        assert requests.post(f"{strict.url}/v1/traces", data=body, headers=headers,
                             timeout=60).status_code == 200

    export("doomed", 60, 1)
    export("kept", 4, 1000)
    agents = {a["agent"]: a for a in requests.get(f"{strict.url}/v1/agents",
                                                  headers=headers, timeout=30).json()}
    assert agents["doomed"]["traces"] == 60
    dry = requests.delete(f"{strict.url}/v1/agents/doomed?dry_run=true", headers=headers,
                          timeout=30).json()
    assert (dry["traces"], dry["deleted"]) == (60, False)
    gone = requests.delete(f"{strict.url}/v1/agents/doomed", headers=headers, timeout=30)
    assert gone.json()["traces"] == 60
    listed = requests.get(f"{strict.url}/v1/traces", headers=headers, timeout=30).json()
    assert {t["agent"] for t in listed["traces"]} == {"kept"}
    assert listed["total"] == 4
    assert requests.get(f"{strict.url}/v1/cuts?agent=doomed", headers=headers,
                        timeout=30).json()["prompts"] == 0
    trace = requests.get(f"{strict.url}/v1/traces/{1:032x}", headers=headers, timeout=30)
    assert trace.status_code == 404
    assert requests.delete(f"{strict.url}/v1/agents/doomed", headers=headers,
                           timeout=30).status_code == 404


# Item 12: run ids tell nothing about other accounts; dataset references stay in the account.

def test_item12_run_ids_and_dataset_references_stay_in_their_account(strict: Server) -> None:
    alice, bob = strict.key("alice-12"), strict.key("bob-12")
    url = f"{strict.url}/v1/runs"
    mine = requests.post(url, json={"id": "run_shared", "name": "alice's"},
                         headers=_auth(alice), timeout=30)
    assert mine.status_code == 200
    theirs = requests.post(url, json={"id": "run_shared", "name": "bob's"},
                           headers=_auth(bob), timeout=30)
    assert theirs.status_code == 200, theirs.text  # not 409 "taken": no oracle
    assert theirs.json()["name"] == "bob's"
    requests.post(f"{url}/run_shared/log", json={"points": [{"step": 1, "loss": 2.0}]},
                  headers=_auth(bob), timeout=30)
    kept = requests.get(f"{url}/run_shared", headers=_auth(alice), timeout=30).json()
    assert (kept["name"], kept["points"]) == ("alice's", 0)

    private = _push(strict, alice, b'{"prompt": "p"}\n', "private").json()["datasetId"]
    public = _push(strict, alice, b'{"prompt": "p"}\n', "public").json()["datasetId"]
    assert requests.post(f"{strict.url}/v1/datasets/{public}/publish", json={"agent": "a"},
                         headers=_auth(alice), timeout=30).status_code == 200
    own = _push(strict, bob, b'{"prompt": "p"}\n', "own").json()["datasetId"]
    made_up = "ds_" + "0" * 24
    answers = {}
    for ref in (private, made_up):
        answer = requests.post(url, json={"name": "x", "dataset_id": ref},
                               headers=_auth(bob), timeout=30)
        assert answer.status_code == 404
        answers[ref] = answer.json()["message"].replace(ref, "ID")
    assert answers[private] == answers[made_up]  # a foreign set looks exactly like none
    assert requests.post(url, json={"name": "x", "holdout_id": private},
                         headers=_auth(bob), timeout=30).status_code == 404
    for ref in (own, public, "my-local-set.jsonl"):
        assert requests.post(url, json={"name": "x", "dataset_id": ref}, headers=_auth(bob),
                             timeout=30).status_code == 200
