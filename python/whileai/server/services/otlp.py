"""OTLP/HTTP trace bodies in: protobuf or JSON, plain or gzip, to decoded spans.

Protobuf is decoded with the official definitions (``opentelemetry-proto``) and walked once:
each span keeps its bytes (what the store keeps) and becomes the
:class:`~whileai.simulations.ingest.otlp.Span` that ``ingest.otlp`` reads from its OTLP/JSON body
(:func:`proto_body`: hex ids, flat attributes, the shape a stored span is shown in).
An OTLP/JSON body is read by ``ingest.otlp`` itself. Anything that does not decode raises
``Invalid(reason)``: the receiver stores nothing from a malformed body.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from whileai.server.services.problems import Invalid, TooLarge
from whileai.server.services.strict_json import loads
from whileai.simulations.ingest.conventions import adapt_attributes
from whileai.simulations.ingest.logs import log_record_span, log_records
from whileai.simulations.ingest.otlp import Span, SpanEvent, decode_attributes, decode_spans

__all__ = ["PROTOBUF", "Incoming", "decode_body", "decode_logs_body", "encode_response",
           "encode_status", "proto_body"]

PROTOBUF = "application/x-protobuf"
# Keys of a whole export: a "span" holding one would be read as more spans by ``decode_spans``.
_NESTED = {"resourceSpans", "resource_spans"}
_SCALARS = (str, int, float, bool)  # values ``decode_attributes`` keeps as they are


def _media(content_type: str) -> str:
    """The media type of a ``Content-Type`` header, without parameters, lowercase."""
    return content_type.split(";")[0].strip().lower()


def _gunzip(body: bytes, limit: int) -> bytes:
    """Inflate a gzip body, refusing one that inflates past ``limit`` bytes (a zip bomb)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise Invalid(f"the body is not valid gzip ({exc})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise TooLarge(f"the body inflates past {limit} bytes")
    return out


def _value(any_value: Any) -> Any:
    """An OTLP ``AnyValue`` message as a plain Python value."""
    kind = any_value.WhichOneof("value")
    if kind == "string_value":
        return any_value.string_value
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(any_value.bytes_value).decode()
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in pairs:
        # Most values are non-empty strings: read one straight away (half the cost of asking
        # which kind it is first); an empty or other value goes the general way.
        value = kv.value
        text = value.string_value
        out[kv.key] = text if text else _value(value)
    return out


def _plain(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` as ``decode_attributes`` reads them: the same dict when every value is a plain
    scalar (the usual case; the keys of a protobuf message are strings already)."""
    if all(type(v) in _SCALARS for v in attrs.values()):
        return attrs
    return decode_attributes(attrs)


class Incoming(NamedTuple):
    """One received span as stored (``proto``: a protobuf span's bytes as they came; ``body``:
    an OTLP/JSON span; one of the two is None), its ``resource`` attributes as plain values, and
    ``span`` decoded once (``index``: its position in the request). A tuple: made once per span,
    it costs a fraction of a frozen dataclass."""

    body: dict[str, Any] | None
    proto: bytes | None
    resource: Mapping[str, Any]
    span: Span


def _events(span: Any) -> list[tuple[str, int, dict[str, Any]]]:
    return [(e.name, e.time_unix_nano, _attributes(e.attributes)) for e in span.events]


def _proto_span(span: Any, index: int) -> Span:
    """A protobuf span as the :class:`Span` ``decode_spans`` reads from :func:`proto_body` of
    it, built without making that body."""
    attrs = _attributes(span.attributes)
    events: tuple[SpanEvent, ...] = ()
    if span.events:
        events = tuple(SpanEvent(name=label, time=at or None, attributes=decode_attributes(a))
                       for label, at, a in _events(span))
    status = span.status
    code, message = status.code, status.message
    parent = span.parent_span_id
    return Span(trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                parent_id=parent.hex() if parent else "", name=span.name,
                start=span.start_time_unix_nano or None, end=span.end_time_unix_nano or None,
                attributes=adapt_attributes(_plain(attrs)), events=events, error=code == 2,
                status_message=message, index=index)


def proto_body(data: bytes) -> dict[str, Any]:
    """A stored protobuf span (its bytes) as its OTLP/JSON body: hex ids, flat attributes."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

    span = ProtoSpan.FromString(data)
    body: dict[str, Any] = {"traceId": span.trace_id.hex(), "spanId": span.span_id.hex(),
                            "name": span.name, "startTimeUnixNano": str(span.start_time_unix_nano),
                            "endTimeUnixNano": str(span.end_time_unix_nano),
                            "attributes": _attributes(span.attributes)}
    if span.parent_span_id:
        body["parentSpanId"] = span.parent_span_id.hex()
    if span.events:
        body["events"] = [{"name": label, "timeUnixNano": str(at), "attributes": a}
                          for label, at, a in _events(span)]
    code, message = span.status.code, span.status.message
    if code or message:
        body["status"] = {"code": int(code), "message": message}
    return body


def _from_proto(request: Any) -> list[Incoming]:
    """Every span of the request, walked once: its bytes to store and its :class:`Span` (several
    times faster than protobuf's generic JSON mapping followed by a second decode)."""
    out: list[Incoming] = []
    for rs in request.resource_spans:
        resource = _attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for span in ss.spans:
                out.append(Incoming(None, span.SerializeToString(), resource,
                                    _proto_span(span, len(out))))
    return out


def _from_json(export: dict[str, Any]) -> list[Incoming]:
    """Every span of an OTLP/JSON export, decoded by ``ingest.otlp`` (the reader
    ``rows_from_otel`` uses)."""
    pairs = list(_json_spans(export))
    decoded = {s.index: s for s in decode_spans([body for body, _ in pairs])[0]}
    empty = Span(trace_id="", span_id="")  # no trace id: the receiver rejects it anyway
    return [Incoming(body, None, resource, decoded.get(i, empty))
            for i, (body, resource) in enumerate(pairs)]


def decode_body(body: bytes, content_type: str, content_encoding: str, *,
                limit: int) -> list[Incoming]:
    """The spans of an export request, in order.

    Raises:
        Invalid: the reason when the body does not decode (bad gzip, not protobuf,
            not JSON, JSON not nested as ``resourceSpans[].scopeSpans[].spans[]``).
        TooLarge: it inflates past ``limit``.
    """
    body, kind = _unwrapped(body, content_type, content_encoding, limit)
    if kind == PROTOBUF:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        return _from_proto(_parsed(ExportTraceServiceRequest, body))
    export = _json_export(body, "resourceSpans")
    return _from_json(export)


def _parsed(message: Any, body: bytes) -> Any:
    """``body`` decoded as the protobuf ``message`` class (an OTLP export request).

    Raises:
        Invalid: it is not one, naming the message and the decoder's reason.
    """
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

    try:
        return message.FromString(body)
    except DecodeError as exc:
        raise Invalid(f"the body is not an OTLP protobuf {message.__name__} ({exc})") from None


def _unwrapped(body: bytes, content_type: str, content_encoding: str,
               limit: int) -> tuple[bytes, str]:
    """The body inflated when gzip, and its media type (protobuf or JSON).

    Raises:
        Invalid: an encoding or media type OTLP/HTTP does not use, bad gzip, a zip bomb.
    """
    if content_encoding.strip().lower() == "gzip":
        body = _gunzip(body, limit)
    elif content_encoding.strip() not in ("", "identity"):
        raise Invalid(f"unsupported Content-Encoding {content_encoding!r}; "
                      "send gzip or none")
    kind = _media(content_type)
    if kind not in (PROTOBUF, "application/json", ""):
        raise Invalid(f"unsupported Content-Type {content_type!r}; send "
                      f"{PROTOBUF} or application/json")
    return body, kind


def _json_export(body: bytes, nested: str) -> dict[str, Any]:
    """An OTLP/JSON body: an object holding a ``nested`` list.

    Raises:
        Invalid: not JSON, or not that object.
    """
    export = loads(body, where="the OTLP/JSON body")
    if not isinstance(export, dict) or not isinstance(export.get(nested, []), list):
        raise Invalid(f"an OTLP/JSON body is an object with a {nested} list")
    return export


def _record_json(record: Any) -> dict[str, Any]:
    """A protobuf log record as its OTLP/JSON object (hex ids, plain values)."""
    out: dict[str, Any] = {"timeUnixNano": str(record.time_unix_nano or
                                               record.observed_time_unix_nano),
                           "attributes": _attributes(record.attributes),
                           "traceId": record.trace_id.hex(), "spanId": record.span_id.hex(),
                           "eventName": getattr(record, "event_name", "")}
    if record.HasField("body"):
        out["body"] = _value(record.body)
    return out


def decode_logs_body(body: bytes, content_type: str, content_encoding: str, *,
                     limit: int) -> list[Incoming]:
    """The log records of an OTLP logs export request, each as its record span
    (``ingest.logs``), stored and read like a span.

    Raises:
        Invalid: as :func:`decode_body` does, for an ExportLogsServiceRequest / resourceLogs.
    """
    body, kind = _unwrapped(body, content_type, content_encoding, limit)
    pairs: list[tuple[dict[str, Any], Mapping[str, Any]]] = []
    if kind == PROTOBUF:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )

        for rl in _parsed(ExportLogsServiceRequest, body).resource_logs:
            resource = _attributes(rl.resource.attributes)
            pairs.extend((_record_json(r), resource) for sl in rl.scope_logs
                         for r in sl.log_records)
    else:
        export = _json_export(body, "resourceLogs")
        for r, resource_logs in enumerate(export.get("resourceLogs") or []):
            scopes = resource_logs.get("scopeLogs") if isinstance(resource_logs, dict) else None
            if not isinstance(scopes, list | None) or not all(
                    isinstance(sc, dict) and isinstance(sc.get("logRecords", []), list)
                    for sc in scopes or []):
                raise Invalid(f"resourceLogs[{r}] is not nested as "
                              "scopeLogs[].logRecords[]")
            pairs.extend(log_records({"resourceLogs": [resource_logs]}))
    spans = [log_record_span(record) for record, _ in pairs]
    decoded = {s.index: s for s in decode_spans(spans)[0]}
    empty = Span(trace_id="", span_id="")
    return [Incoming(span, None, resource, decoded.get(i, empty))
            for i, (span, (_, resource)) in enumerate(zip(spans, pairs, strict=True))]


def _json_spans(export: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(span, resource attributes as plain values)`` for every span of an OTLP/JSON export.

    Raises:
        Invalid: the nesting is not ``resourceSpans[].scopeSpans[].spans[]``.
    """
    for r, resource_spans in enumerate(export.get("resourceSpans") or []):
        if not isinstance(resource_spans, dict):
            raise Invalid(f"resourceSpans[{r}] is not an object")
        resource = resource_spans.get("resource") or {}
        if not isinstance(resource, dict):
            raise Invalid(f"resourceSpans[{r}].resource is not an object")
        raw = resource.get("attributes") or {}
        attrs = decode_attributes(raw)
        for s, scope in enumerate(resource_spans.get("scopeSpans") or []):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                raise Invalid(f"resourceSpans[{r}].scopeSpans[{s}] has no "
                              "spans list")
            for span in spans:
                if not isinstance(span, dict) or _NESTED & span.keys():
                    raise Invalid(f"resourceSpans[{r}].scopeSpans[{s}] holds a "
                                  "span that is not a span object")
                yield span, attrs


def encode_response(rejected: int, message: str, content_type: str, *,
                    logs: bool = False) -> tuple[bytes, str]:
    """An ExportTraceServiceResponse (``logs``: ExportLogsServiceResponse) in the request's
    encoding, with ``partialSuccess`` when something was rejected or ``message`` has a warning
    (OTLP's way to say "stored, but look")."""
    field = "rejected_log_records" if logs else "rejected_spans"
    if _media(content_type) == PROTOBUF:
        if logs:
            from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
                ExportLogsServiceResponse as Response,
            )
        else:
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                ExportTraceServiceResponse as Response,
            )
        response = Response()
        if rejected or message:
            setattr(response.partial_success, field, rejected)
            response.partial_success.error_message = message
        return response.SerializeToString(), PROTOBUF
    body: dict[str, Any] = {}
    if rejected or message:
        key = "rejectedLogRecords" if logs else "rejectedSpans"
        body["partialSuccess"] = {key: str(rejected), "errorMessage": message}
    return json.dumps(body).encode(), "application/json"


def encode_status(message: str, content_type: str) -> tuple[bytes, str]:
    """A ``google.rpc.Status`` carrying ``message``, in the request's encoding: what OTLP/HTTP
    answers every 4xx and 5xx with (``code`` left out, as the specification allows)."""
    if _media(content_type) == PROTOBUF:
        from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

        return Status(message=message).SerializeToString(), PROTOBUF
    return json.dumps({"message": message}).encode(), "application/json"
