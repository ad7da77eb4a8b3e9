"""OTLP/HTTP trace bodies in: protobuf or JSON, plain or gzip, to OTLP/JSON span dicts.

Protobuf is decoded with the official definitions (``opentelemetry-proto``) and turned into the
OTLP/JSON shape (hex ids, as the OTLP specification's JSON encoding writes them), so one reader,
``ingest.otlp``, handles both encodings downstream. Anything that does not decode raises
``ApiError("bad_request", reason)``: the receiver stores nothing from a malformed body.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator
from typing import Any

from whileai.server.errors import ApiError
from whileai.simulations.ingest.otlp import decode_attributes

__all__ = ["PROTOBUF", "decode_body", "encode_response", "flat_spans"]

PROTOBUF = "application/x-protobuf"


def _gunzip(body: bytes, limit: int) -> bytes:
    """Inflate a gzip body, refusing one that inflates past ``limit`` bytes (a zip bomb)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise ApiError("bad_request", f"the body is not valid gzip ({exc})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise ApiError("too_large", f"the body inflates past {limit} bytes")
    return out


def _value(any_value: Any) -> Any:
    """An OTLP ``AnyValue`` message as a plain Python value."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(any_value.bytes_value).decode()
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


def _from_proto(request: Any) -> dict[str, Any]:
    """The request as OTLP/JSON nesting with flat attributes and hex ids (walked directly:
    several times faster than protobuf's generic JSON mapping)."""
    resource_spans = []
    for rs in request.resource_spans:
        scopes = []
        for ss in rs.scope_spans:
            spans = []
            for span in ss.spans:
                flat: dict[str, Any] = {
                    "traceId": span.trace_id.hex(), "spanId": span.span_id.hex(),
                    "name": span.name, "startTimeUnixNano": str(span.start_time_unix_nano),
                    "endTimeUnixNano": str(span.end_time_unix_nano),
                    "attributes": _attributes(span.attributes),
                }
                if span.parent_span_id:
                    flat["parentSpanId"] = span.parent_span_id.hex()
                if span.events:
                    flat["events"] = [{"name": e.name, "timeUnixNano": str(e.time_unix_nano),
                                       "attributes": _attributes(e.attributes)}
                                      for e in span.events]
                if span.status.code or span.status.message:
                    flat["status"] = {"code": int(span.status.code),
                                      "message": span.status.message}
                spans.append(flat)
            scopes.append({"spans": spans})
        resource_spans.append({"resource": {"attributes": _attributes(rs.resource.attributes)},
                               "scopeSpans": scopes})
    return {"resourceSpans": resource_spans}


def decode_body(body: bytes, content_type: str, content_encoding: str, *,
                limit: int) -> dict[str, Any]:
    """The export request as an OTLP/JSON dict (``{"resourceSpans": [...]}``)."""
    if content_encoding.strip().lower() == "gzip":
        body = _gunzip(body, limit)
    elif content_encoding.strip() not in ("", "identity"):
        raise ApiError("bad_request", f"unsupported Content-Encoding {content_encoding!r}; "
                                      "send gzip or none")
    kind = content_type.split(";")[0].strip().lower()
    if kind == PROTOBUF:
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        try:
            request = ExportTraceServiceRequest.FromString(body)
        except DecodeError as exc:
            raise ApiError("bad_request", f"the body is not an OTLP protobuf "
                                          f"ExportTraceServiceRequest ({exc})") from None
        return _from_proto(request)
    if kind in ("application/json", ""):
        try:
            export = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ApiError("bad_request", f"the body is not JSON ({exc})") from None
        if not isinstance(export, dict) or not isinstance(export.get("resourceSpans", []), list):
            raise ApiError("bad_request", "an OTLP/JSON body is an object with a "
                                          "resourceSpans list")
        return export
    raise ApiError("bad_request", f"unsupported Content-Type {content_type!r}; send "
                                  f"{PROTOBUF} or application/json")


def flat_spans(export: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(span, resource attributes as plain values)`` for every span of an OTLP/JSON export.

    Raises:
        ApiError: the nesting is not ``resourceSpans[].scopeSpans[].spans[]``.
    """
    for r, resource_spans in enumerate(export.get("resourceSpans") or []):
        if not isinstance(resource_spans, dict):
            raise ApiError("bad_request", f"resourceSpans[{r}] is not an object")
        raw = (resource_spans.get("resource") or {}).get("attributes") or {}
        attrs = decode_attributes(raw)
        for s, scope in enumerate(resource_spans.get("scopeSpans") or []):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                raise ApiError("bad_request", f"resourceSpans[{r}].scopeSpans[{s}] has no "
                                              "spans list")
            for span in spans:
                if not isinstance(span, dict):
                    raise ApiError("bad_request", f"resourceSpans[{r}].scopeSpans[{s}] holds a "
                                                  "span that is not an object")
                yield span, attrs


def encode_response(rejected: int, message: str, content_type: str) -> tuple[bytes, str]:
    """An ExportTraceServiceResponse in the request's encoding (partial success when rejected)."""
    if content_type.split(";")[0].strip().lower() == PROTOBUF:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
        return response.SerializeToString(), PROTOBUF
    body: dict[str, Any] = {}
    if rejected:
        body["partialSuccess"] = {"rejectedSpans": str(rejected), "errorMessage": message}
    return json.dumps(body).encode(), "application/json"

