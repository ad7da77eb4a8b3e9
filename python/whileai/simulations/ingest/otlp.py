"""Spans in: OTLP/JSON exports, flat span dicts and SDK span objects decoded to one frozen shape.

OTLP/JSON nests spans as ``resourceSpans[].scopeSpans[].spans[]`` with attributes as
``[{"key", "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" | "arrayValue" |
"kvlistValue" | "bytesValue"}}]``, hex ids and nanosecond timestamps as strings. Anything that
does not decode is counted in :class:`SpanCounts` rather than raised, so one odd span never costs
the rest of the batch.

>>> batch = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "ab", "spanId": "01",
...     "name": "chat m", "startTimeUnixNano": "5",
...     "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}}]}]}]}]}
>>> spans, counts = decode_spans(batch)
>>> spans[0].trace_id, spans[0].start, spans[0].attributes["gen_ai.usage.input_tokens"]
('ab', 5, 12)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any, NamedTuple

from whileai.errors import RowError
from whileai.simulations.ingest.conventions import adapt_attributes

__all__ = [
    "Span",
    "SpanCounts",
    "SpanEvent",
    "decode_attributes",
    "decode_spans",
    "decode_value",
]

_MISSING = object()
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_PLAIN = (str, int, float, bool)  # values that decode to themselves (exact types: a fast path)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanEvent:
    """One span event: its name, time (ns, or None) and decoded attributes."""

    name: str
    time: int | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)


class Span(NamedTuple):
    """One span, decoded: ids as hex strings, times in ns, attributes as plain Python values.

    Immutable; a tuple because the platform's trace receiver makes one per span received, and a
    tuple is made in under half the time of a frozen dataclass."""

    trace_id: str
    span_id: str
    parent_id: str = ""
    name: str = ""
    start: int | None = None
    end: int | None = None
    attributes: Mapping[str, Any] = MappingProxyType({})
    events: tuple[SpanEvent, ...] = ()
    error: bool = False
    status_message: str = ""
    # Position in the input, the tie-break when times are missing or equal. The field hides
    # ``tuple.index``, which no caller of a span needs.
    index: int = 0  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanCounts:
    """What decoding could not use as given."""

    spans_in: int = 0
    not_a_span: int = 0
    missing_ids: int = 0
    missing_times: int = 0
    unknown_values: int = 0
    skipped_lines: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts as a plain dict."""
        return {
            "spans_in": self.spans_in,
            "not_a_span": self.not_a_span,
            "missing_ids": self.missing_ids,
            "missing_times": self.missing_times,
            "unknown_values": self.unknown_values,
            "skipped_lines": self.skipped_lines,
        }


def decode_value(value: Any, tally: Counter[str] | None = None) -> Any:
    """An OTLP ``AnyValue`` (or an already plain value) -> a plain Python value.

    Unknown shapes decode to ``None`` and are counted under ``unknown_values`` in ``tally``.

    >>> decode_value({"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "a"}]}})
    [1, 'a']
    >>> decode_value({"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": True}}]}})
    {'k': True}
    """
    if type(value) in _PLAIN or not isinstance(value, Mapping):
        return value
    if len(value) == 0:
        return None
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            pass
    elif "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            pass
    elif "arrayValue" in value:
        items = _values_of(value["arrayValue"])
        if isinstance(items, list):
            return [decode_value(v, tally) for v in items]
    elif "kvlistValue" in value:
        pairs = _values_of(value["kvlistValue"])
        if isinstance(pairs, list):
            return _decode_attributes(pairs, tally)
    elif "bytesValue" in value:
        return str(value["bytesValue"])
    if tally is not None:
        tally["unknown_values"] += 1
    return None


def _values_of(holder: Any) -> Any:
    """The ``values`` of an ``arrayValue`` / ``kvlistValue`` (None when it is not an object)."""
    if not holder:
        return []
    return (holder.get("values") or []) if isinstance(holder, Mapping) else None


def _plain_attributes(raw: Mapping[Any, Any], tally: Counter[str] | None) -> dict[str, Any]:
    """A mapping of already plain values (the common case) without re-wrapping each pair."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            if tally is not None:
                tally["unknown_values"] += 1
            continue
        if type(value) not in _PLAIN:
            value = decode_value(value, tally)
        if value is not None:
            out[key] = value
    return out


def _decode_attributes(raw: Any, tally: Counter[str] | None) -> dict[str, Any]:
    """OTLP ``[{"key", "value"}]`` or a plain mapping -> ``{key: plain value}``."""
    out: dict[str, Any] = {}
    if type(raw) is dict:
        return _plain_attributes(raw, tally)
    if isinstance(raw, Mapping):
        items: Iterable[Any] = [{"key": k, "value": v} for k, v in raw.items()]
    elif isinstance(raw, list):
        items = raw
    else:
        if raw is not None and tally is not None:
            tally["unknown_values"] += 1
        return out
    for item in items:
        if (not isinstance(item, Mapping) or not isinstance(item.get("key"), str)
                or "value" not in item):
            if tally is not None:
                tally["unknown_values"] += 1
            continue
        decoded = decode_value(item.get("value"), tally)
        if decoded is not None:
            out[item["key"]] = decoded
    return out


def decode_attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``[{"key", "value"}]`` attributes (or a plain mapping) as ``{key: plain value}``.

    >>> decode_attributes([{"key": "gen_ai.agent.name", "value": {"stringValue": "bot"}}])
    {'gen_ai.agent.name': 'bot'}
    """
    return _decode_attributes(raw, None)


def _time(raw: Any) -> int | None:
    if isinstance(raw, bool) or raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
        return _iso_time(raw)
    return value if value > 0 else None


def _iso_time(raw: Any) -> int | None:
    """An ISO-8601 time (the SDK's console JSON: ``2026-01-02T03:04:05.123456Z``) in ns."""
    if not isinstance(raw, str):
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    value = (moment - _EPOCH) // timedelta(microseconds=1) * 1000
    return value if value > 0 else None


def _hex_id(raw: Any, width: int = 16) -> str:
    """An id as lower-case hex; an SDK's integer id zero-padded to its OTLP width (32 hex digits
    for a trace, 16 for a span), so it equals the id an OTLP export of the same span carries."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return format(raw, f"0{width}x") if raw else ""
    return str(raw).strip().lower().removeprefix("0x") if raw else ""


def _from_sdk(obj: Any, tally: Counter[str], index: int) -> Span:
    """An OpenTelemetry SDK ``ReadableSpan`` (duck-typed; the SDK is never imported here)."""
    ctx = getattr(obj, "context", None)
    parent = getattr(obj, "parent", None)
    status = getattr(obj, "status", None)
    code = getattr(getattr(status, "status_code", None), "name", "")
    events = tuple(
        SpanEvent(
            name=str(getattr(e, "name", "")),
            time=_time(getattr(e, "timestamp", None)),
            attributes=_decode_attributes(dict(getattr(e, "attributes", None) or {}), tally),
        )
        for e in getattr(obj, "events", ()) or ()
    )
    return Span(
        trace_id=_hex_id(getattr(ctx, "trace_id", None), 32),
        span_id=_hex_id(getattr(ctx, "span_id", None)),
        parent_id=_hex_id(getattr(parent, "span_id", None)),
        name=str(getattr(obj, "name", "") or ""),
        start=_time(getattr(obj, "start_time", None)),
        end=_time(getattr(obj, "end_time", None)),
        attributes=adapt_attributes(
            _decode_attributes(dict(getattr(obj, "attributes", None) or {}), tally)),
        events=events,
        error=code == "ERROR",
        status_message=str(getattr(status, "description", "") or ""),
        index=index,
    )


def _first(d: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = d.get(key)
        if value is not None and value != "":
            return value
    return None


def _from_dict(raw: Mapping[str, Any], tally: Counter[str], index: int) -> Span:
    """An OTLP/JSON span, or a flat span dict with snake_case keys and plain attributes."""
    status = raw.get("status") if isinstance(raw.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    code = status.get("code", status.get("status_code"))
    events = []
    raw_events = raw.get("events") or []
    if not isinstance(raw_events, list):
        tally["unknown_values"] += 1
        raw_events = []
    for e in raw_events:
        if not isinstance(e, Mapping):
            tally["unknown_values"] += 1
            continue
        events.append(
            SpanEvent(
                name=str(e.get("name") or ""),
                time=_time(_first(e, "timeUnixNano", "time_unix_nano", "timestamp")),
                attributes=_decode_attributes(e.get("attributes"), tally),
            )
        )
    ctx = raw.get("context")
    ids = ctx if isinstance(ctx, Mapping) else raw  # the SDK's console JSON nests its ids
    return Span(
        trace_id=_hex_id(_first(ids, "traceId", "trace_id"), 32),
        span_id=_hex_id(_first(ids, "spanId", "span_id")),
        parent_id=_hex_id(_first(raw, "parentSpanId", "parent_span_id", "parent_id")),
        name=str(raw.get("name") or ""),
        start=_time(_first(raw, "startTimeUnixNano", "start_time_unix_nano", "start_time")),
        end=_time(_first(raw, "endTimeUnixNano", "end_time_unix_nano", "end_time")),
        attributes=adapt_attributes(_decode_attributes(raw.get("attributes"), tally)),
        events=tuple(events),
        error=code in (2, "2", "STATUS_CODE_ERROR", "ERROR", "error"),
        status_message=str(status.get("message") or status.get("description") or ""),
        index=index,
    )


def _raw_spans(source: Any) -> Iterable[Any]:
    """Flatten exports (``resourceSpans``), lists of exports and lists of spans."""
    if isinstance(source, Mapping):
        if "resourceSpans" in source or "resource_spans" in source:
            resources = source.get("resourceSpans") or source.get("resource_spans") or []
            for resource in resources if isinstance(resources, list) else [resources]:
                if not isinstance(resource, Mapping):
                    yield resource
                    continue
                scopes = resource.get("scopeSpans") or resource.get("scope_spans") or []
                for scope in scopes if isinstance(scopes, list) else [scopes]:
                    spans = scope.get("spans") if isinstance(scope, Mapping) else scope
                    yield from spans if isinstance(spans, list) else [spans]
        else:
            yield source
        return
    for item in source:
        if isinstance(item, Mapping) and ("resourceSpans" in item or "resource_spans" in item):
            yield from _raw_spans(item)
        else:
            yield item


def decode_spans(source: Any) -> tuple[list[Span], SpanCounts]:
    """Decode an export dict, a list of exports, or an iterable of span dicts / SDK spans.

    Spans with neither a trace id nor a conversation id, and items that are not spans at all,
    are counted and left out; spans without a start time are kept (ordered by position). A
    :class:`Span` decoded already passes through as it is, its ``index`` included (a receiver
    that decoded a batch once hands its spans on without a second decode).

    Raises:
        RowError: ``source`` is not a mapping or an iterable.
    """
    tally: Counter[str] = Counter()
    if isinstance(source, str | bytes) or not isinstance(source, Mapping | Iterable):
        raise RowError(
            f"rows_from_otel: expected an OTLP/JSON export (dict or file path) or an iterable "
            f"of spans, got {type(source).__name__}"
        )
    if type(source) is list and all(type(s) is Span for s in source):
        decoded: list[Span] = source  # a receiver's batch, decoded once already
    else:
        decoded = _decoded(source, tally)
    kept = [s for s in decoded if s.trace_id or s.attributes.get("gen_ai.conversation.id")]
    tally.update(spans_in=len(decoded) + tally["not_a_span"],
                 missing_ids=len(decoded) - len(kept),  # nothing to group them by
                 missing_times=sum(1 for s in kept if s.start is None))
    return kept, SpanCounts(**tally)


def _decoded(source: Any, tally: Counter[str]) -> list[Span]:
    """Every item of ``source`` that is a span, as a :class:`Span` (others counted)."""
    spans: list[Span] = []
    for index, raw in enumerate(_raw_spans(source)):
        if type(raw) is Span:
            spans.append(raw)
        elif isinstance(raw, Mapping):
            spans.append(_from_dict(raw, tally, index))
        elif hasattr(raw, "context") and hasattr(raw, "attributes"):
            spans.append(_from_sdk(raw, tally, index))
        else:
            tally["not_a_span"] += 1
    return spans


def values_of(spans: Sequence[Span], key: str) -> list[Any]:
    """Every value ``key`` takes across ``spans``, in span order (a small query helper)."""
    return [s.attributes[key] for s in spans if s.attributes.get(key, _MISSING) is not _MISSING]
