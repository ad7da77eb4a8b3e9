"""OTLP log records as the span events of the span they were emitted in.

Older GenAI conventions (and ``opentelemetry-instrumentation-openai-v2`` up to 2.3) put the chat
in log records: ``event_name`` (or the ``event.name`` attribute) ``gen_ai.user.message``,
``gen_ai.choice``, ``gen_ai.tool.message``, ..., with a ``body`` and the ``trace_id`` /
``span_id`` of the span around them. :func:`log_record_span` turns one record into a span dict
of its own (a *record span*: its ``parentSpanId`` is the record's span, one event carries the
record) with an id derived from its content, so a record sent twice is stored once and a
receiver keeps records the way it keeps spans. :func:`attach_logs` then hands each record's
event to its span, whichever arrived first; a record whose span never came is read on its own.

>>> record = {"traceId": "ab" * 16, "spanId": "01" * 8, "timeUnixNano": "7",
...     "eventName": "gen_ai.user.message", "body": {"kvlistValue": {"values": [
...     {"key": "content", "value": {"stringValue": "hi"}}]}}}
>>> span = log_record_span(record)
>>> span["parentSpanId"], span["events"][0]["name"], span["events"][0]["attributes"]["body"]
('0101010101010101', 'gen_ai.user.message', '{"content":"hi"}')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from whileai.simulations.ingest.otlp import Span, decode_attributes, decode_value

__all__ = ["LOG_RECORD", "attach_logs", "is_log_export", "log_record_span", "log_records",
           "with_record_spans"]

LOG_RECORD = "whileai.log_record"  # the attribute that marks a record span (its event name)
_EVENT_NAME_KEYS = ("event.name", "gen_ai.event.name")
_ANY_VALUE = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue",
              "bytesValue"}


def _first(d: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = d.get(key)
        if value not in (None, ""):
            return value
    return None


def _hex(raw: Any) -> str:
    return str(raw).strip().lower().removeprefix("0x") if raw else ""


def log_record_span(record: Mapping[str, Any]) -> dict[str, Any]:
    """One OTLP/JSON log record (or the SDK's console JSON of one) as a record span dict.

    The record's attributes and its ``body`` (JSON text unless it is a string) become the
    attributes of the span's one event, named after the record's event name.
    """
    attrs = decode_attributes(record.get("attributes") or {})
    name = str(_first(record, "eventName", "event_name") or _first(attrs, *_EVENT_NAME_KEYS)
               or "log")
    body = record.get("body")
    if not isinstance(body, Mapping) or _ANY_VALUE & body.keys():  # else plain (console JSON)
        body = decode_value(body)
    if body is not None:
        attrs["body"] = body if isinstance(body, str) else json.dumps(
            body, separators=(",", ":"), ensure_ascii=False, default=str)
    at = _first(record, "timeUnixNano", "time_unix_nano", "observedTimeUnixNano",
                "timestamp", "observed_timestamp")
    trace_id = _hex(_first(record, "traceId", "trace_id"))
    parent = _hex(_first(record, "spanId", "span_id"))
    if trace_id.strip("0") == "":
        trace_id = ""  # a record emitted outside any span: nothing to join it to
    digest = hashlib.blake2b(json.dumps([trace_id, parent, name, str(at), attrs],
                                        sort_keys=True, default=str).encode(),
                             digest_size=8).hexdigest()
    return {"traceId": trace_id, "spanId": digest, "parentSpanId": parent.strip("0") and parent,
            "name": name, "startTimeUnixNano": at, "endTimeUnixNano": at,
            "attributes": {LOG_RECORD: name},
            "events": [{"name": name, "timeUnixNano": at, "attributes": attrs}]}


def is_log_export(doc: Any) -> bool:
    """Whether ``doc`` is an OTLP/JSON logs export or a console-JSON log record."""
    return isinstance(doc, Mapping) and ("resourceLogs" in doc or "resource_logs" in doc or (
        "body" in doc and ("observed_timestamp" in doc or "severity_number" in doc)))


def log_records(doc: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], Mapping[str, Any]]]:
    """``(record, resource attributes)`` for every record of an OTLP/JSON logs export (or the
    one console-JSON record ``doc`` is)."""
    if "resourceLogs" not in doc and "resource_logs" not in doc:
        resource = doc.get("resource") if isinstance(doc.get("resource"), Mapping) else {}
        yield dict(doc), decode_attributes((resource or {}).get("attributes") or {})
        return
    for resource_logs in doc.get("resourceLogs") or doc.get("resource_logs") or []:
        if not isinstance(resource_logs, Mapping):
            continue
        resource = decode_attributes((resource_logs.get("resource") or {}).get("attributes")
                                     or {})
        for scope in resource_logs.get("scopeLogs") or resource_logs.get("scope_logs") or []:
            records = scope.get("logRecords") if isinstance(scope, Mapping) else None
            for record in records if isinstance(records, list) else []:
                if isinstance(record, Mapping):
                    yield dict(record), resource


def attach_logs(spans: Sequence[Span]) -> tuple[list[Span], int, int]:
    """The spans with each record span's event moved onto the span it names (in time order);
    record spans whose span is not among ``spans`` stay as they are.

    Returns the spans, how many records were joined to their span, and how many were not.
    """
    records = [s for s in spans if LOG_RECORD in s.attributes]
    if not records:
        return list(spans), 0, 0
    index = {s.span_id: i for i, s in enumerate(spans) if LOG_RECORD not in s.attributes}
    extra: dict[int, list[Any]] = {}
    alone: set[str] = set()
    for record in records:
        target = index.get(record.parent_id) if record.parent_id else None
        if target is None:
            alone.add(record.span_id)
        else:
            extra.setdefault(target, []).extend(record.events)
    out: list[Span] = []
    for i, span in enumerate(spans):
        if LOG_RECORD in span.attributes:
            if span.span_id in alone:
                out.append(span)
            continue
        if i in extra:
            events = sorted((*span.events, *extra[i]), key=lambda e: e.time or 0)
            span = span._replace(events=tuple(events))
        out.append(span)
    return out, len(records) - len(alone), len(alone)


def with_record_spans(source: Any) -> Any:
    """``source`` (an export, or a list of exports and spans) with every logs export or console
    log record in it replaced by its record spans; anything else as it is."""
    if isinstance(source, Mapping):
        return _expanded([source]) if is_log_export(source) else source
    if type(source) is list and source and type(source[0]) is not Span and any(
            is_log_export(item) for item in source):
        return _expanded(source)
    return source


def _expanded(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if is_log_export(item):
            out.extend(log_record_span(record) for record, _ in log_records(item))
        else:
            out.append(item)
    return out
