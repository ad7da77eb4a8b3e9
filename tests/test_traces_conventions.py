"""One conversion, every convention: OpenInference, OpenLLMetry's indexed form, log records, the
SDK's console JSON, truncated per-call copies merged, and reasons for what gives no row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.simulations.ingest.joins import is_prefix, merge_prefixes
from whileai.simulations.ingest.otel import read_otel

TRACE = "ab" * 16


def _span(span_id: str, name: str, start: int, attrs: dict[str, Any],
          parent: str = "", trace: str = TRACE) -> dict[str, Any]:
    return {"traceId": trace, "spanId": span_id, "parentSpanId": parent, "name": name,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5),
            "attributes": attrs}


def test_openllmetry_indexed_prompt_and_completion() -> None:
    first = _span("01" * 8, "openai.chat", 10, {
        "gen_ai.request.model": "gpt-x", "gen_ai.response.model": "gpt-x-1",
        "gen_ai.usage.prompt_tokens": 30, "gen_ai.usage.completion_tokens": 12,
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "where is 7?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "c7",
        "gen_ai.completion.0.tool_calls.0.name": "get_order",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"order_id": "7"}'})
    second = _span("02" * 8, "openai.chat", 20, {
        "gen_ai.response.model": "gpt-x-1",
        "gen_ai.usage.prompt_tokens": 40, "gen_ai.usage.completion_tokens": 9,
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "where is 7?",
        "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.1.tool_calls.0.id": "c7",
        "gen_ai.prompt.1.tool_calls.0.name": "get_order",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"order_id": "7"}',
        "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.tool_call_id": "c7",
        "gen_ai.prompt.2.content": '{"status": "lost"}',
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "It is lost."})
    [row] = zps.rows_from_otel([first, second])
    assert row["prompt"] == "where is 7?"
    assert row["steps"] == [{"tool": "get_order", "arguments": {"order_id": "7"},
                             "result": {"status": "lost"}, "call_id": "c7"}]
    assert (row["final_text"], row["model_version"]) == ("It is lost.", "gpt-x-1")
    assert row["usage"] == {"input_tokens": 70, "output_tokens": 21}


def test_openinference_agent_tool_and_llm_spans_with_a_session() -> None:
    agent = _span("0a" * 8, "Agent", 1, {"openinference.span.kind": "AGENT",
                                         "agent.name": "support-bot", "session.id": "s-9",
                                         "llm.model_name": "asked-model"})
    llm = _span("0b" * 8, "ChatCompletion", 2, {
        "openinference.span.kind": "LLM", "llm.model_name": "served-model",
        "llm.token_count.prompt": 5, "llm.token_count.completion": 3,
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.text": "refund 12",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "refund",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
            '{"order": 12}'}, parent="0a" * 8)
    tool = _span("0c" * 8, "refund", 9, {"openinference.span.kind": "TOOL", "tool.name": "refund",
                                         "tool_call.id": "t1", "input.value": '{"order": 12}',
                                         "output.value": '{"ok": true}'}, parent="0a" * 8)
    load = read_otel([agent, llm, tool])
    [row] = load.rows
    assert row["prompt"] == "refund 12"
    assert row["steps"] == [{"tool": "refund", "arguments": {"order": 12}, "result": {"ok": True},
                             "call_id": "t1"}]
    assert (row["conversation_id"], row["model_version"]) == ("s-9", "served-model")
    assert row["usage"] == {"input_tokens": 5, "output_tokens": 3}


def test_the_answering_model_wins_over_the_agent_spans_request_model() -> None:
    chat = _span("01" * 8, "chat", 5, {"gen_ai.response.model": "m-2026",
                                       "gen_ai.request.model": "m",
                                       "gen_ai.input.messages": json.dumps(
                                           [{"role": "user", "content": "hi"}])})
    agent = _span("02" * 8, "invoke_agent bot", 1, {"gen_ai.operation.name": "invoke_agent",
                                                    "gen_ai.request.model": "m"})
    [row] = zps.rows_from_otel([chat, agent])  # the agent span ends last, so arrives last
    assert row["model_version"] == "m-2026"


def _row(trace: str, final: str, result: Any, **extra: Any) -> dict[str, Any]:
    return {"prompt": "where is 7?", "trace_id": trace, "final_text": final,
            "steps": [{"tool": "get_order", "arguments": {"order_id": "7"}, "result": result,
                       **extra}], "lineage": {}}


def test_prefixes_merge_only_with_a_shared_call_id_or_conversation() -> None:
    copy, whole = _row("t1", "", None, call_id="c1"), _row("t2", "Lost.", {"s": 1}, call_id="c1")
    assert is_prefix(copy, whole)
    assert not is_prefix(whole, copy)
    other_call = _row("t3", "Lost.", {"s": 1}, call_id="c9")
    assert not is_prefix(copy, other_call)
    runs = [_row("t4", "", None), _row("t5", "Lost.", {"s": 1})]  # no ids: two runs
    assert merge_prefixes(runs) == (runs, 0)
    same = [{**r, "conversation_id": "k"} for r in runs]
    kept, merged = merge_prefixes(same)
    assert merged == 1
    assert [r["trace_id"] for r in kept] == ["t5"]
    assert kept[0]["lineage"]["merged"] == ["t4"]


def _record(span: str, name: str, body: dict[str, Any], at: int,
            trace: str = TRACE) -> dict[str, Any]:
    return {"traceId": trace, "spanId": span, "timeUnixNano": str(at), "eventName": name,
            "body": {"kvlistValue": {"values": [
                {"key": k, "value": {"stringValue": v}} for k, v in body.items()]}}}


def test_otlp_json_logs_join_their_span_offline_and_a_lone_record_is_counted() -> None:
    chat = _span("01" * 8, "chat m", 10, {"gen_ai.operation.name": "chat",
                                          "gen_ai.response.model": "m-1"})
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        _record("01" * 8, "gen_ai.user.message", {"content": "where is 7?"}, 11),
        _record("01" * 8, "gen_ai.choice", {"message": '{"content": "Lost."}'}, 14),
        _record("77" * 8, "gen_ai.user.message", {"content": "never mind"}, 30,
                trace="cd" * 16)]}]}]}
    export = {"resourceSpans": [{"scopeSpans": [{"spans": [chat]}]}]}
    load = read_otel([logs, export])
    alone, row = sorted(load.rows, key=lambda r: r["prompt"])
    assert (row["prompt"], row["final_text"], row["model_version"]) == (
        "where is 7?", "Lost.", "m-1")
    assert (alone["prompt"], alone["steps"]) == ("never mind", [])  # its span never came
    assert (load.counts["log_records"], load.counts["log_records_alone"]) == (3, 1)


def test_console_json_of_the_sdk_is_read(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is missing")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    path = tmp_path / "console.json"
    with path.open("w") as out:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        tracer = provider.get_tracer("t")
        for ask in ("a", "b"):
            with tracer.start_as_current_span("chat m") as span:
                span.set_attribute("gen_ai.input.messages",
                                   json.dumps([{"role": "user", "content": f"where is {ask}"}]))
                span.set_attribute("gen_ai.output.messages",
                                   json.dumps([{"role": "assistant", "content": "here"}]))
        provider.shutdown()
    load = read_otel(path)
    assert sorted(r["prompt"] for r in load.rows) == ["where is a", "where is b"]
    assert load.counts["missing_ids"] == 0
    assert all(len(r["trace_id"]) == 32 for r in load.rows)


def test_trace_report_of_spans_says_why_no_row_and_what_to_turn_on() -> None:
    bare = _span("01" * 8, "chat m", 10, {"gen_ai.operation.name": "chat",
                                          "gen_ai.usage.input_tokens": 3})
    http = _span("02" * 8, "GET /", 10, {"http.method": "GET"}, trace="cd" * 16)
    report = zps.trace_report({"resourceSpans": [{"scopeSpans": [{"spans": [bare, http]}]}]})
    assert report["n_rows"] == 0
    assert report["unbuilt"] == {"not_genai": 1, "without_content": 1}
    assert any("span_only" in w for w in report["warnings"])
    assert "span_only" in zps.format_trace_report(report)
