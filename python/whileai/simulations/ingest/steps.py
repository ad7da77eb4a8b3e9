"""Steps from other stacks: tool calls, tool results and chat turns turned into row steps.

A canonical tool step is ``{"tool", "arguments", "result", "call_id"}`` (``fault`` and model-call
fields ride along); a chat turn is ``{"role", "content"}``. This module accepts the shapes agent
stacks actually export (OpenAI ``tool_calls`` and ``role: tool`` messages, ``name``/``args``/
``output`` steps, GenAI ``tool_call`` parts) and pairs results with their calls by id. What it
cannot use is counted in the :class:`StepCounts` it returns, never silently lost.

>>> steps, counts = canonical_steps([
...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
...         "function": {"name": "get_order", "arguments": '{"order_id": "4412"}'}}]},
...     {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
... ])
>>> steps[0]["tool"], steps[0]["arguments"], steps[0]["result"]
('get_order', {'order_id': '4412'}, {'status': 'shipped'})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whileai.rows.depth import loads_limited

__all__ = [
    "StepCounts",
    "canonical_steps",
    "content_text",
    "parse_json_value",
    "split_conversation",
]

_NAME_KEYS = ("tool", "tool_name", "name")
_ARG_KEYS = ("arguments", "args", "input", "tool_input", "parameters")
_RESULT_KEYS = ("result", "output", "observation", "tool_result", "response")
_ID_KEYS = ("call_id", "id", "tool_call_id")
_TEXT_PART_TYPES = {"text", "input_text", "output_text"}


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCounts:
    """What step normalisation could not use as given (all counts)."""

    dropped: int = 0
    bad_arguments: int = 0
    unpaired_calls: int = 0
    orphan_results: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts as a plain dict."""
        return {
            "dropped": self.dropped,
            "bad_arguments": self.bad_arguments,
            "unpaired_calls": self.unpaired_calls,
            "orphan_results": self.orphan_results,
        }

    def __add__(self, other: StepCounts) -> StepCounts:
        return StepCounts(**{k: v + getattr(other, k) for k, v in self.as_dict().items()})


def parse_json_value(value: Any) -> Any:
    """Decode a JSON object or array held in a string; leave anything else as it is.

    >>> parse_json_value('{"a": 1}'), parse_json_value("rainy, 57F")
    ({'a': 1}, 'rainy, 57F')
    """
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{" and text:
            try:
                return loads_limited(text, where="value")
            except ValueError:  # RowError (too deep) is a ValueError too
                return value
    return value


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, or the text parts of a part list.

    >>> content_text([{"type": "text", "text": "hi"}, {"type": "text", "content": "there"}])
    'hi\\nthere'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        for key in ("text", "content"):
            if isinstance(content.get(key), str):
                return str(content[key])
        return ""
    if isinstance(content, Sequence):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") in _TEXT_PART_TYPES:
                texts.append(content_text(part))
        return "\n".join(t for t in texts if t)
    return str(content)


def _arguments(raw: Any, tally: Counter[str]) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = loads_limited(raw, where="arguments")
        except ValueError:  # RowError (too deep) is a ValueError too
            tally["bad_arguments"] += 1
            return {"_raw": raw}
        if isinstance(value, dict):
            return value
        raw = value
    tally["bad_arguments"] += 1
    return {"_value": raw}


def _first(item: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if key in item and item[key] is not None:
            return item[key]
    return None


def _tool_call(item: Mapping[str, Any], tally: Counter[str]) -> dict[str, Any] | None:
    """One call in any supported shape -> a canonical tool step (result may be absent)."""
    fn = item.get("function")
    if isinstance(fn, Mapping):  # OpenAI tool call: {"id", "type": "function", "function": {...}}
        name, args, call_id = fn.get("name"), fn.get("arguments"), item.get("id")
        result = _first(item, _RESULT_KEYS)
    else:
        name = fn if isinstance(fn, str) else _first(item, _NAME_KEYS)
        args = _first(item, _ARG_KEYS)
        call_id = _first(item, _ID_KEYS)
        result = _first(item, _RESULT_KEYS)
    if not isinstance(name, str) or not name.strip():
        return None
    step: dict[str, Any] = {
        k: v
        for k, v in item.items()
        if k not in {*_NAME_KEYS, *_ARG_KEYS, *_RESULT_KEYS, *_ID_KEYS, "function", "type"}
    }
    step["tool"] = name.strip()
    step["arguments"] = _arguments(args, tally)
    step["result"] = parse_json_value(result)
    if call_id is not None:
        step["call_id"] = str(call_id)
    return step


def canonical_steps(items: Any) -> tuple[list[dict[str, Any]], StepCounts]:
    """Normalise a list of steps or chat messages (after the ask) into canonical steps.

    Assistant messages with ``tool_calls`` (or ``tool_use`` content blocks) become one tool
    step per call; ``role: tool`` messages (or ``tool_result`` blocks) fill the result of the
    call with the same id, or of the earliest call still waiting when no id is given. Calls that
    never get a result keep ``result: None`` and are counted as ``unpaired_calls``; results with
    no call are counted as ``orphan_results``; items that are neither a tool call nor a chat
    turn are counted as ``dropped``.

    >>> canonical_steps([{"name": "ping", "args": {}, "output": "pong"}, 7])[1].dropped
    1
    """
    tally: Counter[str] = Counter()
    steps: list[dict[str, Any]] = []
    waiting: dict[str, dict[str, Any]] = {}  # call id -> step still without a result
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        return [], StepCounts(dropped=0 if items is None else 1)

    def pending(step: dict[str, Any]) -> None:
        if step["result"] is None:
            key = step.get("call_id") or f"#{len(steps)}"
            waiting[key] = step

    def add_call(call: Any) -> None:
        step = _tool_call(call, tally) if isinstance(call, Mapping) else None
        if step is None:
            tally["dropped"] += 1
            return
        steps.append(step)
        pending(step)

    def answer(call_id: Any, result: Any) -> None:
        key = str(call_id) if call_id is not None else next(iter(waiting), None)
        target = waiting.pop(key, None) if key is not None else None
        if target is None:
            tally["orphan_results"] += 1
        else:
            target["result"] = parse_json_value(
                content_text(result) if isinstance(result, list) else result
            )

    for item in items:
        if not isinstance(item, Mapping):
            tally["dropped"] += 1
            continue
        role = item.get("role")
        if role is not None and not isinstance(role, str):  # a list or dict: no role we know
            tally["dropped"] += 1
            continue
        kind = item.get("type")
        if role == "tool" or (isinstance(kind, str)
                              and kind in {"function_call_output", "tool_call_response"}):
            answer(_first(item, ("tool_call_id", "call_id", "id")),
                   _first(item, ("content", "output", "response", "result")))
            continue
        if role in {"assistant", "user", "system", "developer"} or (
            role is None and "content" in item and not _first(item, _NAME_KEYS)
        ):
            content = item.get("content")
            text = content_text(content)
            if text and role in {"assistant", "user", None}:
                steps.append({"role": role or "assistant", "content": text})
            calls = parse_json_value(item.get("tool_calls")) or []
            for call in calls if isinstance(calls, list) else [calls]:
                add_call(call)
            for block in content if isinstance(content, list) else []:  # content blocks
                kind = block.get("type") if isinstance(block, Mapping) else None
                if kind == "tool_use":
                    add_call({"name": block.get("name"), "arguments": block.get("input"),
                              "id": block.get("id")})
                elif kind == "tool_result":
                    answer(block.get("tool_use_id"), block.get("content"))
            continue
        add_call(item)
    tally["unpaired_calls"] += len(waiting)
    return steps, StepCounts(**tally)


def split_conversation(
    messages: Sequence[Any],
) -> tuple[str, list[dict[str, Any]], str, StepCounts]:
    """OpenAI-style messages -> ``(prompt, steps, final_text, counts)``.

    The first user message is the ask; what follows becomes steps; a closing assistant message
    with text and no tool calls is the final answer. Turns before the ask (a system prompt, an
    assistant opening) are not steps; the raw ``messages`` stay on the row for them.

    >>> split_conversation([{"role": "user", "content": "hi"},
    ...                     {"role": "assistant", "content": "hello"}])[::2]
    ('hi', 'hello')
    """
    start = next(
        (i for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "user"),
        None,
    )
    if start is None:
        steps, counts = canonical_steps(
            [m for m in messages if not (isinstance(m, Mapping) and m.get("role") == "system")]
        )
        return "", steps, _pop_final(steps), counts
    prompt = content_text(messages[start].get("content"))
    steps, counts = canonical_steps(list(messages[start + 1 :]))
    return prompt, steps, _pop_final(steps), counts


def _pop_final(steps: list[dict[str, Any]]) -> str:
    if steps and steps[-1].get("role") == "assistant" and "tool" not in steps[-1]:
        return str(steps.pop()["content"])
    return ""
