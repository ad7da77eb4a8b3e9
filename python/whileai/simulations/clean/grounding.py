"""Argument grounding: did every tool argument come from the conversation, or was it invented?

A string argument is grounded when it appears (case-insensitively, or as the same run of tokens)
in the prompt, a user or system turn, or the result of an earlier tool call. ``ignore_keys``
skips free-text arguments (a message body); ``allow`` lists values that need no source (enums,
defaults). ``mark_grounding`` stamps ``markers["argument_grounding"]``: 1.0 when every argument
is grounded (a row with no calls counts as grounded), else 0.0.

>>> row = {"prompt": "Where is order 4412?", "steps": [
...     {"tool": "get_order", "arguments": {"order_id": "4412"}, "result": {"item": "kettle"}},
...     {"tool": "refund", "arguments": {"order_id": "9999", "item": "kettle"}}]}
>>> ungrounded_arguments(row)
[{'step': 1, 'tool': 'refund', 'key': 'order_id', 'value': '9999'}]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whileai import _backend
from whileai.rows.outbound import json_text
from whileai.rows.source import as_rows

__all__ = ["format_grounding_report", "grounding_report", "mark_grounding", "ungrounded_arguments"]


def _strings(value: Any, path: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


def _tokens_line(text: str) -> str:
    """The text's tokens, space-joined and space-padded, for whole-token containment tests."""
    return " " + " ".join(_backend.tokenize(text)) + " "


def ungrounded_arguments(
    row: dict[str, Any], *, ignore_keys: Iterable[str] = (), allow: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """The string arguments of the row's tool calls that no earlier text contains."""
    skip, allowed = set(ignore_keys), {a.lower() for a in allow}
    texts = [row.get("prompt") or "", row.get("system_prompt") or ""]
    for msg in row.get("messages") or []:
        if isinstance(msg, dict) and msg.get("role") in ("system", "user"):
            content = msg.get("content")
            if isinstance(content, str):
                texts.append(content)
    out = []
    for i, step in enumerate(row.get("steps") or []):
        if not isinstance(step, dict):
            continue
        if step.get("role") == "user" and isinstance(step.get("content"), str):
            texts.append(step["content"])
        if "tool" not in step:
            continue
        corpus = "\n".join(t for t in texts if isinstance(t, str)).lower()
        corpus_tokens = ""  # tokenized only when a value is not a plain substring
        args = step.get("arguments")
        for key, value in _strings(args if isinstance(args, dict) else {}):
            top = key.split(".")[0].split("[")[0]
            low = value.lower()
            if not value.strip() or top in skip or key in skip or low in allowed or low in corpus:
                continue
            corpus_tokens = corpus_tokens or _tokens_line(corpus)
            tokens = _tokens_line(value)
            if tokens == "  " or tokens not in corpus_tokens:
                out.append({"step": i, "tool": step.get("tool"), "key": key, "value": value})
        if "result" in step:
            texts.append(json_text(step["result"]))
    return out


def mark_grounding(
    rows: Any, *, ignore_keys: Iterable[str] = (), allow: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Return copies of the rows with ``markers["argument_grounding"]`` stamped (1.0 = grounded)."""
    keys, allowed = tuple(ignore_keys), tuple(allow)
    out = []
    for row in as_rows(rows):
        bad = ungrounded_arguments(row, ignore_keys=keys, allow=allowed)
        markers = {**(row.get("markers") or {}), "argument_grounding": 0.0 if bad else 1.0}
        out.append({**row, "markers": markers})
    return out


def grounding_report(
    rows: Any, *, ignore_keys: Iterable[str] = (), allow: Iterable[str] = ()
) -> dict[str, Any]:
    """Grounded rate, and the invented values grouped by ``tool.key``.

    >>> rows = [{"prompt": "hi", "steps": [{"tool": "t", "arguments": {"id": "7"}}]}]
    >>> grounding_report(rows)["grounded_rate"]
    0.0
    """
    keys, allowed = tuple(ignore_keys), tuple(allow)
    items = as_rows(rows)
    by_arg: dict[str, list[str]] = {}
    grounded = with_calls = 0
    examples: list[dict[str, Any]] = []
    for i, row in enumerate(items):
        bad = ungrounded_arguments(row, ignore_keys=keys, allow=allowed)
        if any(isinstance(s, dict) and "tool" in s for s in row.get("steps") or []):
            with_calls += 1
        if not bad:
            grounded += 1
            continue
        for b in bad:
            by_arg.setdefault(f"{b['tool']}.{b['key']}", []).append(b["value"])
        if len(examples) < 5:
            examples.append({"index": i, "scenario_id": row.get("scenario_id"), "invented": bad})
    return {
        "rows": len(items),
        "rows_with_calls": with_calls,
        "grounded": grounded,
        "grounded_rate": round(grounded / len(items), 4) if items else None,
        "invented": {k: {"count": len(v), "values": sorted(set(v))[:10]}
                     for k, v in sorted(by_arg.items())},
        "examples": examples,
        "ignore_keys": list(keys),
        "allow": list(allowed),
    }


def format_grounding_report(report: dict[str, Any]) -> str:
    """One line of totals, then one line per tool argument with invented values."""
    rate = report["grounded_rate"]
    lines = [f"grounding: {report['grounded']} of {report['rows']} rows grounded "
             f"({'n/a' if rate is None else f'{100 * rate:.0f}%'})"]
    lines.extend(f"  {k}: {v['count']} invented, e.g. {v['values'][:3]}"
                 for k, v in report["invented"].items())
    return "\n".join(lines)
