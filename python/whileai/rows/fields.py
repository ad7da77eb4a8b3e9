"""Field-by-field checks of a row against schema v1: the engine behind ``schema.row_problems``.

Every known key is optional and may be ``null``; when present with a value it must have the type
below. Unknown keys are allowed and not looked at. Each problem names the field path (for example
``steps[2].call_id``) and says what was expected and what was found.

>>> row_problems({"prompt": "hi", "reward": "high"})
["field `reward`: expected a number or null, got str 'high'"]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["FIELD_KINDS", "SUPPORTED_VERSIONS", "describe", "row_problems"]

SUPPORTED_VERSIONS = ("0", "1")

# Row key -> what its (non-null) value must be. Mirrors schemas/row-v1.json.
FIELD_KINDS: dict[str, str] = {
    "scenario_id": "str",
    "task_id": "str",
    "prompt": "str",
    "scenario_dimensions": "dict",
    "world_state": "dict",
    "faults": "faults",
    "privileged": "dict",
    "rollout_index": "count",
    "steps": "steps",
    "final_text": "str",
    "messages": "messages",
    "seeded": "list_of_str",
    "usage": "usage",
    "logprob": "number",
    "n_tokens": "count",
    "model_version": "str",
    "sampling": "dict",
    "truncated": "bool",
    "finish_reason": "str",
    "reward": "number",
    "reason": "str",
    "judge_name": "str",
    "judge_status": "str",
    "judge_meta": "dict",
    "lineage": "lineage",
    "run_fingerprint": "dict",
    "label_source": "str",
    "gold_reward": "number",
    "markers": "markers",
    "calibration": "calibration",
}

_TASK_KEY_FIELDS = ("scenario_id", "task_id", "prompt")
_STEP_COUNTS = ("input_tokens", "output_tokens", "n_tokens")


def describe(value: Any) -> str:
    """Name a value's type and show a short preview, for error messages.

    >>> describe("high")
    "str 'high'"
    """
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(path: str, value: Any, out: list[str], *, unit: bool = False) -> None:
    if not _is_number(value):
        out.append(f"field `{path}`: expected a number or null, got {describe(value)}")
    elif not math.isfinite(value):
        out.append(f"field `{path}`: {value} is not a finite number (JSON has no NaN/inf)")
    elif unit and not 0.0 <= value <= 1.0:
        out.append(f"field `{path}`: expected a number in [0, 1], got {value}")


def _count(path: str, value: Any, out: list[str]) -> None:
    # JSON (and JSON Schema's "integer") does not tell 3 from 3.0: an integral float counts.
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if not integral or isinstance(value, bool) or value < 0:
        out.append(
            f"field `{path}`: expected a non-negative integer or null, got {describe(value)}"
        )


def _typed(path: str, value: Any, kind: type, label: str, out: list[str]) -> bool:
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return True
    out.append(f"field `{path}`: expected {label} or null, got {describe(value)}")
    return False


def _optional(path: str, mapping: Mapping[str, Any], key: str, check: Callable[..., Any],
              out: list[str]) -> None:
    value = mapping.get(key)
    if value is not None:
        check(f"{path}.{key}", value, out)


def _str(path: str, value: Any, out: list[str]) -> None:
    _typed(path, value, str, "a string", out)


def _check_step(path: str, step: Any, out: list[str]) -> None:
    if not _typed(path, step, dict, "an object (dict)", out):
        return
    if "tool" in step:
        if not isinstance(step["tool"], str) or not step["tool"]:
            out.append(f"field `{path}.tool`: expected a tool name, got {describe(step['tool'])}")
        args = step.get("arguments")
        if args is not None and not isinstance(args, (dict, str)):
            out.append(
                f"field `{path}.arguments`: expected an object or a JSON string, "
                f"got {describe(args)}"
            )
        _optional(path, step, "call_id", _str, out)
        _optional(path, step, "fault", _str, out)
    elif "role" in step:
        _str(f"{path}.role", step["role"], out)
        content = step.get("content")
        if content is not None and not isinstance(content, (str, list)):
            out.append(f"field `{path}.content`: expected a string, got {describe(content)}")
    else:
        out.append(
            f"field `{path}`: a step needs `tool` (a tool call) or `role` (a chat turn); "
            f"it has keys {sorted(step)[:8]}"
        )
        return
    for key in _STEP_COUNTS:
        _optional(path, step, key, _count, out)
    _optional(path, step, "logprob", _number, out)
    _optional(path, step, "truncated", lambda p, v, o: _typed(p, v, bool, "true/false", o), out)


def _check_list(path: str, value: Any, out: list[str], item: Callable[[str, Any, list[str]], None]
                ) -> None:
    if _typed(path, value, list, "a list", out):
        for i, element in enumerate(value):
            item(f"{path}[{i}]", element, out)


def _check_message(path: str, message: Any, out: list[str]) -> None:
    if _typed(path, message, dict, "an object (dict)", out) and not isinstance(
        message.get("role"), str
    ):
        out.append(f"field `{path}.role`: a chat message needs a string role")


def _check_fault(path: str, fault: Any, out: list[str]) -> None:
    if _typed(path, fault, dict, "an object (dict)", out):
        _optional(path, fault, "tool", _str, out)
        _optional(path, fault, "kind", _str, out)
        _optional(path, fault, "call", _count, out)


def _check_usage(path: str, value: Any, out: list[str]) -> None:
    if _typed(path, value, dict, "an object (dict)", out):
        for key in ("input_tokens", "output_tokens"):
            _optional(path, value, key, _count, out)


def _check_lineage(path: str, value: Any, out: list[str]) -> None:
    if _typed(path, value, dict, "an object (dict)", out):
        _optional(path, value, "source", _str, out)
        _optional(path, value, "stages", lambda p, v, o: _typed(p, v, list, "a list", o), out)


def _check_markers(path: str, value: Any, out: list[str]) -> None:
    if not _typed(path, value, dict, "an object (dict) of name -> number", out):
        return
    for name, score in value.items():
        if score is not None:
            _number(f"{path}.{name}", score, out)


def check_calibration(path: str, value: Any, out: list[str]) -> None:
    """Append the problems of one calibration stamp to ``out``."""
    if not _typed(path, value, dict, "an object (dict)", out):
        return
    _optional(path, value, "pass_rate", lambda p, v, o: _number(p, v, o, unit=True), out)
    _optional(path, value, "k", _count, out)
    _optional(path, value, "policy", _str, out)
    _optional(path, value, "mean_kl", _number, out)
    ci95 = value.get("ci95")
    if ci95 is not None:
        if not (isinstance(ci95, (list, tuple)) and len(ci95) == 2):
            out.append(f"field `{path}.ci95`: expected [low, high], got {describe(ci95)}")
        else:
            for i, bound in enumerate(ci95):
                _number(f"{path}.ci95[{i}]", bound, out)


_CHECKS: dict[str, Callable[[str, Any, list[str]], object]] = {
    "str": _str,
    "dict": lambda p, v, o: _typed(p, v, dict, "an object (dict)", o),
    "bool": lambda p, v, o: _typed(p, v, bool, "true/false", o),
    "count": _count,
    "number": _number,
    "list_of_str": lambda p, v, o: _check_list(p, v, o, _str),
    "steps": lambda p, v, o: _check_list(p, v, o, _check_step),
    "messages": lambda p, v, o: _check_list(p, v, o, _check_message),
    "faults": lambda p, v, o: _check_list(p, v, o, _check_fault),
    "usage": _check_usage,
    "lineage": _check_lineage,
    "markers": _check_markers,
    "calibration": check_calibration,
}


def row_problems(row: Any) -> list[str]:
    """Return every way ``row`` breaks schema v1 (an empty list when it follows it).

    >>> row_problems({"prompt": "hi", "steps": [{"tool": "get_order", "call_id": 7}]})
    ['field `steps[0].call_id`: expected a string or null, got int 7']
    """
    if not isinstance(row, dict):
        return [f"a row must be an object (dict), got {describe(row)}"]
    out: list[str] = []
    if "schema_version" in row:
        version = row["schema_version"]
        if version != "1" or not isinstance(version, str):
            out.append(
                f"field `schema_version`: expected the string '1' (or no key for a version 0 "
                f"row), got {describe(version)}; this whileai reads versions "
                f"{list(SUPPORTED_VERSIONS)}: upgrade whileai for newer rows"
            )
    for key, kind in FIELD_KINDS.items():
        value = row.get(key)
        if value is not None:
            _CHECKS[kind](key, value, out)
    if not any(isinstance(row.get(k), str) and row[k] for k in _TASK_KEY_FIELDS):
        out.append(
            "the row has no task key: set `prompt` (or `scenario_id` / `task_id`) to a "
            "non-empty string"
        )
    return out
