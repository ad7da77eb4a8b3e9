"""Each model call its own trace (no parent span): the receiver keeps one row per conversation.

OTLP/JSON bodies posted to a real ``whileai serve`` (SQLite, and PostgreSQL in ``make
pytest-postgres``): the first call's trace is a truncated copy of the second's and is merged into
it, whichever arrives first and whether both come in one request or two; a rebuilt row keeps the
usage of what it absorbed; scores on a merged trace stay where they were.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from platform_server import require_server_extra

require_server_extra()


def _attrs(**values: Any) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        kind = "intValue" if isinstance(value, int) else "stringValue"
        out.append({"key": key.replace("__", "."), "value": {
            kind: str(value) if kind == "intValue" else (
                value if isinstance(value, str) else json.dumps(value))}})
    return out


def _call(n: int, second: bool, *, tokens: int) -> dict[str, Any]:
    """One chat call's span, in a trace of its own."""
    ask = {"role": "user", "parts": [{"type": "text", "content": f"where is {n}?"}]}
    call = {"type": "tool_call", "id": f"c{n}", "name": "get_order",
            "arguments": {"order_id": str(n)}}
    if second:
        inputs = [ask, {"role": "assistant", "parts": [call]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{n}",
                                              "response": {"status": "lost"}}]}]
        outputs = [{"role": "assistant", "parts": [{"type": "text", "content": "Lost."}]}]
    else:
        inputs, outputs = [ask], [{"role": "assistant", "parts": [call]}]
    trace = f"{n:030x}{int(second) + 1:02x}"
    return {"traceId": trace, "spanId": f"{n:014x}{int(second) + 1:02x}", "name": "chat m",
            "startTimeUnixNano": str(10 + 10 * second), "endTimeUnixNano": str(15 + 10 * second),
            "attributes": _attrs(gen_ai__operation__name="chat",
                                 gen_ai__response__model="m-1",
                                 gen_ai__usage__input_tokens=tokens,
                                 gen_ai__input__messages=inputs,
                                 gen_ai__output__messages=outputs)}


def _post(url: str, key: str, *spans: dict[str, Any]) -> dict[str, Any]:
    reply = requests.post(f"{url}/v1/traces", timeout=30,
                          json={"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]},
                          headers={"Authorization": f"Bearer {key}"})
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _rows(url: str, key: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    auth = {"Authorization": f"Bearer {key}"}
    listing = requests.get(f"{url}/v1/traces", headers=auth, timeout=30).json()
    rows = [requests.get(f"{url}/v1/traces/{t['traceId']}", headers=auth, timeout=30).json()["row"]
            for t in listing["traces"] if t["genai"]]
    return listing, rows


@pytest.mark.parametrize("order", ["first-call-first", "second-call-first", "one-request"])
def test_the_truncated_copy_merges_into_its_conversation(order: str, platform_key: str,
                                                         platform_server: Any) -> None:
    url = platform_server.url
    first, second = _call(5, False, tokens=30), _call(5, True, tokens=40)
    if order == "one-request":
        _post(url, platform_key, first, second)
    else:
        sent = [first, second] if order == "first-call-first" else [second, first]
        replies = [_post(url, platform_key, span) for span in sent]
        assert "(merged)" in replies[1]["partialSuccess"]["errorMessage"]
    listing, rows = _rows(url, platform_key)
    assert (listing["genai"], listing["raw_reasons"]) == (1, {"merged": 1})
    [row] = rows
    assert row["steps"] == [{"tool": "get_order", "arguments": {"order_id": "5"},
                             "result": {"status": "lost"}, "call_id": "c5"}]
    assert (row["final_text"], row["usage"]) == ("Lost.", {"input_tokens": 70})
    assert row["lineage"]["merged"] == [first["traceId"]]
    assert [t["reason"] for t in listing["traces"] if not t["genai"]] == ["merged"]


def test_two_runs_of_one_prompt_are_not_merged(platform_key: str, platform_server: Any) -> None:
    url = platform_server.url
    one, other = _call(6, True, tokens=40), _call(6, True, tokens=41)
    other = {**other, "traceId": "f" * 32, "spanId": "e" * 16}  # a second, whole run
    _post(url, platform_key, one)
    _post(url, platform_key, other)
    listing, _ = _rows(url, platform_key)
    assert (listing["genai"], listing["raw_reasons"]) == (2, {})


def test_a_rebuilt_row_keeps_the_usage_it_absorbed(platform_key: str,
                                                   platform_server: Any) -> None:
    url = platform_server.url
    first, second = _call(7, False, tokens=30), _call(7, True, tokens=40)
    _post(url, platform_key, first)
    _post(url, platform_key, second)
    late = {"traceId": second["traceId"], "spanId": "d" * 16, "name": "execute_tool audit",
            "startTimeUnixNano": "30", "attributes": _attrs(
                gen_ai__operation__name="execute_tool", gen_ai__tool__name="audit",
                gen_ai__tool__call__result={"ok": True})}
    _post(url, platform_key, late)  # one more span of the whole conversation's trace
    _, [row] = _rows(url, platform_key)
    assert row["usage"] == {"input_tokens": 70}
    assert [s["tool"] for s in row["steps"] if "tool" in s] == ["get_order", "audit"]
    assert row["lineage"]["merged"] == [first["traceId"]]


def _turn(trace: str, ask: str, answer: str, *, tokens: int, start: int,
          conversation: str) -> dict[str, Any]:
    """One chat call of a conversation, in a trace of its own, holding only its own turn."""
    return {"traceId": trace, "spanId": trace[:16], "name": "chat m",
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5),
            "attributes": _attrs(
                gen_ai__operation__name="chat", gen_ai__response__model="m-1",
                gen_ai__conversation__id=conversation, gen_ai__usage__input_tokens=tokens,
                gen_ai__input__messages=[{"role": "user",
                                          "parts": [{"type": "text", "content": ask}]}],
                gen_ai__output__messages=[{"role": "assistant",
                                           "parts": [{"type": "text", "content": answer}]}])}


@pytest.mark.parametrize("order", ["in-order", "reversed", "one-request"])
def test_traces_of_one_conversation_join_though_neither_is_a_prefix(
        order: str, platform_key: str, platform_server: Any) -> None:
    """Two turns of one session, each call its own trace holding only its own turn: not
    copies of each other, joined by the conversation id into the row the offline reader
    builds from the same spans."""
    import whileai.simulations as zps

    url = platform_server.url
    first = _turn("a" * 31 + "1", "which order is late?", "Which order number?", tokens=11,
                  start=10, conversation="session-88")
    second = _turn("b" * 31 + "2", "order 88, please", "Order 88 ships today.", tokens=13,
                   start=20, conversation="session-88")
    lone = _turn("c" * 31 + "3", "another chat", "Hello.", tokens=5, start=30,
                 conversation="session-other")
    if order == "one-request":
        _post(url, platform_key, first, second, lone)
    else:
        for span in ([first, second, lone] if order == "in-order" else [lone, second, first]):
            _post(url, platform_key, span)
    listing, rows = _rows(url, platform_key)
    assert (listing["genai"], listing["raw_reasons"]) == (2, {"merged": 1})
    by_trace = {t["traceId"]: t for t in listing["traces"]}
    assert by_trace[second["traceId"]]["reason"] == "merged"  # the lowest id carries the row
    [joined] = [r for r in rows if r["trace_id"] == first["traceId"]]
    assert joined["lineage"]["merged"] == [second["traceId"]]
    assert joined["usage"]["input_tokens"] == 24
    offline = zps.rows_from_otel({"resourceSpans": [{"scopeSpans": [{"spans": [
        first, second]}]}]})
    assert len(offline) == 1
    expected = {**offline[0], "lineage": {**offline[0]["lineage"],
                                          "merged": [second["traceId"]]}}
    assert joined == expected
    [alone] = [r for r in rows if r["trace_id"] == lone["traceId"]]
    assert "merged" not in alone["lineage"]
