"""The OTLP receiver's decoding, without a server: the protobuf walk gives the spans the shared
reader (``ingest.otlp``) reads from the bodies the receiver stores, and rows built for a whole
batch equal rows built trace by trace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from platform_server import require_server_extra
from whileai.simulations.ingest.otel import read_otel
from whileai.simulations.ingest.otlp import decode_spans

require_server_extra()
pytest.importorskip("opentelemetry.proto")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue  # noqa: E402

from whileai.server.errors import api_error  # noqa: E402
from whileai.server.services.otlp import PROTOBUF, decode_body, proto_body  # noqa: E402
from whileai.server.services.problems import Invalid  # noqa: E402
from whileai.server.services.traces import _rows  # noqa: E402


def _value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, list):
        out = AnyValue()
        out.array_value.values.extend(_value(v) for v in value)
        return out
    if isinstance(value, dict):
        out = AnyValue()
        out.kvlist_value.values.extend(_pairs(value))
        return out
    if value is None:
        return AnyValue()  # no value set
    return AnyValue(string_value=value)


def _pairs(attrs: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=_value(v)) for k, v in attrs.items()]


def _request() -> ExportTraceServiceRequest:
    """Spans with every shape the walk handles: kvlist, array, bytes and unset values, events,
    an error status, a parent, missing times, and a second resource."""
    request = ExportTraceServiceRequest()
    ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "where is W1"}]}])
    shapes: list[dict[str, Any]] = [
        {"name": "invoke_agent a", "attrs": {"gen_ai.agent.name": "bot", "n": 3, "x": 0.5,
                                             "ok": True, "tags": ["a", "b"], "blob": b"\x00\x01",
                                             "kv": {"k": 1, "stringValue": "odd"}, "nil": None}},
        {"name": "chat m", "parent": True, "attrs": {"gen_ai.input.messages": ask},
         "events": [("gen_ai.choice", 7, {"message": '{"content": "hello"}'}), ("e", 0, {})]},
        {"name": "execute_tool get_order", "parent": True, "error": "boom", "start": 0,
         "attrs": {"gen_ai.tool.name": "get_order", "gen_ai.tool.call.arguments": "{}"}},
    ]
    for r in range(2):
        rs = request.resource_spans.add()
        rs.resource.attributes.extend(_pairs({"service.name": f"svc{r}"}))
        scope = rs.scope_spans.add()
        for i, shape in enumerate(shapes):
            span = scope.spans.add()
            span.trace_id = bytes([r + 1]) * 16
            span.span_id = bytes([r + 1, i + 1]) * 8
            if shape.get("parent"):
                span.parent_span_id = bytes([r + 1, 1]) * 8
            span.name = shape["name"]
            span.start_time_unix_nano = shape.get("start", 100 + i)
            span.end_time_unix_nano = 200 + i
            span.attributes.extend(_pairs(shape["attrs"]))
            for name, at, attrs in shape.get("events", []):
                event = span.events.add()
                event.name, event.time_unix_nano = name, at
                event.attributes.extend(_pairs(attrs))
            if shape.get("error"):
                span.status.code = 2
                span.status.message = shape["error"]
    return request


def test_protobuf_spans_equal_what_the_shared_reader_reads_from_the_stored_bodies() -> None:
    request = _request()
    received = decode_body(request.SerializeToString(), PROTOBUF, "", limit=1 << 20)
    assert len(received) == 6
    sent = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    for index, item in enumerate(received):
        assert item.body is None
        assert item.proto == sent[index].SerializeToString()
        shown = json.loads(json.dumps(proto_body(item.proto)))  # as a stored span is read back
        (again,), _ = decode_spans([shown])
        assert item.span == again._replace(index=index)
    first = received[0].span
    assert first.attributes["blob"] == "AAE="
    assert first.attributes["tags"] == ["a", "b"]
    assert "nil" not in first.attributes
    assert received[0].resource == {"service.name": "svc0"}
    assert received[2].span.error
    assert received[2].span.start is None
    assert received[1].span.events[1].time is None


def test_json_bodies_decode_through_the_shared_reader_and_bad_ones_are_refused() -> None:
    spans = [{"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat m",
              "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": "bot"}}]}]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    (item,) = decode_body(body, "application/json", "", limit=1 << 20)
    assert item.span == decode_spans(spans)[0][0]
    nested = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {**spans[0], "resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}]}]}]}).encode()
    for bad in (b"[1]", b'{"resourceSpans": [1]}', b"{", nested):
        with pytest.raises(Invalid) as caught:
            decode_body(bad, "application/json", "", limit=1 << 20)
        assert api_error(caught.value).code == "bad_request"


def _trace(trace: str, ask: str, conversation: str | None = None) -> list[dict[str, Any]]:
    extra = {"gen_ai.conversation.id": conversation} if conversation else {}
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": ask}]}])
    return [{"traceId": trace, "spanId": f"{trace[:8]}0000000{n}", "name": "chat m",
             "startTimeUnixNano": str(10 + n),
             "attributes": {"gen_ai.input.messages": messages, **extra}} for n in (1, 2)]


@pytest.mark.parametrize("conversations", [False, True])
def test_rows_of_a_batch_equal_rows_read_trace_by_trace(conversations: bool) -> None:
    bodies = {f"{t:032x}": _trace(f"{t:032x}", f"ask {t}", "c1" if conversations else None)
              for t in range(1, 5)}
    spans, _ = decode_spans([b for trace in bodies.values() for b in trace])
    groups: dict[str, list[Any]] = {}
    for span in spans:
        groups.setdefault(span.trace_id, []).append(span)
    expected = {t: dict(read_otel(b).rows[0]) for t, b in bodies.items()}
    assert _rows(groups) == expected


def test_stored_spans_read_the_same_in_every_stored_form() -> None:
    from whileai.server.services.trace_reads import stored_span as _stored

    ids = {"traceId": "ab" * 16, "spanId": "01" * 8}
    span = {"name": "chat m", "attributes": {"gen_ai.agent.name": "a"}}
    proto = next(s for rs in _request().resource_spans for ss in rs.scope_spans
                 for s in ss.spans).SerializeToString()
    # before the ids moved to their columns, before the agent did, and now
    old = _stored("ab" * 16, "01" * 8, json.dumps({**ids, **span, "whileaiAgent": "a"}), None,
                  None)
    older = _stored("ab" * 16, "01" * 8, json.dumps({**span, "whileaiAgent": "a"}), None, None)
    now = _stored("ab" * 16, "01" * 8, json.dumps(span), None, "a")
    assert old == older == now == ({**ids, **span}, "a")
    assert list(now[0]) == ["traceId", "spanId", "name", "attributes"]
    body, agent = _stored("ab" * 16, "01" * 8, "", proto, "b")
    assert agent == "b"
    assert body == {**proto_body(proto), **ids}
    assert list(body)[:2] == ["traceId", "spanId"]
