"""Preference pairs (DPO) on the wire: whole chats beside the ask, or TRL's prompt/completion split.

``format="openai"`` writes ``prompt`` (the ask) with the full chosen and rejected chats;
``format="trl"`` writes ``prompt`` as the shared messages up to the first agent turn and
``chosen``/``rejected`` as the completions only, with tool-call arguments as dicts.

>>> chosen = {"prompt": "hi", "final_text": "Hello! How can I help?"}
>>> rejected = {"prompt": "hi", "final_text": "What."}
>>> rows, report = preference_rows([{"prompt": "hi", "chosen": chosen, "rejected": rejected}],
...                                format="trl")
>>> rows[0]["prompt"], rows[0]["chosen"]
([{'role': 'user', 'content': 'hi'}], [{'role': 'assistant', 'content': 'Hello! How can I help?'}])
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

from whileai.errors import RowError
from whileai.rows.jsonl import load_rows
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.keywords import valid_kwargs
from whileai.rows.outbound import export_row
from whileai.simulations.export.training import _chat
from whileai.simulations.export.wire import (
    FORMATS,
    Format,
    check_choice,
    messages_to_trl,
    tool_schemas,
)

__all__ = ["export_preference", "format_preference_report", "preference_rows", "split_prompt"]

_CARRIED = ("scenario_id", "chosen_reward", "rejected_reward")


def split_prompt(messages: list[dict[str, Any]]) -> int:
    """Index of the first agent turn: everything before it is the prompt.

    >>> split_prompt([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    1
    """
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            return index
    return len(messages)


def _side(value: Any, system_prompt: str | None) -> list[dict[str, Any]]:
    """A pair side as chat messages: a row is scrubbed and rebuilt; a message list is copied."""
    if isinstance(value, list):
        return [dict(m) for m in export_row({"messages": copy.deepcopy(value)})["messages"]]
    if isinstance(value, Mapping):
        return _chat(export_row(value), system_prompt)
    raise RowError(f"a pair's chosen/rejected must be a row dict or a message list, "
                   f"got {type(value).__name__}")


def _pairs(source: Any) -> list[Any]:
    if isinstance(source, tuple) and len(source) == 2 and isinstance(source[1], dict):
        source = source[0]  # the (pairs, report) that build_preference_pairs returns
    if isinstance(source, Mapping) or not isinstance(source, (list, tuple)):
        return list(load_rows(source))
    return list(source)


def _different_tasks(chosen: Any, rejected: Any) -> bool:
    """Whether two row dicts name different tasks by id (a differing ask is a prompt mismatch)."""
    if not (isinstance(chosen, Mapping) and isinstance(rejected, Mapping)):
        return False
    for key in ("scenario_id", "task_id"):
        a, b = chosen.get(key), rejected.get(key)
        if a is not None and b is not None:
            return bool(a != b)
    return False


def _first_user(messages: list[dict[str, Any]]) -> Any:
    return next((m.get("content") for m in messages if m.get("role") == "user"), None)


@valid_kwargs
def preference_rows(
    pairs: Any,
    *,
    format: Format = "openai",
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(rows, report)`` for ``export_preference`` without writing a file.

    >>> preference_rows([], format="trl")[1]["pairs_out"]
    0
    """
    fmt = check_choice("export_preference", "format", format, FORMATS)
    schemas = tool_schemas(tools)
    report: dict[str, Any] = {
        "format": fmt, "pairs_in": 0, "pairs_out": 0,
        "skipped": {"different_task": 0, "prompt_mismatch": 0, "no_completion": 0},
        "tool_call_roundtrip": {"encoding": "dict" if fmt == "trl" else "json_string",
                                "invalid": 0}}
    out: list[dict[str, Any]] = []
    for index, pair in enumerate(_pairs(pairs)):
        report["pairs_in"] += 1
        if not isinstance(pair, Mapping) or "chosen" not in pair or "rejected" not in pair:
            raise RowError(f"pairs[{index}]: expected {{'chosen', 'rejected', ...}}; build pairs "
                           "with zps.build_preference_pairs(rows)")
        if _different_tasks(pair["chosen"], pair["rejected"]):
            report["skipped"]["different_task"] += 1  # a pair only contrasts one task's answers
            continue
        chosen = _side(pair["chosen"], system_prompt)
        rejected = _side(pair["rejected"], system_prompt)
        if _first_user(chosen) != _first_user(rejected):
            report["skipped"]["prompt_mismatch"] += 1
            continue
        ask = pair.get("prompt")
        if not isinstance(ask, str):
            first = next((m for m in chosen if m.get("role") == "user"), {})
            ask = first.get("content") if isinstance(first.get("content"), str) else None
        item: dict[str, Any]
        if fmt == "openai":
            item = {"prompt": ask, "chosen": chosen, "rejected": rejected}
        else:
            cut_c, cut_r = split_prompt(chosen), split_prompt(rejected)
            if chosen[:cut_c] != rejected[:cut_r]:
                report["skipped"]["prompt_mismatch"] += 1
                continue
            if cut_c == len(chosen) or cut_r == len(rejected):
                report["skipped"]["no_completion"] += 1
                continue
            prompt, _ = messages_to_trl(chosen[:cut_c])
            good, bad_c = messages_to_trl(chosen[cut_c:])
            worse, bad_r = messages_to_trl(rejected[cut_r:])
            report["tool_call_roundtrip"]["invalid"] += bad_c + bad_r
            item = {"prompt": prompt, "chosen": good, "rejected": worse, "prompt_text": ask}
        if schemas:
            item["tools"] = copy.deepcopy(schemas)
        item.update({k: copy.deepcopy(pair[k]) for k in _CARRIED if k in pair})
        out.append(item)
    report["pairs_out"] = len(out)
    return out, report


@valid_kwargs
def export_preference(
    pairs: Any,
    output: str | PathLike[str],
    *,
    format: Format = "openai",
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write preference pairs as JSONL in the OpenAI or TRL shape; return the report.

    Args:
        pairs: ``build_preference_pairs`` output (the list, or its ``(pairs, report)``), or
            already-shaped dicts with ``chosen``/``rejected`` rows or message lists.
        output: the JSONL path.
        format: ``"openai"`` (``prompt`` string, full chats) or ``"trl"`` (``prompt`` messages,
            completions only, what TRL's DPOTrainer reads).
        system_prompt: a system message to open every chat.
        tools: tool schemas for a ``tools`` column.

    Raises:
        TypeError: an unknown keyword (the valid ones are listed).
        ConfigError: ``format`` is not ``"openai"`` or ``"trl"``.
        RowError: a pair without ``chosen`` and ``rejected``.

    >>> import os, tempfile
    >>> pair = {"chosen": {"prompt": "hi", "final_text": "Hello"},
    ...         "rejected": {"prompt": "hi", "final_text": "No"}}
    >>> export_preference([pair], os.path.join(tempfile.mkdtemp(), "dpo.jsonl"))["pairs_out"]
    1
    """
    rows, report = preference_rows(pairs, format=format, system_prompt=system_prompt,
                                   tools=tools)
    write_jsonl(output, rows)
    report["output"] = str(output)
    return report


def format_preference_report(report: Mapping[str, Any]) -> str:
    """One line of counts.

    >>> print(format_preference_report(preference_rows([])[1]))
    preference export (openai): 0 pairs in -> 0 out (skipped: none); 0 invalid tool calls
    """
    skipped = ", ".join(f"{k} {v}" for k, v in report["skipped"].items() if v) or "none"
    return (f"preference export ({report['format']}): {report['pairs_in']} pairs in -> "
            f"{report['pairs_out']} out (skipped: {skipped}); "
            f"{report['tool_call_roundtrip']['invalid']} invalid tool calls")
