"""OpenTelemetry GenAI spans to trace rows: one row per conversation, ready for ``traces=``.

Spans of other conventions (OpenInference, OpenLLMetry's indexed ``gen_ai.prompt.N``) are read
as GenAI spans (``ingest.conventions``); log records (``ingest.logs``) join the span they were
emitted in. Spans group by ``gen_ai.conversation.id`` (OpenInference's ``session.id``; a span
without one joins the conversation of its trace), else by trace id; a row that is a truncated
copy of another (each call its own trace, no parent span) is merged into it
(``ingest.joins``). In time order, the first user message becomes ``prompt``; tool calls
(``execute_tool`` spans with ``gen_ai.tool.*`` attributes, and ``tool_call`` /
``tool_call_response`` message parts, merged by call id) become tool steps; later user turns
become user steps; the last assistant text becomes ``final_text``. ``gen_ai.usage.*`` is summed
into ``usage`` and ``reward`` is read from the ``reward_keys`` attributes.

>>> spans = [
...     {"traceId": "t1", "spanId": "a", "name": "chat m", "startTimeUnixNano": "1",
...      "endTimeUnixNano": "2", "attributes": {"gen_ai.input.messages":
...      '[{"role": "user", "parts": [{"type": "text", "content": "where is 4412"}]}]'}},
...     {"traceId": "t1", "spanId": "b", "name": "execute_tool get_order",
...      "startTimeUnixNano": "3", "attributes": {"gen_ai.tool.name": "get_order",
...      "gen_ai.tool.call.arguments": '{"order_id": "4412"}',
...      "gen_ai.tool.call.result": '{"error": "timeout"}', "whileai.reward": 0}}]
>>> row = rows_from_otel(spans)[0]
>>> row["prompt"], row["steps"][0]["result"], row["reward"]
('where is 4412', {'error': 'timeout'}, 0.0)
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai.rows.outbound import conversation
from whileai.simulations.ingest.joins import merge_prefixes
from whileai.simulations.ingest.logs import LOG_RECORD, attach_logs, with_record_spans
from whileai.simulations.ingest.messages import (
    INPUT_MESSAGES,
    OUTPUT_MESSAGES,
    Message,
    Part,
    event_messages,
    read_messages,
)
from whileai.simulations.ingest.otlp import Span, decode_spans
from whileai.simulations.ingest.otlp_files import read_export
from whileai.simulations.ingest.span_facts import (
    TOOL_NAME,
    USAGE_KEYS,
    is_agent_span,
    is_tool_span,
    model_of,
    reward_of,
    usage_of,
)
from whileai.simulations.ingest.steps import parse_json_value

__all__ = ["COUNT_KEYS", "REWARD_KEYS", "SCENARIO_KEYS", "OtelLoad", "is_genai",
           "is_otel_source", "read_otel", "rows_from_otel"]

REWARD_KEYS: tuple[str, ...] = ("whileai.reward",)
# Where a span says which situation (prompt group) its run belongs to: runs of one scenario are
# grouped together by pass@k and by the platform's cuts.
SCENARIO_KEYS: tuple[str, ...] = ("whileai.scenario_id", "zeroproof.scenario_id")
CONVERSATION_ID = "gen_ai.conversation.id"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
# Every count read_otel reports (zero when nothing of the kind happened).
COUNT_KEYS = (
    "spans_in", "not_a_span", "missing_ids", "missing_times", "unknown_values", "skipped_lines",
    "bad_json", "unknown_messages", "unknown_parts", "ignored_parts", "bad_arguments",
    "orphan_results", "tool_spans_without_name", "tool_calls_without_result", "rewards_rejected",
    "empty_conversations", "conversations", "rows", "log_records", "log_records_alone",
    "without_content", "not_genai", "merged",
)



@dataclass(frozen=True, slots=True, kw_only=True)
class OtelLoad:
    """Rows built from spans plus the counts of what could not be used as given."""

    rows: tuple[dict[str, Any], ...]
    counts: Mapping[str, int] = field(default_factory=dict)


def is_genai(spans: Sequence[Span]) -> bool:
    """Whether a span carries a GenAI attribute (another convention's read as one) or is a log
    record of the chat."""
    return any(k.startswith("gen_ai.") or k == LOG_RECORD for s in spans for k in s.attributes)


def _span_messages(span: Span, tally: Counter[str]) -> tuple[list[Message], list[Message]]:
    inputs: list[Message] = []
    outputs: list[Message] = []
    if span.events:
        inputs, outputs, counts = event_messages(span.events)
        tally.update(counts)
    for key, target in ((INPUT_MESSAGES, inputs), (OUTPUT_MESSAGES, outputs),
                        ("gen_ai.prompt", inputs), ("gen_ai.completion", outputs)):
        value = span.attributes.get(key)
        if value is None:
            continue
        if key.endswith(("prompt", "completion")) and isinstance(value, str) and (
            parse_json_value(value) == value
        ):  # the oldest form: a bare prompt or completion string
            role = "user" if key == "gen_ai.prompt" else "assistant"
            target.append(Message(role=role, parts=(Part(type="text", text=value),)))
            continue
        msgs, counts = read_messages(value)
        target.extend(msgs)
        if counts:
            tally.update(counts)
    return inputs, outputs


@dataclass(slots=True)
class _Transcript:
    """Mutable scratch state while one conversation is rebuilt (local to ``_build``)."""

    prompt: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: list[str] = field(default_factory=list)
    said: set[str] = field(default_factory=set)
    opening: list[str] = field(default_factory=list)  # assistant text before the first ask

    def user(self, text: str) -> None:
        if self.prompt is None:
            self.prompt = text
        else:
            self.steps.append({"role": "user", "content": text})
        self.users.append(text)

    def assistant(self, text: str) -> None:
        if text and text not in self.said:
            self.said.add(text)
            if self.prompt is None:
                self.opening.append(text)
            else:
                self.steps.append({"role": "assistant", "content": text})

    def call(self, name: str, call_id: str, arguments: Any) -> dict[str, Any]:
        step = self.by_id.get(call_id) if call_id else None
        if step is None:
            step = {"tool": name, "arguments": arguments, "result": None}
            if call_id:
                step["call_id"] = call_id
                self.by_id[call_id] = step
            self.steps.append(step)
        elif not step["arguments"] and arguments:
            step["arguments"] = arguments
        return step

    def respond(self, call_id: str, response: Any, tally: Counter[str]) -> None:
        step = self.by_id.get(call_id) if call_id else next(
            (s for s in self.steps if "tool" in s and s["result"] is None), None
        )
        if step is None:
            tally["orphan_results"] += 1
        elif step["result"] is None:
            step["result"] = response

    def read(self, messages: Sequence[Message], tally: Counter[str], *, output: bool) -> None:
        if not messages:
            return
        users = [_text(m) for m in messages if m.role == "user"]
        history = bool(self.users) and users[: len(self.users)] == self.users
        seen_users = len(self.users) if history else 0
        for message in messages:
            if message.role == "user":
                text = _text(message)
                if seen_users:
                    seen_users -= 1
                elif text and (history or text not in self.users):
                    self.user(text)
                continue
            for part in message.parts:
                if part.type == "tool_call":
                    self.call(part.name, part.id, _arguments(part.arguments, tally))
                elif part.type == "tool_call_response":
                    self.respond(part.id, part.response, tally)
            if message.role == "assistant" and (output or _text(message) not in self.said):
                self.assistant(_text(message))


def _text(message: Message) -> str:
    return "\n".join(p.text for p in message.parts if p.type == "text" and p.text)


def _arguments(raw: Any, tally: Counter[str]) -> dict[str, Any]:
    value = parse_json_value(raw) if raw not in (None, "") else {}
    if isinstance(value, dict):
        return value
    tally["bad_arguments"] += 1
    return {"_raw": raw}


def _tool_span(span: Span, state: _Transcript, tally: Counter[str]) -> None:
    attrs = span.attributes
    name = attrs.get(TOOL_NAME) or span.name.removeprefix("execute_tool").strip()
    if not name:
        tally["tool_spans_without_name"] += 1
        return
    raw_args = attrs.get(TOOL_CALL_ARGUMENTS)
    step = state.call(str(name), str(attrs.get(TOOL_CALL_ID) or ""),
                      _arguments(raw_args, tally) if raw_args is not None else {})
    if TOOL_CALL_RESULT in attrs:
        step["result"] = parse_json_value(attrs[TOOL_CALL_RESULT])
    if span.error and step["result"] is None:
        reason = attrs.get("error.type") or span.status_message or "error"
        step["result"] = {"error": str(reason)}


def _ordered(spans: Sequence[Span]) -> list[tuple[int, int, int, str, Span]]:
    """Span moments in time order: inputs at the start, tool spans, outputs at the end."""
    moments: list[tuple[int, int, int, str, Span]] = []
    clock = 0
    for span in sorted(spans, key=lambda s: s.index):
        start = span.start if span.start is not None else clock
        clock = start
        end = span.end if span.end is not None and span.end >= start else start
        if is_tool_span(span):
            moments.append((start, span.index, 1, "tool", span))
        else:
            moments.append((start, span.index, 0, "in", span))
            moments.append((end, span.index, 2, "out", span))
    moments.sort(key=lambda m: m[:3])
    return moments


def _build(key: str, spans: Sequence[Span], reward_keys: Sequence[str],
           tally: Counter[str]) -> dict[str, Any] | None:
    state = _Transcript()
    cache: dict[int, tuple[list[Message], list[Message]]] = {}
    for _, _, _, kind, span in _ordered(spans):
        if kind == "tool":
            _tool_span(span, state, tally)
            continue
        if span.index not in cache:
            cache[span.index] = _span_messages(span, tally)
        inputs, outputs = cache[span.index]
        state.read(inputs if kind == "in" else outputs, tally, output=kind == "out")
    steps = state.steps
    final = ""
    if steps and steps[-1].get("role") == "assistant":
        final = str(steps.pop()["content"])
    tally["tool_calls_without_result"] += sum(
        1 for s in steps if "tool" in s and s["result"] is None
    )
    if not state.prompt and not steps:
        tally["empty_conversations"] += 1
        return None
    row: dict[str, Any] = {"schema_version": "1", "prompt": state.prompt or "",
                           "steps": steps, "final_text": final}
    ids = sorted({s.trace_id for s in spans if s.trace_id})
    conversation_id = next((s.attributes[CONVERSATION_ID] for s in spans
                            if s.attributes.get(CONVERSATION_ID)), None)
    if state.opening:  # the conversation opened with the assistant: keep it for opening_share
        opening = [{"role": "assistant", "content": t} for t in state.opening]
        row["messages"] = opening + conversation(row)
    row["trace_id"] = ids[0] if ids else ""
    if conversation_id is not None:
        row["conversation_id"] = str(conversation_id)
    scenario = next((s.attributes[k] for s in spans for k in SCENARIO_KEYS
                     if s.attributes.get(k)), None)
    if scenario is not None:
        row["scenario_id"] = str(scenario)
    if any(not USAGE_KEYS.isdisjoint(s.attributes) for s in spans):
        usage = usage_of([s for s in spans if not is_agent_span(s)]) or usage_of(spans)
        if usage:
            row["usage"] = usage
    model = model_of(spans)
    if model is not None:
        row["model_version"] = model
    reward = reward_of(spans, reward_keys, tally)
    if reward is not None:
        row["reward"] = reward
    row["lineage"] = {"source": "otel", "stages": ["rows_from_otel"], "group": key}
    return row


_OTEL_MARKS = (b'"resourceSpans"', b'"resourceLogs"', b'"resource_spans"', b'"trace_id": "0x')


def is_otel_source(source: Any) -> bool:
    """Whether ``source`` holds spans rather than rows: an OTLP/JSON export (a dict, or a file
    whose first 64 KiB name ``resourceSpans`` / ``resourceLogs``) or the SDK's console JSON.

    >>> is_otel_source({"resourceSpans": []}), is_otel_source([{"prompt": "hi"}])
    (True, False)
    """
    if isinstance(source, Mapping):
        return any(k in source for k in ("resourceSpans", "resourceLogs", "resource_spans"))
    if isinstance(source, str | os.PathLike) and Path(source).is_file():
        with open(source, "rb") as handle:
            head = handle.read(65536)
        return any(mark in head for mark in _OTEL_MARKS)
    return False


def read_otel(source: Any, reward_keys: Sequence[str] = REWARD_KEYS, *,
              merge: bool = True) -> OtelLoad:
    """Like :func:`rows_from_otel`, also returning the counts of what was skipped or odd.

    ``merge=False`` keeps the rows that are truncated copies of another (``ingest.joins``):
    for a caller that merges them itself, as the platform's receiver does across requests.

    Raises:
        RowError: ``source`` is not a file, an export dict or an iterable of spans.
    """
    tally: Counter[str] = Counter()
    if isinstance(source, str | os.PathLike):
        docs, skipped = read_export(Path(source))
        tally["skipped_lines"] += skipped
        source = docs
    spans, decoded = decode_spans(with_record_spans(source))
    tally.update({k: v for k, v in decoded.as_dict().items() if v})
    spans, joined, alone = attach_logs(spans)
    if joined or alone:
        tally.update(log_records=joined + alone, log_records_alone=alone)
    by_trace: dict[str, str] = {}
    for span in spans:
        conv = span.attributes.get(CONVERSATION_ID)
        if conv and span.trace_id:
            by_trace.setdefault(span.trace_id, str(conv))
    groups: dict[str, list[Span]] = {}
    for span in spans:
        conv = span.attributes.get(CONVERSATION_ID) or by_trace.get(span.trace_id)
        groups.setdefault(str(conv) if conv else span.trace_id, []).append(span)
    rows = []
    for key, group in groups.items():
        row = _build(key, group, tuple(reward_keys), tally)
        if row is not None:
            rows.append(row)
        else:
            tally["without_content" if is_genai(group) else "not_genai"] += 1
    if merge:
        rows, tally["merged"] = merge_prefixes(rows)
        if tally["merged"]:  # a merged copy's unanswered call is answered in the row it joined
            tally["tool_calls_without_result"] = sum(
                1 for row in rows for s in row["steps"] if "tool" in s and s["result"] is None)
    tally["conversations"] = len(groups)
    tally["rows"] = len(rows)
    counts = {**dict.fromkeys(COUNT_KEYS, 0), **tally}
    return OtelLoad(rows=tuple(rows), counts=dict(sorted(counts.items())))


def rows_from_otel(source: Any, reward_keys: Sequence[str] = REWARD_KEYS) -> list[dict[str, Any]]:
    """Conversations from an OTLP/JSON export (file, dict) or an iterable of spans, as rows.

    ``reward_keys`` names the span (or span event) attributes a 0..1 reward is read from (the
    last one set, in time order, wins; a value outside 0..1 is not used and is counted), for
    example ``("gen_ai.evaluation.score.value",)`` for evaluation events. For the counts of
    spans that could not be used, call :func:`read_otel`.

    Raises:
        RowError: ``source`` is not a file, an export dict or an iterable of spans.
    """
    if isinstance(reward_keys, str):
        reward_keys = (reward_keys,)
    return list(read_otel(source, reward_keys).rows)
