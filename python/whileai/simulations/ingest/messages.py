"""GenAI chat messages as spans carry them, in either semantic-conventions generation.

Current conventions put the chat on ``gen_ai.input.messages`` / ``gen_ai.output.messages``:
messages of ``parts`` (``text``, ``tool_call``, ``tool_call_response``, ...), as a JSON string or a
structure. The older form emits one span event per message (``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``, and before those
``gen_ai.content.prompt`` / ``gen_ai.content.completion``) with OpenAI-style bodies. Both read
into :class:`Message` here.

>>> msgs, _ = read_messages('[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]')
>>> msgs[0].role, msgs[0].parts[0].text
('user', 'hi')
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, NamedTuple

from whileai.rows.depth import loads_limited
from whileai.simulations.ingest.otlp import SpanEvent
from whileai.simulations.ingest.steps import content_text, parse_json_value

__all__ = [
    "INPUT_MESSAGES",
    "OUTPUT_MESSAGES",
    "Message",
    "Part",
    "event_messages",
    "read_messages",
]

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
_LEGACY_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}
Tally = MutableMapping[str, int]  # counts of what could not be read, by kind
_QUIET_PARTS = {"reasoning", "blob", "uri", "file", "server_tool_call", "server_tool_call_response"}


class Part(NamedTuple):
    """One message part: ``text`` (text), ``tool_call`` (id, name, arguments) or
    ``tool_call_response`` (id, response). Immutable; a tuple because the platform's trace
    receiver makes several per span, and a tuple costs a fraction of a frozen dataclass."""

    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    arguments: Any = None
    response: Any = None


class Message(NamedTuple):
    """One chat message: a role and its parts (a tuple, as :class:`Part` is)."""

    role: str
    parts: tuple[Part, ...] = ()


def _openai_parts(msg: Mapping[str, Any], tally: Tally) -> list[Part]:
    """Parts of an OpenAI-style message (``content``, ``tool_calls``, ``tool_call_id``)."""
    parts: list[Part] = []
    role = msg.get("role")
    call_id = msg.get("tool_call_id") or (msg.get("id") if role == "tool" else None)
    if role == "tool" or call_id:
        parts.append(Part(type="tool_call_response", id=str(call_id or ""),
                          response=parse_json_value(msg.get("content"))))
        return parts
    text = content_text(msg.get("content"))
    if text:
        parts.append(Part(type="text", text=text))
    calls = parse_json_value(msg.get("tool_calls")) or []
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(call, Mapping) or not isinstance(fn, Mapping) or not fn.get("name"):
            tally["unknown_parts"] += 1
            continue
        parts.append(Part(type="tool_call", id=str(call.get("id") or ""), name=str(fn["name"]),
                          arguments=fn.get("arguments")))
    return parts


def _part(raw: Any, tally: Tally) -> Part | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("type"), str):
        tally["unknown_parts"] += 1
        return None
    kind = raw["type"]
    if kind == "text":
        return Part(type="text", text=content_text(raw.get("content", raw.get("text"))))
    if kind == "tool_call" and raw.get("name"):
        return Part(type="tool_call", id=str(raw.get("id") or ""), name=str(raw["name"]),
                    arguments=raw.get("arguments"))
    if kind == "tool_call_response":
        return Part(type="tool_call_response", id=str(raw.get("id") or ""),
                    response=parse_json_value(raw.get("response", raw.get("result"))))
    tally["ignored_parts" if kind in _QUIET_PARTS else "unknown_parts"] += 1
    return None


def _message(raw: Any, tally: Tally) -> Message | None:
    if not isinstance(raw, Mapping) or not raw.get("role"):
        tally["unknown_messages"] += 1
        return None
    role = str(raw["role"])
    given = raw.get("parts")
    if isinstance(given, list):
        parts = []
        for item in given:  # a plain loop: a message has a part or two, set-up costs dominate
            part = _part(item, tally)
            if part is not None:
                parts.append(part)
    else:
        parts = _openai_parts(raw, tally)
    return Message(role=role, parts=tuple(parts))


def read_messages(value: Any) -> tuple[list[Message], dict[str, int]]:
    """Messages from an attribute value: a JSON string, a list of messages, or one message.

    Returns the messages and the counts of what could not be read (``bad_json``,
    ``unknown_messages``, ``unknown_parts``, ``ignored_parts`` such as reasoning or images).

    >>> read_messages("not json")[1]
    {'bad_json': 1}
    """
    tally: Tally = defaultdict(int)  # made per call: a C type, where Counter() runs Python
    if isinstance(value, str):
        try:
            value = loads_limited(value, where="messages")
        except ValueError:  # RowError (too deep) is a ValueError too
            return [], {"bad_json": 1}
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        return [], {"unknown_messages": 1}
    out = []
    for item in value:
        message = _message(item, tally)
        if message is not None:
            out.append(message)
    return out, dict(tally)


def _payload(event: SpanEvent) -> dict[str, Any]:
    """An event's message body: its attributes, merged with a JSON body when one is carried."""
    attrs = dict(event.attributes)
    for key in ("body", "event.body", "gen_ai.event.content", "content_json"):
        body = parse_json_value(attrs.pop(key, None))
        if isinstance(body, Mapping):
            attrs.update(body)
    return attrs


def event_messages(
    events: Sequence[SpanEvent],
) -> tuple[list[Message], list[Message], dict[str, int]]:
    """``(input, output, counts)`` messages from the older one-event-per-message form.

    >>> from whileai.simulations.ingest.otlp import SpanEvent
    >>> ins, outs, _ = event_messages([SpanEvent(name="gen_ai.user.message",
    ...     attributes={"content": "hi"}), SpanEvent(name="gen_ai.choice",
    ...     attributes={"message": '{"content": "hello"}'})])
    >>> ins[0].parts[0].text, outs[0].parts[0].text
    ('hi', 'hello')
    """
    tally: Counter[str] = Counter()
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in events:
        attrs = _payload(event)
        if event.name in _LEGACY_ROLES:
            role = _LEGACY_ROLES[event.name]
            body: Any = attrs
            if event.name == "gen_ai.choice":
                body = parse_json_value(attrs.get("message")) or attrs
            if not isinstance(body, Mapping):
                tally["unknown_messages"] += 1
                continue
            msg = _message({**body, "role": body.get("role") or role}, tally)
            if msg is not None:
                (outputs if event.name == "gen_ai.choice" else inputs).append(msg)
            continue
        for key, target in ((INPUT_MESSAGES, inputs), (OUTPUT_MESSAGES, outputs),
                            ("gen_ai.prompt", inputs), ("gen_ai.completion", outputs)):
            if key in attrs:
                msgs, counts = read_messages(attrs[key])
                target.extend(msgs)
                tally.update(counts)
    return inputs, outputs, dict(tally)
