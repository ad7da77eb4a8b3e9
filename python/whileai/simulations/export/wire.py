"""Wire helpers shared by the exporters: tool schemas, argument encodings, option checks.

>>> tool_schemas([{"name": "ping", "parameters": {"type": "object"}}])[0]["type"]
'function'
>>> decode_arguments('{"a": 1}')
({'a': 1}, True)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Literal, get_args

from whileai.errors import ConfigError, SpecError
from whileai.simulations.agent.spec import normalize_tools

__all__ = [
    "FORMATS",
    "Format",
    "check_choice",
    "decode_arguments",
    "messages_to_trl",
    "tool_schemas",
]

# the chat encodings the exporters write: OpenAI's wire, or what TRL's trainers read
Format = Literal["openai", "trl"]
FORMATS: tuple[str, ...] = get_args(Format)


def check_choice(where: str, name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` when it is one of ``choices``, else raise ``ConfigError`` listing them.

    >>> check_choice("f", "format", "trl", FORMATS)
    'trl'
    """
    if value not in choices:
        raise ConfigError(
            f"{where}: {name}={value!r} is not supported; "
            f"use one of {', '.join(map(repr, choices))}"
        )
    return str(value)


def tool_schemas(tools: object) -> list[dict[str, Any]]:
    """OpenAI/HF function schemas for ``tools``: dicts kept verbatim (wrapped when bare).

    A ``{"type": "function", "function": {...}}`` dict is copied as it is; a bare
    ``{"name", "parameters"}`` dict is wrapped; anything else (a callable, a spec) goes through
    the package's tool normaliser.

    >>> tool_schemas(None)
    []
    """
    if tools is None:
        return []
    if isinstance(tools, (Mapping, str)) or not hasattr(tools, "__iter__"):
        raise SpecError(
            f"tools: expected a list of tool schemas, got {type(tools).__name__}; pass the same "
            "list you gave simulate(tools=...)"
        )
    out: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
            out.append(copy.deepcopy(dict(tool)))
        elif isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            out.append({"type": "function", "function": copy.deepcopy(dict(tool))})
        else:
            try:
                out.append(normalize_tools([tool])[0].to_openai())
            except (SpecError, ValueError, TypeError, IndexError) as exc:
                raise SpecError(
                    f"tools[{index}]: cannot read a tool schema from {type(tool).__name__} "
                    f"({exc}); pass an OpenAI function schema dict"
                ) from exc
    return out


def decode_arguments(value: object) -> tuple[Any, bool]:
    """``(arguments, ok)``: a JSON text parsed to an object, a dict copied; ``ok`` False if not.

    >>> decode_arguments("not json")
    ('not json', False)
    """
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value)), True
    if value is None:
        return {}, True
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value.strip() else {}
        except ValueError:
            return value, False
        return parsed, isinstance(parsed, dict)
    return value, False


def messages_to_trl(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Chat messages with every ``function.arguments`` as a dict; returns ``(messages, bad)``.

    ``bad`` counts arguments that were not a JSON object; those keep their original text so
    nothing is lost, and the caller reports them.

    >>> msgs, bad = messages_to_trl([{"role": "assistant", "content": None, "tool_calls": [
    ...     {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}]}])
    >>> msgs[0]["tool_calls"][0]["function"]["arguments"], bad
    ({}, 0)
    """
    out: list[dict[str, Any]] = []
    bad = 0
    for message in messages:
        copied = copy.deepcopy(message)
        for call in copied.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                decoded, ok = decode_arguments(function.get("arguments"))
                bad += not ok
                function["arguments"] = decoded
        out.append(copied)
    return out, bad
