"""One row per conversation when each model call came as a trace of its own.

Without a parent span, every call of a tool-using conversation is its own trace, and the row of
an earlier call is a truncated copy of the row of a later one: the same prompt, the same tool
calls under the same call ids, less of the rest. :func:`is_prefix` says when one row is such a
copy of another; :func:`merge_prefixes` keeps only the longest row of each conversation (adding
the usage of the rows it absorbs), and says how many were merged. A shared tool-call id, or
the same ``conversation_id`` on both rows (``gen_ai.conversation.id``, ``session.id``), is
required: two runs of the same prompt with neither are two runs, never merged.

>>> first = {"prompt": "where is 4412", "final_text": "", "usage": {"input_tokens": 3},
...     "trace_id": "t1", "steps": [{"tool": "get_order", "call_id": "c1",
...     "arguments": {"order_id": "4412"}, "result": None}]}
>>> second = {**first, "trace_id": "t2", "final_text": "It shipped.", "usage":
...     {"input_tokens": 5}, "steps": [{**first["steps"][0], "result": {"status": "shipped"}}]}
>>> rows, merged = merge_prefixes([first, second])
>>> merged, rows[0]["trace_id"], rows[0]["usage"], rows[0]["lineage"]["merged"]
(1, 't2', {'input_tokens': 8}, ['t1'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["absorb", "call_ids", "is_prefix", "merge_prefixes"]


def call_ids(row: Mapping[str, Any]) -> frozenset[str]:
    """The tool-call ids of a row's steps."""
    return frozenset(str(s["call_id"]) for s in row.get("steps") or ()
                     if isinstance(s, Mapping) and s.get("call_id"))


def _moves(row: Mapping[str, Any]) -> list[Any]:
    moves: list[Any] = []
    for step in row.get("steps") or ():
        if "tool" in step:
            moves.append(("tool", step["tool"], step.get("call_id"), step.get("arguments"),
                          step.get("result")))
        else:
            moves.append((step.get("role"), step.get("content")))
    if row.get("final_text"):
        moves.append(("assistant", row["final_text"]))
    return moves


def is_prefix(short: Mapping[str, Any], long: Mapping[str, Any]) -> bool:
    """Whether ``short`` is an earlier, truncated copy of the conversation ``long`` holds.

    The same prompt; every tool-call id of ``short`` in ``long``, and at least one, unless both
    name the same conversation (``conversation_id``); each move of
    ``short`` (tool call, turn, final text) the same as ``long``'s at that place, a tool call
    still waiting for its result matching the answered one; and ``short`` shorter or missing a
    result.

    >>> row = {"prompt": "p", "steps": [{"tool": "t", "call_id": "c", "arguments": {},
    ...     "result": None}]}
    >>> is_prefix(row, {**row, "final_text": "done"}), is_prefix(row, row)
    (True, False)
    """
    if short.get("prompt") != long.get("prompt"):
        return False
    ids = call_ids(short)
    same = bool(short.get("conversation_id")) and (
        short.get("conversation_id") == long.get("conversation_id"))
    if not ids <= call_ids(long) or not (ids or same):
        return False
    mine, theirs = _moves(short), _moves(long)
    if len(mine) > len(theirs):
        return False
    waiting = False
    for a, b in zip(mine, theirs, strict=False):
        if a[0] == "tool" and b[0] == "tool":
            if a[:4] != b[:4] or (a[4] is not None and a[4] != b[4]):
                return False
            waiting = waiting or (a[4] is None and b[4] is not None)
        elif a != b:
            return False
    return len(mine) < len(theirs) or waiting


def absorb(long: Mapping[str, Any], short: Mapping[str, Any]) -> dict[str, Any]:
    """``long`` with the usage of ``short`` added and ``short``'s trace named in its lineage."""
    out = dict(long)
    usage = dict(out.get("usage") or {})
    for key, value in (short.get("usage") or {}).items():
        if isinstance(value, int):
            usage[key] = usage.get(key, 0) + value
    if usage:
        out["usage"] = usage
    lineage = dict(out.get("lineage") or {})
    lineage["merged"] = sorted({*lineage.get("merged", ()), *short.get("lineage", {}).get(
        "merged", ()), str(short.get("trace_id") or "")} - {""})
    out["lineage"] = lineage
    return out


def merge_prefixes(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows without those that are a prefix of another (their usage added to it), in the
    order given, and how many were merged away."""
    by_prompt: dict[Any, list[int]] = {}
    for i, row in enumerate(rows):
        if call_ids(row) or row.get("conversation_id"):
            by_prompt.setdefault(row.get("prompt"), []).append(i)
    into: dict[int, int] = {}
    for group in by_prompt.values():
        if len(group) < 2:
            continue
        for i in group:
            longer = [j for j in group if j != i and is_prefix(rows[i], rows[j])]
            if longer:  # the longest of them holds the whole conversation
                into[i] = max(longer, key=lambda j: (len(_moves(rows[j])), j))
    out = {i: row for i, row in enumerate(rows) if i not in into}
    for i, j in into.items():
        while j in into:
            j = into[j]
        out[j] = absorb(out[j], rows[i])
    return [out[i] for i in sorted(out)], len(into)
