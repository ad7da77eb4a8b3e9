"""Parse one chat-completions response body into a :class:`Reply` (pure; no I/O).

Both tool-call forms are read: the native ``message.tool_calls`` list and the text form
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` that many open models emit.
Reasoning blocks (``<think>...</think>``) are stripped from the visible text.

>>> body = {"choices": [{"message": {"content": "<think>hm</think>Done."},
...          "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 3}}
>>> r = parse_reply(body)
>>> r.content, r.input_tokens, r.truncated
('Done.', 9, False)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Reply", "ToolCall", "json_in", "parse_reply", "strip_reasoning"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)
_TEXT_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_JSON_ANY = re.compile(r"[\[{].*[\]}]", re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call the model asked for.

    ``error`` is set (and ``arguments`` is ``{}``) when the arguments were not a JSON object;
    ``raw_arguments`` keeps what the model sent.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str
    error: str | None = None
    form: str = "native"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What one model call returned, with the bookkeeping a row records."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    truncated: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    logprob: float | None = None
    n_tokens: int | None = None
    tokens: tuple[dict[str, Any], ...] | None = None
    model: str | None = None


def strip_reasoning(text: str) -> str:
    """Remove ``<think>...</think>`` blocks (and a dangling unclosed or unopened one).

    >>> strip_reasoning("plan</think>Answer")
    'Answer'
    """
    text = _THINK.sub("", text)
    low = text.lower()
    if "</think>" in low:  # the opening tag was in the prompt (chat templates do this)
        text = text[low.rindex("</think>") + len("</think>") :]
    text = _OPEN_THINK.sub("", text)
    return text.strip()


def json_in(text: str, *, who: str = "model", arrays: bool = False) -> Any:
    """The JSON object (or, with ``arrays``, list) a model wrote, reasoning and prose around it
    ignored; the writer, the judges and the rubric writer all answer this way.

    Raises:
        ValueError: no JSON there, or it does not parse (``who`` names the speaker).

    >>> json_in('<think>hm</think>Sure: {"reward": 1}', who="judge")
    {'reward': 1}
    """
    pattern = _JSON_ANY if arrays else _JSON_OBJECT
    match = pattern.search(strip_reasoning(text))
    if match is None:
        raise ValueError(f"no JSON {'value' if arrays else 'object'} in the {who}'s reply")
    try:
        return json.loads(match.group(0))
    except ValueError as exc:
        raise ValueError(f"{who} reply is not valid JSON ({exc})") from exc


def _arguments(raw: object) -> tuple[dict[str, Any], str, str | None]:
    if isinstance(raw, dict):
        return dict(raw), json.dumps(raw, ensure_ascii=False), None
    text = "" if raw is None else str(raw)
    if text.strip() == "":
        return {}, text, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, text, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(value, dict):
        return {}, text, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, text, None


def _native_calls(message: dict[str, Any], start: int) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for i, item in enumerate(message.get("tool_calls") or []):
        if not isinstance(item, dict):
            continue
        fn_raw = item.get("function")
        fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
        args, raw, err = _arguments(fn.get("arguments"))
        calls.append(ToolCall(
            call_id=str(item.get("id") or f"call_{start + i}"), name=str(fn.get("name") or ""),
            arguments=args, raw_arguments=raw, error=err,
        ))
    return calls


def _text_calls(text: str, start: int) -> tuple[str, list[ToolCall]]:
    calls: list[ToolCall] = []
    for i, match in enumerate(_TEXT_CALL.finditer(text)):
        body = match.group(1)
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as exc:
            calls.append(ToolCall(
                call_id=f"call_{start + i}", name="", arguments={}, raw_arguments=body,
                error=f"tool call is not valid JSON ({exc.msg})", form="text",
            ))
            continue
        if not isinstance(obj, dict):
            obj = {}
        raw_args = obj.get("arguments", obj.get("parameters", {}))
        args, raw, err = _arguments(raw_args)
        calls.append(ToolCall(
            call_id=f"call_{start + i}", name=str(obj.get("name") or ""), arguments=args,
            raw_arguments=raw, error=err, form="text",
        ))
    return _TEXT_CALL.sub("", text), calls


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_Logprobs = tuple[float | None, int | None, tuple[dict[str, Any], ...] | None]


def _logprobs(choice: dict[str, Any]) -> _Logprobs:
    block = choice.get("logprobs")
    if not isinstance(block, dict):
        return None, None, None
    content = block.get("content")
    tokens: tuple[dict[str, Any], ...]
    if isinstance(content, list):
        tokens = tuple(
            {"token": t.get("token"), "logprob": float(t["logprob"])}
            for t in content
            if isinstance(t, dict) and isinstance(t.get("logprob"), (int, float))
        )
    elif isinstance(block.get("token_logprobs"), list):  # legacy completions shape
        tokens = tuple(
            {"token": tok, "logprob": float(lp)}
            for tok, lp in zip(block.get("tokens") or [], block["token_logprobs"], strict=False)
            if isinstance(lp, (int, float))
        )
    else:
        return None, None, None
    total = 0.0
    for t in tokens:
        total += float(t["logprob"])
    return total, len(tokens), tokens


def parse_reply(body: dict[str, Any], *, call_offset: int = 0) -> Reply:
    """Read ``choices[0]`` of a chat-completions body.

    Args:
        body: the decoded JSON response.
        call_offset: numbering start for tool calls that arrive without an id.

    Raises:
        ValueError: the body has no ``choices[0].message`` (the client retries and counts it).
    """
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ValueError("response choice has no message")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    calls = _native_calls(message, call_offset)
    text, text_calls = _text_calls(strip_reasoning(text), call_offset + len(calls))
    calls.extend(text_calls)
    finish = choice.get("finish_reason")
    finish_reason = finish if isinstance(finish, str) else None
    usage_raw = body.get("usage")
    usage: dict[str, Any] = usage_raw if isinstance(usage_raw, dict) else {}
    logprob, n_tokens, tokens = _logprobs(choice)
    model = body.get("model")
    return Reply(
        content=text.strip(),
        tool_calls=tuple(calls),
        finish_reason=finish_reason,
        truncated=finish_reason == "length",
        input_tokens=_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        output_tokens=_int(usage.get("completion_tokens", usage.get("output_tokens"))),
        logprob=logprob,
        n_tokens=n_tokens,
        tokens=tokens,
        model=model if isinstance(model, str) else None,
    )
