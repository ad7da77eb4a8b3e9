"""Training rows (SFT): scrubbed chats with a per-message ``loss_mask``, in two wire shapes.

``format="openai"`` is the chat-completions wire (``function.arguments`` a JSON string, the ask
beside the chat as ``prompt``); ``format="trl"`` is what TRL's trainers read (``messages`` only,
arguments as dicts, the ask kept as ``prompt_text``, a ``tools`` column of schemas).

>>> rows = [{"prompt": "Where is 4412?", "final_text": "It is late.",
...          "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"}, "result": "late"}]}]
>>> out = training_rows(rows, system_prompt="Be brief.")
>>> [m["role"] for m in out[0]["messages"]], out[0]["loss_mask"]
(['system', 'user', 'assistant', 'tool', 'assistant'], [0, 0, 1, 0, 1])
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, Literal, get_args

from whileai.errors import ConfigError
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.keywords import valid_kwargs
from whileai.rows.outbound import conversation, export_row
from whileai.rows.progress import Progress
from whileai.rows.source import as_rows
from whileai.simulations.export.wire import (
    FORMATS,
    Format,
    check_choice,
    decode_arguments,
    messages_to_trl,
    tool_schemas,
)

__all__ = [
    "CARRIED_KEYS",
    "export_dataset",
    "export_training",
    "format_export_report",
    "training_rows",
]

MaskMode = Literal["all", "final"]
MASK_MODES: tuple[str, ...] = get_args(MaskMode)
CARRIED_KEYS = ("scenario_id", "task_id", "rollout_index", "reward", "calibration")
_MAX_EXAMPLES = 5


def _source_defaults(source: Any, system_prompt: Any, tools: Any) -> tuple[Any, Any]:
    """A run object (``SimulationData``) lends its own system prompt and tools when not given."""
    if system_prompt is None and not isinstance(source, (list, tuple, dict, str, PathLike)):
        system_prompt = getattr(source, "system_prompt", None)
    if tools is None and not isinstance(source, (list, tuple, dict, str, PathLike)):
        tools = getattr(source, "tools", None)
    return system_prompt, tools


def _chat(row: dict[str, Any], system_prompt: str | None) -> list[dict[str, Any]]:
    """The scrubbed row's chat: rebuilt from its steps, else its own ``messages``."""
    old = row.get("messages")
    has_system = isinstance(old, list) and old and isinstance(old[0], Mapping) \
        and old[0].get("role") == "system"
    if system_prompt is None and has_system:
        content = old[0].get("content")  # type: ignore[index]
        system_prompt = content if isinstance(content, str) else None
    if any(k in row for k in ("prompt", "steps", "final_text")):
        return conversation(row, system_prompt=system_prompt)
    messages = [dict(m) for m in old] if isinstance(old, list) else []
    if system_prompt is not None:
        if messages and messages[0].get("role") == "system":
            messages[0] = {"role": "system", "content": system_prompt}
        else:
            messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def _cap_tool_outputs(messages: list[dict[str, Any]], cap: int | None) -> tuple[int, int]:
    """Cut tool messages longer than ``cap`` in place; return ``(messages cut, chars cut)``."""
    if cap is None:
        return 0, 0
    cut = chars = 0
    for message in messages:
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str) and len(content) > cap:
            dropped = len(content) - cap
            message["content"] = content[:cap] + f"[... {dropped} chars of tool output truncated]"
            cut += 1
            chars += dropped
    return cut, chars


def _calls(messages: list[dict[str, Any]]) -> list[Any]:
    return [call.get("function", {}).get("arguments")
            for m in messages for call in (m.get("tool_calls") or []) if isinstance(call, dict)]


def _roundtrip(row: dict[str, Any], messages: list[dict[str, Any]], encoding: str,
               gate: dict[str, Any], index: int) -> None:
    """Check every call's arguments decode back to what the row's step called with."""
    encoded = _calls(messages)
    steps = [s for s in row.get("steps") or [] if isinstance(s, Mapping) and "tool" in s]
    originals = [decode_arguments(s.get("arguments"))[0] for s in steps] if steps \
        else [None] * len(encoded)
    for k, value in enumerate(encoded):
        gate["checked"] += 1
        if encoding == "json_string":
            ok = isinstance(value, str)
            decoded, parsed = decode_arguments(value) if ok else (value, False)
            ok = ok and parsed
        else:
            decoded, ok = value, isinstance(value, dict)
        original = originals[k] if k < len(originals) else None
        if ok and original is not None and decoded != original:
            ok = False
        if not ok:
            gate["invalid"] += 1
            if len(gate["examples"]) < _MAX_EXAMPLES:
                gate["examples"].append({"row": index, "call": k, "arguments": repr(value)[:120]})


def _samples(messages: list[dict[str, Any]], mask_mode: str, unroll: bool) -> list[tuple[
        list[dict[str, Any]], list[int]]]:
    agent = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if not agent:
        return []
    if unroll:
        return [(messages[: k + 1], [int(i == k) for i in range(k + 1)]) for k in agent]
    if mask_mode == "final":
        return [(messages, [int(i == agent[-1]) for i in range(len(messages))])]
    return [(messages, [int(m.get("role") == "assistant") for m in messages])]


def _new_report(fmt: str, mask_mode: str, unroll: bool, cap: int | None) -> dict[str, Any]:
    return {
        "format": fmt, "mask_mode": mask_mode, "unroll": unroll, "max_tool_output_chars": cap,
        "rows_in": 0, "rows_out": 0, "skipped": {"no_user_turn": 0, "no_agent_turn": 0},
        "trained_messages": 0, "masked_messages": 0,
        "truncated_tool_messages": 0, "truncated_chars": 0,
        "tool_call_roundtrip": {"encoding": "json_string" if fmt == "openai" else "dict",
                                "checked": 0, "invalid": 0, "examples": []},
    }


def _build(
    source: Any,
    *,
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    format: Format = "openai",
    mask_mode: MaskMode = "all",
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    line: Progress | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    fmt = check_choice("export_dataset", "format", format, FORMATS)
    masking = check_choice("export_dataset", "mask_mode", mask_mode, MASK_MODES)
    unroll = bool(unroll)
    cap = max_tool_output_chars
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
        raise ConfigError(f"export_dataset: max_tool_output_chars must be an int >= 0 or None, "
                         f"got {cap!r}")
    system_prompt, tools = _source_defaults(source, system_prompt, tools)
    schemas = tool_schemas(tools)
    report = _new_report(fmt, masking, unroll, cap)
    gate = report["tool_call_roundtrip"]
    out: list[dict[str, Any]] = []
    items = as_rows(source)
    for index, raw in enumerate(items if line is None else line.counted(items)):
        report["rows_in"] += 1
        row = export_row(raw)
        messages = _chat(row, system_prompt)
        if not any(m.get("role") == "user" for m in messages):
            report["skipped"]["no_user_turn"] += 1  # nothing asked: not a training example
            continue
        cut, chars = _cap_tool_outputs(messages, cap)
        report["truncated_tool_messages"] += cut
        report["truncated_chars"] += chars
        if fmt == "trl":
            messages, _ = messages_to_trl(messages)
        _roundtrip(row, messages, gate["encoding"], gate, index)
        samples = _samples(messages, masking, unroll)
        if not samples:
            report["skipped"]["no_agent_turn"] += 1
            continue
        carried = {k: copy.deepcopy(row[k]) for k in CARRIED_KEYS if k in row}
        for n, (sample, mask) in enumerate(samples):
            item: dict[str, Any] = {"messages": copy.deepcopy(sample), "loss_mask": mask}
            prompt = row.get("prompt")
            item["prompt_text" if fmt == "trl" else "prompt"] = prompt if isinstance(
                prompt, str) else None
            if schemas:
                item["tools"] = copy.deepcopy(schemas)
            if cut:
                item["truncated_tool_outputs"] = cut
            if unroll:
                item["unroll_index"] = n
            item.update(carried)
            report["trained_messages"] += sum(mask)
            report["masked_messages"] += len(mask) - sum(mask)
            out.append(item)
    report["rows_out"] = len(out)
    return out, report


@valid_kwargs
def training_rows(
    rows: Any,
    *,
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    format: Format = "openai",
    mask_mode: MaskMode = "all",
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
) -> list[dict[str, Any]]:
    """Return the training rows ``export_dataset`` would write, without writing a file.

    Takes the same keywords as :func:`export_dataset`.

    >>> training_rows([{"prompt": "hi", "final_text": "hello"}], format="trl")[0]["prompt_text"]
    'hi'
    """
    return _build(rows, system_prompt=system_prompt, tools=tools, format=format,
                  mask_mode=mask_mode, unroll=unroll,
                  max_tool_output_chars=max_tool_output_chars)[0]


@valid_kwargs
def export_dataset(
    rows: Any,
    output: str | PathLike[str],
    *,
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    format: Format = "openai",
    mask_mode: MaskMode = "all",
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Write scrubbed training rows with ``loss_mask`` to ``output`` (JSONL); return the report.

    Args:
        rows: row dicts, a run (``SimulationData``/``ScoredData``) or a JSONL path.
        output: the JSONL file to write (``.gz`` compresses).
        system_prompt: the system message to open every chat (default: the run's, or the
            row's own leading system message).
        tools: tool schemas to carry in a ``tools`` column (default: the run's).
        format: ``"openai"`` (chat-completions wire) or ``"trl"`` (what TRL's trainers read).
        mask_mode: ``"all"`` trains every agent turn, ``"final"`` only the last one.
        unroll: one sample per agent turn, loss on that turn only.
        max_tool_output_chars: cap each tool message and append a truncation marker.
        progress: rows built, then rows written, on stderr (and a summary); False silences it.

    Raises:
        TypeError: an unknown keyword (the valid ones are listed).
        ConfigError: ``format`` or ``mask_mode`` not one of its values, or a negative cap.

    Returns:
        ``rows_in``, ``rows_out``, ``trained_messages``, ``masked_messages``, truncation counts,
        ``skipped`` and the ``tool_call_roundtrip`` gate; print with ``format_export_report``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "sft.jsonl")
    >>> export_dataset([{"prompt": "hi", "final_text": "hello"}], path)["rows_out"]
    1
    """
    with Progress("export", enabled=progress) as line:
        line.stage("building")
        out, report = _build(rows, system_prompt=system_prompt, tools=tools, format=format,
                             mask_mode=mask_mode, unroll=unroll,
                             max_tool_output_chars=max_tool_output_chars, line=line)
        line.stage("writing")
        write_jsonl(output, line.counted(out))
        line.finish(len(out))
    report["output"] = str(output)
    return report


export_training = export_dataset


def format_export_report(report: Mapping[str, Any]) -> str:
    """A few plain lines: rows in and out, loss mask counts, truncations and the call gate.

    >>> print(format_export_report(_example_report()))  # doctest: +ELLIPSIS
    export (openai, mask all): 1 rows in -> 1 out...
    """
    gate = report["tool_call_roundtrip"]
    skipped = ", ".join(f"{k} {v}" for k, v in report["skipped"].items() if v) or "none"
    lines = [
        f"export ({report['format']}, mask {report['mask_mode']}"
        f"{', unrolled' if report['unroll'] else ''}): {report['rows_in']} rows in -> "
        f"{report['rows_out']} out (skipped: {skipped})",
        f"loss mask: {report['trained_messages']} messages trained, "
        f"{report['masked_messages']} masked",
        f"tool calls round-trip ({gate['encoding']}): {gate['checked']} checked, "
        f"{gate['invalid']} invalid",
    ]
    if report.get("truncated_tool_messages"):
        lines.append(f"tool outputs truncated: {report['truncated_tool_messages']} messages, "
                     f"{report['truncated_chars']} chars cut")
    if report.get("output"):
        lines.append(f"wrote {report['output']}")
    return "\n".join(lines)


def _example_report() -> dict[str, Any]:
    """A tiny report, for the printer's example."""
    return _build([{"prompt": "hi", "final_text": "hello"}])[1]

