"""rows_from_otel: OTLP/JSON from the real SDK, the semconv documentation example, the older
per-event form, and bad input that is counted instead of raised."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.errors import RowError
from whileai.simulations.ingest import otel, span_facts
from whileai.simulations.ingest.otel import read_otel

FIXTURES = Path(__file__).parent / "fixtures"


# --- OTLP/JSON encoding of SDK spans (the shape an OTLP/HTTP JSON exporter sends) -------------


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    raise TypeError(type(value))


def _attrs(mapping: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in (mapping or {}).items()]


def _otlp_json(spans: Sequence[Any]) -> dict[str, Any]:
    out = []
    for span in spans:
        encoded: dict[str, Any] = {
            "traceId": format(span.context.trace_id, "032x"),
            "spanId": format(span.context.span_id, "016x"),
            "name": span.name,
            "kind": span.kind.value + 1,
            "startTimeUnixNano": str(span.start_time),
            "endTimeUnixNano": str(span.end_time),
            "attributes": _attrs(span.attributes),
            "events": [
                {"name": e.name, "timeUnixNano": str(e.timestamp),
                 "attributes": _attrs(e.attributes)}
                for e in span.events
            ],
            "status": {"code": span.status.status_code.value},
        }
        if span.status.description:
            encoded["status"]["message"] = span.status.description
        if span.parent is not None:
            encoded["parentSpanId"] = format(span.parent.span_id, "016x")
        out.append(encoded)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attrs(spans[0].resource.attributes)},
                "scopeSpans": [{"scope": {"name": "test-agent"}, "spans": out}],
            }
        ]
    }


def _parts_text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _emit_two_turn_conversation() -> list[Any]:
    """Spans a GenAI-instrumented agent emits for a two-turn, tool-calling conversation."""
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="needs the `otel` extra")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    attrs = pytest.importorskip(
        "opentelemetry.semconv._incubating.attributes.gen_ai_attributes",
        reason="needs opentelemetry-semantic-conventions (the `otel` extra)",
    )
    from opentelemetry.trace import Status, StatusCode

    exporter = memory.InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test-agent")

    ask, follow = "Where is my order 4412?", "Thanks. Can you refund it?"
    shipped = "Order 4412 shipped yesterday. Anything else?"
    sorry = "The refund service timed out, so I could not refund order 4412 yet."
    history: list[dict[str, Any]] = []

    def chat(output: dict[str, Any], usage: tuple[int, int]) -> None:
        with tracer.start_as_current_span("chat qwen3") as span:
            span.set_attribute(attrs.GEN_AI_OPERATION_NAME, "chat")
            span.set_attribute(attrs.GEN_AI_REQUEST_MODEL, "qwen3-4b")
            span.set_attribute(attrs.GEN_AI_INPUT_MESSAGES, json.dumps(history))
            span.set_attribute(attrs.GEN_AI_OUTPUT_MESSAGES, json.dumps([output]))
            span.set_attribute(attrs.GEN_AI_USAGE_INPUT_TOKENS, usage[0])
            span.set_attribute(attrs.GEN_AI_USAGE_OUTPUT_TOKENS, usage[1])
        history.append(output)

    def tool(name: str, call_id: str, args: dict[str, Any], result: Any, fail: str = "") -> None:
        with tracer.start_as_current_span(f"execute_tool {name}") as span:
            span.set_attribute(attrs.GEN_AI_OPERATION_NAME, "execute_tool")
            span.set_attribute(attrs.GEN_AI_TOOL_NAME, name)
            span.set_attribute(attrs.GEN_AI_TOOL_CALL_ID, call_id)
            span.set_attribute(attrs.GEN_AI_TOOL_CALL_ARGUMENTS, json.dumps(args))
            if fail:
                span.set_attribute("error.type", fail)
                span.set_status(Status(StatusCode.ERROR, "refund service timed out"))
            else:
                span.set_attribute(attrs.GEN_AI_TOOL_CALL_RESULT, json.dumps(result))
        if not fail:
            history.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": call_id, "response": result}]})

    def call(name: str, call_id: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "parts": [
            {"type": "tool_call", "id": call_id, "name": name, "arguments": args}]}

    # Turn 1 and turn 2 are separate traces joined by the conversation id.
    for turn, user_text in enumerate((ask, follow)):
        with tracer.start_as_current_span("invoke_agent shop") as agent:
            agent.set_attribute(attrs.GEN_AI_OPERATION_NAME, "invoke_agent")
            agent.set_attribute(attrs.GEN_AI_CONVERSATION_ID, "conv-7")
            history.append(_parts_text("user", user_text))
            if turn == 0:
                chat(call("get_order", "call_1", {"order_id": "4412"}), (40, 12))
                tool("get_order", "call_1", {"order_id": "4412"}, {"status": "shipped"})
                chat(_parts_text("assistant", shipped), (70, 15))
            else:
                chat(call("refund", "call_2", {"order_id": "4412"}), (95, 11))
                tool("refund", "call_2", {"order_id": "4412"}, None, fail="TimeoutError")
                chat(_parts_text("assistant", sorry), (120, 18))
                agent.set_attribute("whileai.reward", 0.0)
    return list(exporter.get_finished_spans())


def test_sdk_spans_to_one_row_per_conversation(tmp_path: Path) -> None:
    spans = _emit_two_turn_conversation()
    path = tmp_path / "export.json"
    path.write_text(json.dumps(_otlp_json(spans)), encoding="utf-8")
    rows = zps.rows_from_otel(path)
    assert len(rows) == 1  # two traces, one conversation id
    (row,) = rows
    assert row["conversation_id"] == "conv-7"
    assert row["prompt"] == "Where is my order 4412?"
    shape = [s.get("tool") or s["role"] for s in row["steps"]]
    assert shape == ["get_order", "assistant", "user", "refund"]
    get_order, said, user, refund = row["steps"]
    assert get_order["arguments"] == {"order_id": "4412"}
    assert get_order["result"] == {"status": "shipped"}
    assert said["content"] == "Order 4412 shipped yesterday. Anything else?"
    assert user["content"] == "Thanks. Can you refund it?"
    assert refund["result"] == {"error": "TimeoutError"}
    assert row["final_text"].startswith("The refund service timed out")
    assert row["usage"] == {"input_tokens": 40 + 70 + 95 + 120, "output_tokens": 12 + 15 + 11 + 18}
    assert row["reward"] == 0.0
    # the same spans straight from the SDK (no JSON in between) give the same row
    direct = zps.rows_from_otel(spans)
    assert [(r["prompt"], r["steps"], r["final_text"]) for r in direct] == [
        (row["prompt"], row["steps"], row["final_text"])
    ]
    # and the row aims the grid: the refund timeout is a flaw
    assert zps.mine_traces(rows)["faults"] == {"timeout": 1}


def test_semconv_documentation_tool_call_example() -> None:
    load = read_otel(FIXTURES / "otel_semconv_tool_calls.json")
    (row,) = load.rows
    assert row["prompt"] == "Weather in Paris?"
    assert row["steps"] == [
        {
            "tool": "get_weather",
            "arguments": {"location": "Paris"},
            "result": "rainy, 57°F",
            "call_id": "call_VSPygqKTWdrhaFErNvMV18Yl",
        }
    ]
    assert row["final_text"] == (
        "The weather in Paris is currently rainy with a temperature of 57°F."
    )
    assert row["usage"] == {"input_tokens": 47 + 97, "output_tokens": 17 + 52}
    assert row["model_version"] == "gpt-4-0613"
    assert "reward" not in row
    assert load.counts["tool_calls_without_result"] == 0
    assert load.counts["spans_in"] == 3


def test_attribute_names_match_the_semconv_package() -> None:
    attrs = pytest.importorskip(
        "opentelemetry.semconv._incubating.attributes.gen_ai_attributes",
        reason="needs opentelemetry-semantic-conventions (the `otel` extra)",
    )
    assert otel.CONVERSATION_ID == attrs.GEN_AI_CONVERSATION_ID
    assert span_facts.TOOL_NAME == attrs.GEN_AI_TOOL_NAME
    assert otel.TOOL_CALL_ID == attrs.GEN_AI_TOOL_CALL_ID
    assert otel.TOOL_CALL_ARGUMENTS == attrs.GEN_AI_TOOL_CALL_ARGUMENTS
    assert otel.TOOL_CALL_RESULT == attrs.GEN_AI_TOOL_CALL_RESULT
    assert otel.INPUT_MESSAGES == attrs.GEN_AI_INPUT_MESSAGES
    assert otel.OUTPUT_MESSAGES == attrs.GEN_AI_OUTPUT_MESSAGES
    assert span_facts.OPERATION_NAME == attrs.GEN_AI_OPERATION_NAME


def test_older_per_event_form() -> None:
    tool_calls = [{"id": "c9", "type": "function",
                   "function": {"name": "get_order", "arguments": '{"order_id": "7"}'}}]
    span = {
        "traceId": "aa", "spanId": "01", "name": "chat m", "startTimeUnixNano": "10",
        "endTimeUnixNano": "20",
        "attributes": {"gen_ai.operation.name": "chat", "gen_ai.usage.prompt_tokens": 5,
                       "gen_ai.usage.completion_tokens": 3, "my.score": True},
        "events": [
            {"name": "gen_ai.system.message", "attributes": {"content": "be brief"}},
            {"name": "gen_ai.user.message", "attributes": {"content": "status of 7?"}},
            {"name": "gen_ai.assistant.message",
             "attributes": {"tool_calls": json.dumps(tool_calls)}},
            {"name": "gen_ai.tool.message",
             "attributes": {"id": "c9", "content": '{"status": "lost"}'}},
            {"name": "gen_ai.choice",
             "attributes": {"index": 0, "finish_reason": "stop",
                            "message": json.dumps({"content": "Order 7 is lost."})}},
        ],
    }
    (row,) = zps.rows_from_otel([span], reward_keys=("my.score",))
    assert row["prompt"] == "status of 7?"
    assert row["steps"] == [{"tool": "get_order", "arguments": {"order_id": "7"},
                             "result": {"status": "lost"}, "call_id": "c9"}]
    assert row["final_text"] == "Order 7 is lost."
    assert row["usage"] == {"input_tokens": 5, "output_tokens": 3}
    assert row["reward"] == 1.0


def test_messages_as_structures_not_strings() -> None:
    span = {"trace_id": "bb", "span_id": "02", "name": "chat", "attributes": {
        "gen_ai.input.messages": [_parts_text("user", "hello")],
        "gen_ai.output.messages": [_parts_text("assistant", "hi there")]}}
    (row,) = zps.rows_from_otel(span)
    assert (row["prompt"], row["final_text"]) == ("hello", "hi there")


def test_bad_spans_are_counted_never_raised() -> None:
    good = {"traceId": "cc", "spanId": "1", "name": "chat", "attributes": [
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
            [_parts_text("user", "refund 5")])}},
        {"key": "weird", "value": {"mysteryValue": 3}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": "{not json"}},
        {"no_key": True},
    ]}
    no_ids = {"name": "chat", "attributes": []}
    no_time_tool = {"traceId": "cc", "spanId": "2", "name": "execute_tool refund",
                    "attributes": [{"key": "gen_ai.tool.call.arguments",
                                    "value": {"stringValue": '{"order_id": "5"}'}}]}
    bad_reward = {"traceId": "cc", "spanId": "3", "name": "x", "startTimeUnixNano": "nope",
                  "attributes": {"whileai.reward": "great"}}
    load = read_otel({"resourceSpans": [{"scopeSpans": [{"spans": [
        good, no_ids, no_time_tool, bad_reward, "not a span", 42]}]}]})
    (row,) = load.rows
    assert row["prompt"] == "refund 5"
    assert row["steps"] == [{"tool": "refund", "arguments": {"order_id": "5"}, "result": None}]
    assert "reward" not in row
    counts = load.counts
    assert counts["spans_in"] == 6
    assert counts["not_a_span"] == 2
    assert counts["missing_ids"] == 1
    assert counts["missing_times"] == 3
    assert counts["unknown_values"] == 2
    assert counts["bad_json"] == 1
    assert counts["tool_calls_without_result"] == 1
    assert counts["rewards_rejected"] == 1


def test_jsonl_export_with_a_broken_line(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "otel_semconv_tool_calls.json").read_text(encoding="utf-8"))
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(doc) + "\n{broken\n", encoding="utf-8")
    load = read_otel(path)
    assert len(load.rows) == 1
    assert load.counts["skipped_lines"] == 1


def test_bad_source_raises_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RowError, match="no such file"):
        zps.rows_from_otel(tmp_path / "nope.json")
    with pytest.raises(RowError, match="iterable of spans"):
        zps.rows_from_otel(3.5)


def test_assistant_opening_is_kept_for_opening_share() -> None:
    span = {"traceId": "dd", "spanId": "1", "name": "chat", "attributes": {
        "gen_ai.input.messages": [_parts_text("assistant", "Hi! I can help with orders."),
                                  _parts_text("user", "where is 4412")],
        "gen_ai.output.messages": [_parts_text("assistant", "It shipped.")]}}
    (row,) = zps.rows_from_otel([span])
    assert row["prompt"] == "where is 4412"
    assert row["steps"] == []
    assert row["final_text"] == "It shipped."
    assert row["messages"][0] == {"role": "assistant", "content": "Hi! I can help with orders."}
    assert zps.opening_share(zps.load_traces([row])) == 1.0


def test_reward_from_an_evaluation_event() -> None:
    span = {"traceId": "ee", "spanId": "1", "name": "chat", "attributes": {
        "gen_ai.input.messages": [_parts_text("user", "refund 3")]},
        "events": [{"name": "gen_ai.evaluation.result", "attributes": [
            {"key": "gen_ai.evaluation.name", "value": {"stringValue": "task_success"}},
            {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": 1.0}}]}]}
    (row,) = zps.rows_from_otel([span], reward_keys=("gen_ai.evaluation.score.value",))
    assert row["reward"] == 1.0
    (plain,) = zps.rows_from_otel([span])
    assert "reward" not in plain


def test_sdk_ids_are_zero_padded_like_an_otlp_export() -> None:
    from types import SimpleNamespace

    span = SimpleNamespace(
        context=SimpleNamespace(trace_id=0x0534FF, span_id=0x01), parent=None, name="chat m",
        start_time=1, end_time=2, status=None, events=(),
        attributes={"gen_ai.input.messages": '[{"role": "user", "parts": '
                                             '[{"type": "text", "content": "hi"}]}]'})
    (row,) = zps.rows_from_otel([span])
    assert row["trace_id"] == "0534ff".zfill(32)


def test_a_reward_carried_only_by_a_span_event_is_read() -> None:
    ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
    spans = [{"traceId": "ee", "spanId": "1", "name": "chat m", "startTimeUnixNano": "1",
              "attributes": {"gen_ai.input.messages": ask},
              "events": [{"name": "gen_ai.evaluation.result", "timeUnixNano": "2",
                          "attributes": {"gen_ai.evaluation.score.value": 0.25}}]}]
    (row,) = zps.rows_from_otel(spans, reward_keys=("gen_ai.evaluation.score.value",))
    assert row["reward"] == 0.25
    assert "reward" not in zps.rows_from_otel(spans)[0]
