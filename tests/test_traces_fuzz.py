"""Bad input never crashes the trace readers: arbitrary JSON in, rows plus counts out."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import whileai.simulations as zps
from whileai.simulations.ingest.otel import read_otel
from whileai.simulations.ingest.traces import normalize_traces

KEYS = st.sampled_from([
    "prompt", "steps", "trace", "tool_trace", "messages", "final", "output", "response",
    "reward", "qwen_reward", "role", "content", "tool", "name", "arguments", "args", "result",
    "tool_calls", "tool_call_id", "id", "function", "type", "parts", "fault",
    "resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "startTimeUnixNano",
    "endTimeUnixNano", "attributes", "events", "key", "value", "stringValue", "intValue",
    "arrayValue", "kvlistValue", "values", "status", "code",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.name",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.conversation.id",
    "whileai.reward",
])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                    st.sampled_from(["", "user", "assistant", "tool", "{", "[]", '{"a": 1}',
                                     "timeout", "Error: 403", "text", "tool_call"]))
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=25,
)


@settings(deadline=None, max_examples=200)
@given(st.lists(JSON, max_size=5))
def test_load_traces_and_report_never_raise(items: list[Any]) -> None:
    load = normalize_traces(items)
    assert len(load.rows) + load.dropped == len(items)
    report = zps.trace_report(items)
    assert report["n_rows"] == len(load.rows)
    zps.format_trace_report(report)
    json.dumps(report)
    zps.tools_from_traces(load.rows)
    zps.opening_share(load.rows)


@settings(deadline=None, max_examples=200)
@given(st.one_of(st.dictionaries(KEYS, JSON, max_size=5), st.lists(JSON, max_size=5)))
def test_rows_from_otel_never_raises(source: Any) -> None:
    load = read_otel(source)
    assert load.counts["rows"] == len(load.rows)
    for row in load.rows:
        assert isinstance(row["prompt"], str)
        assert isinstance(row["steps"], list)
    json.dumps(list(load.rows))


def test_an_infinite_timestamp_is_no_time() -> None:
    span = {"traceId": "ab", "spanId": "01", "name": "chat m", "startTimeUnixNano": float("inf"),
            "attributes": {"gen_ai.input.messages":
                           '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]'}}
    (row,) = zps.rows_from_otel([span])
    assert row["prompt"] == "hi"


def test_unhashable_roles_and_types_are_dropped_not_raised() -> None:
    rows = zps.load_traces([{"prompt": [{"role": []}]},
                            {"prompt": [{"role": "user", "type": [], "content": "hi"}]}])
    assert [r["prompt"] for r in rows] == ["hi"]  # the first has nothing usable left
