"""OTLP/HTTP trace bodies in: protobuf or JSON, plain or gzip, to OTLP/JSON span dicts.

Protobuf is decoded with the official definitions (``opentelemetry-proto``) and turned into the
OTLP/JSON shape (hex ids, as the OTLP specification's JSON encoding writes them), so one reader,
``ingest.otlp``, handles both encodings downstream. Anything that does not decode raises
``ApiError("bad_request", reason)``: the receiver stores nothing from a malformed body.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Iterator
from typing import Any

from whileai.server.errors import ApiError

__all__ = ["PROTOBUF", "decode_body", "encode_response", "flat_spans"]

PROTOBUF = "application/x-protobuf"
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


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


def _hex_ids(value: Any) -> None:
    """Protobuf's JSON mapping writes bytes as base64; OTLP/JSON writes ids as hex."""
    if isinstance(value, dict):
        for key in _ID_FIELDS:
            raw = value.get(key)
            if isinstance(raw, str) and raw:
                value[key] = base64.b64decode(raw).hex()
        for item in value.values():
            _hex_ids(item)
    elif isinstance(value, list):
        for item in value:
            _hex_ids(item)


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
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        try:
            request = ExportTraceServiceRequest.FromString(body)
        except DecodeError as exc:
            raise ApiError("bad_request", f"the body is not an OTLP protobuf "
                                          f"ExportTraceServiceRequest ({exc})") from None
        export: dict[str, Any] = MessageToDict(request)
        _hex_ids(export)
        return export
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
    """``(span, resource attributes)`` for every span of an OTLP/JSON export.

    Raises:
        ApiError: the nesting is not ``resourceSpans[].scopeSpans[].spans[]``.
    """
    for r, resource_spans in enumerate(export.get("resourceSpans") or []):
        if not isinstance(resource_spans, dict):
            raise ApiError("bad_request", f"resourceSpans[{r}] is not an object")
        resource = resource_spans.get("resource") or {}
        attrs = {a.get("key"): a.get("value") for a in resource.get("attributes") or []
                 if isinstance(a, dict)}
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


def gzip_bytes(data: bytes) -> bytes:
    """Compress (tests and benches send gzip bodies with this)."""
    return gzip.compress(data)
