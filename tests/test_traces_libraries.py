"""The instrumentation libraries teams install, driven for real, into the real server.

Each case runs ``otel_drive.py`` in a subprocess: the library under test instruments the official
``openai`` client, which talks to a local chat-completions stub; 20 two-call tool-using
conversations go through the SDK's ``OTLPSpanExporter`` (and ``OTLPLogExporter``) to a real
``whileai serve``, with and without a parent span per conversation, span by span or in batches.
Every conversation must come out as one complete row (prompt, tool call with arguments and call
id, tool result, final text, usage of both calls, the answering model, the agent), and the SDK's
console JSON of the same spans, read offline by ``read_otel``, must give the same rows.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from whileai.simulations.ingest.otel import read_otel
from whileai.simulations.ingest.otlp_files import read_export

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is missing")

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "otel_drive.py"
LEGACY_PYTHON = HERE.parent / ".venv-otel-legacy" / "bin" / "python"
N = 20
FIRST = 4400
_MODULES = {
    "openai-v2": "opentelemetry.instrumentation.openai_v2",
    "openai-v2-true": "opentelemetry.instrumentation.openai_v2",
    "openllmetry": "opentelemetry.instrumentation.openai",
    "openinference": "openinference.instrumentation.openai",
    "openinference-genai": "openinference.instrumentation.openai",
}


def _python(library: str) -> str:
    """The interpreter that holds ``library`` (skips, saying how to get it, when none does)."""
    if library == "openai-v2-legacy":
        if not LEGACY_PYTHON.exists():
            pytest.skip("openai-v2 2.3b0 needs its own virtualenv (wrapt<2): make "
                        ".venv-otel-legacy/bin/.ready builds it")
        return str(LEGACY_PYTHON)
    if importlib.util.find_spec("openai") is None or (
            importlib.util.find_spec(_MODULES[library].rsplit(".", 1)[0]) is None
            or importlib.util.find_spec(_MODULES[library]) is None):
        pytest.skip(f"{_MODULES[library]} is not installed: pip install 'whileai[otel-libraries]'")
    return sys.executable


def _drive(library: str, tmp_path: Path, url: str, key: str, *, parent: bool,
           batch: bool = False) -> Path:
    console = tmp_path / f"{library}.json"
    args = [_python(library), str(DRIVER), library, "--n", str(N), "--first", str(FIRST),
            "--endpoint", url, "--key", key, "--console", str(console),
            *(["--parent"] if parent else []), *(["--batch"] if batch else [])]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return console


def _expected(n: int) -> dict[str, Any]:
    return {"prompt": f"where is order {n}?",
            "steps": [{"tool": "get_order", "arguments": {"order_id": str(n)},
                       "result": {"order_id": str(n), "status": "shipped"},
                       "call_id": f"call_{n}"}],
            "final_text": f"Order {n} has shipped.",
            "usage": {"input_tokens": 70, "output_tokens": 21},
            "model_version": "gpt-test-2026-01-01"}


def _server_rows(url: str, key: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    auth = {"Authorization": f"Bearer {key}"}
    listing = requests.get(f"{url}/v1/traces", params={"limit": 1000}, headers=auth,
                           timeout=30).json()
    rows = []
    for item in listing["traces"]:
        if item["genai"]:
            found = requests.get(f"{url}/v1/traces/{item['traceId']}", headers=auth,
                                 timeout=30).json()
            rows.append({**found["row"], "agent": item["agent"]})
    return listing, rows


def _offline_rows(console: Path) -> list[dict[str, Any]]:
    docs = read_export(console)[0]
    logs = console.with_name(console.name + ".logs")
    if logs.stat().st_size:
        docs += read_export(logs)[0]
    return list(read_otel(docs).rows)


def _key(row: dict[str, Any]) -> str:
    return str(row["prompt"])


@pytest.mark.parametrize("parent", [False, True], ids=["no-parent", "parent"])
@pytest.mark.parametrize("library", ["openai-v2", "openllmetry", "openinference",
                                     "openinference-genai", "openai-v2-legacy"])
def test_every_conversation_is_one_complete_row(library: str, parent: bool, tmp_path: Path,
                                                 platform_server: Any) -> None:
    key = platform_server.key(f"lib-{library}-{parent}")
    # Span by span (each call's trace in its own request: the merge across requests), and in
    # the SDK's batches for the parent spans and for OpenInference (the merge in one request).
    batch = parent or library.startswith("openinference")
    console = _drive(library, tmp_path, platform_server.url, key, parent=parent, batch=batch)
    listing, rows = _server_rows(platform_server.url, key)
    assert listing["genai"] == N, listing["raw_reasons"]
    assert listing["raw_reasons"] == ({} if parent else {"merged": N})
    for row in rows:
        n = int(row["prompt"].split()[-1].rstrip("?"))
        assert {k: row[k] for k in _expected(n)} == _expected(n)
        assert row["agent"] == "support-bot"
        assert FIRST <= n < FIRST + N
    assert len({r["prompt"] for r in rows}) == N
    offline = _offline_rows(console)
    assert sorted(offline, key=_key) == sorted(
        [{k: v for k, v in r.items() if k != "agent"} for r in rows], key=_key)


def test_content_capture_true_on_openai_v2_24_is_raw_and_says_what_to_turn_on(
        tmp_path: Path, platform_server: Any) -> None:
    key = platform_server.key("lib-openai-v2-true")
    console = _drive("openai-v2-true", tmp_path, platform_server.url, key, parent=False)
    listing, rows = _server_rows(platform_server.url, key)
    assert rows == []
    assert listing["genai"] == 0
    assert listing["raw_reasons"] == {"without_content": 2 * N}
    assert "span_only" in listing["raw_advice"]["without_content"]
    load = read_otel(read_export(console)[0])
    assert load.rows == ()
    assert load.counts["without_content"] == 2 * N


def _ids(n: int) -> tuple[str, str]:
    return f"{n:032x}", f"{n:016x}"


def _log(trace: str, span: str, name: str, body: dict[str, Any], at: int) -> dict[str, Any]:
    kv = [{"key": k, "value": {"stringValue": v if isinstance(v, str) else json.dumps(v)}}
          for k, v in body.items()]
    return {"traceId": trace, "spanId": span, "timeUnixNano": str(at), "eventName": name,
            "body": {"kvlistValue": {"values": kv}}}


@pytest.mark.parametrize("logs_first", [True, False], ids=["logs-first", "spans-first"])
def test_log_records_join_their_span_in_either_order(logs_first: bool,
                                                      platform_key: str,
                                                      platform_server: Any) -> None:
    trace, span = _ids(77 + logs_first)
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": span, "name": "chat m", "startTimeUnixNano": "10",
        "endTimeUnixNano": "20", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.response.model", "value": {"stringValue": "m-1"}}]}]}]}]}
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        _log(trace, span, "gen_ai.user.message", {"content": "where is 9"}, 11),
        _log(trace, span, "gen_ai.choice", {"index": "0", "message": {
            "role": "assistant", "content": "It shipped."}}, 19)]}]}]}
    auth = {"Authorization": f"Bearer {platform_key}"}
    url = platform_server.url
    order = [("logs", logs), ("traces", spans)] if logs_first else [
        ("traces", spans), ("logs", logs)]
    replies = [requests.post(f"{url}/v1/{path}", json=body, headers=auth, timeout=30)
               for path, body in order]
    assert [r.status_code for r in replies] == [200, 200]
    if not logs_first:  # the spans alone: no content yet, and the reply says what to turn on
        warning = replies[0].json()["partialSuccess"]
        assert warning["rejectedSpans"] == "0"
        assert "/v1/logs" in warning["errorMessage"]
    row = requests.get(f"{url}/v1/traces/{trace}", headers=auth, timeout=30).json()["row"]
    assert (row["prompt"], row["final_text"], row["model_version"]) == (
        "where is 9", "It shipped.", "m-1")
    again = requests.post(f"{url}/v1/logs", json=logs, headers=auth, timeout=30)
    assert again.status_code == 200
    assert again.json() == {}  # stored already: nothing new, nothing to say
    listing = requests.get(f"{url}/v1/traces", headers=auth, timeout=30).json()
    assert (listing["genai"], listing["raw"]) == (1, 0)


def test_log_records_without_a_trace_are_rejected_with_the_reason(
        platform_key: str, platform_server: Any) -> None:
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        _log("", "", "gen_ai.user.message", {"content": "hi"}, 5)]}]}]}
    reply = requests.post(f"{platform_server.url}/v1/logs", json=logs, timeout=30,
                          headers={"Authorization": f"Bearer {platform_key}"})
    assert reply.status_code == 200
    assert reply.json()["partialSuccess"]["rejectedLogRecords"] == "1"
