"""What the deployed agent did, counted: tool calls, observed faults, labels, and the flaw rows.

A fault is observed on a tool step when the step says so (``fault``, as simulated rows record it)
or when its result reads as an error (``{"error": "timeout"}``, ``"Error: 403 forbidden"``).
The error text is sorted into the grid's fault vocabulary (``timeout``, ``permission_denied``,
``not_found``, ``malformed``, ``stale``), else it stays a plain ``error`` chip.

>>> rows = [{"prompt": "where is 4412", "steps": [{"tool": "get_order",
...     "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}], "reward": 0}]
>>> mined = mine_traces(rows)
>>> mined["faults"], mined["failing_tools"], mined["n_flaw_rows"]
({'timeout': 1}, ['get_order'], 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from whileai.simulations.ingest.traces import coerce_reward, normalize_traces

__all__ = [
    "as_trace_rows",
    "classify_error",
    "flaw_rows",
    "is_flaw",
    "label_of",
    "mine_traces",
    "opening_share",
    "step_fault",
    "tool_steps",
]

# Error text -> fault chip, first match wins (lower-cased substring tests).
_ERROR_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timeout", ("timeout", "timed out", "deadline exceeded", "504")),
    ("permission_denied", ("denied", "forbidden", "permission", "unauthori", "not allowed", "403",
                           "401")),
    ("not_found", ("not found", "not_found", "no such", "no matching", "does not exist", "404",
                   "missing")),
    ("malformed", ("malformed", "junk", "garbled", "invalid json", "unparseable", "corrupt")),
    ("stale", ("stale", "outdated", "conflict", "409")),
)
_ERROR_PREFIXES = ("error", "exception", "traceback", "failed", "failure")


def classify_error(text: str) -> str:
    """Sort an error message into a fault chip (``"error"`` when nothing more specific fits).

    >>> classify_error("Request timed out"), classify_error("403 Forbidden"), classify_error("boom")
    ('timeout', 'permission_denied', 'error')
    """
    lowered = text.lower()
    for chip, words in _ERROR_WORDS:
        if any(w in lowered for w in words):
            return chip
    return "error"


_FLAG_CHIPS = ("malformed", "stale")  # ``{"stale": true}``-style markers on an ok result


def _error_text(result: Any) -> str | None:
    if isinstance(result, Mapping):
        flagged = next((c for c in _FLAG_CHIPS if result.get(c) is True), None)
        if flagged is not None:
            return flagged
        error = result.get("error")
        if error:
            if isinstance(error, Mapping):
                parts = [str(error.get(k)) for k in ("type", "code", "message") if error.get(k)]
                return " ".join(parts) or "error"
            return str(error) if error is not True else "error"
        status = str(result.get("status", "")).lower()
        if status in {"error", "failed", "failure", "not_found", "timeout", "denied"} or (
            result.get("ok") is False
        ):
            return str(result.get("message") or result.get("detail") or status or "error")
        return None
    if isinstance(result, str):
        stripped = result.strip().lower()
        if stripped.startswith(_ERROR_PREFIXES) or stripped in {"timeout", "denied"}:
            return result
    return None


def step_fault(step: Mapping[str, Any]) -> str | None:
    """The fault chip observed on one tool step, or None when the call went through.

    >>> step_fault({"tool": "t", "fault": "Timeout"}), step_fault({"tool": "t", "result": "ok"})
    ('timeout', None)
    """
    fault = step.get("fault")
    if isinstance(fault, str) and fault.strip():
        return fault.strip().lower()
    text = _error_text(step.get("result"))
    return None if text is None else classify_error(text)


def tool_steps(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The tool-call steps of a row (chat turns and malformed steps left out)."""
    steps = row.get("steps")
    if not isinstance(steps, list):
        return []
    return [s for s in steps if isinstance(s, Mapping) and isinstance(s.get("tool"), str)]


def label_of(row: Mapping[str, Any]) -> tuple[float | None, bool]:
    """``(label, advisory)``: the 0/1 ``reward``, else an advisory ``qwen_reward``, else None."""
    reward = coerce_reward(row.get("reward"))
    if reward is not None:
        return reward, False
    advisory = coerce_reward(row.get("qwen_reward"))
    return advisory, advisory is not None


def is_flaw(row: Mapping[str, Any]) -> bool:
    """True when the row shows an observed fault or carries a 0 label."""
    label, _ = label_of(row)
    return label == 0.0 or any(step_fault(s) for s in tool_steps(row))


def as_trace_rows(source: Any) -> list[dict[str, Any]]:
    """Canonical rows from ``source``: canonical row dicts pass through, anything else loads.

    >>> as_trace_rows([{"prompt": "a", "steps": [], "final_text": ""}])[0]["prompt"]
    'a'
    """
    if isinstance(source, Sequence) and not isinstance(source, str | bytes) and all(
        isinstance(r, Mapping)
        and isinstance(r.get("prompt"), str)
        and isinstance(r.get("steps"), list)
        and isinstance(r.get("final_text"), str)
        for r in source
    ):
        return [dict(r) for r in source]
    return list(normalize_traces(source).rows)


def flaw_rows(rows: Any) -> list[dict[str, Any]]:
    """The rows with an observed fault or a 0 label: the next round's ``traces=``.

    >>> flaw_rows([{"prompt": "a", "steps": [], "final_text": "", "reward": 1},
    ...            {"prompt": "b", "steps": [], "final_text": "", "reward": 0}])[0]["prompt"]
    'b'
    """
    return [r for r in as_trace_rows(rows) if is_flaw(r)]


def _ranked(counter: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def mine_traces(rows: Any) -> dict[str, Any]:
    """Count what the traces show: tool calls, faults per tool, labels, and the flaw rows.

    ``failing_tools`` orders the tools with an observed fault or a call inside a 0-labelled row,
    most failures first; ``flaw_rows`` holds every row with a fault or a 0 label (an advisory
    ``qwen_reward`` counts when no ``reward`` is present, and is counted in ``advisory_labels``).

    >>> mine_traces([{"prompt": "a", "steps": [], "final_text": ""}])["ungraded"]
    1
    """
    data = as_trace_rows(rows)
    calls: Counter[str] = Counter()
    failures: Counter[str] = Counter()  # faults observed on the tool
    failed_in: Counter[str] = Counter()  # 0-labelled rows that called the tool
    faults: Counter[str] = Counter()
    sites: Counter[tuple[str, str]] = Counter()
    labels: Counter[str] = Counter()
    flaws: list[dict[str, Any]] = []
    unanswered = 0
    for row in data:
        label, advisory = label_of(row)
        labels["ungraded" if label is None else "advisory" if advisory else "graded"] += 1
        if label is not None:
            labels["passed" if label == 1.0 else "failed"] += 1
        steps = tool_steps(row)
        row_faults = False
        for step in steps:
            tool = str(step["tool"])
            calls[tool] += 1
            unanswered += "result" not in step or step["result"] is None
            chip = step_fault(step)
            if chip is not None:
                row_faults = True
                faults[chip] += 1
                sites[(tool, chip)] += 1
                failures[tool] += 1
        if label == 0.0:
            failed_in.update({str(s["tool"]) for s in steps})
        if row_faults or label == 0.0:
            flaws.append(row)
    return {
        "n_rows": len(data),
        "graded": labels["graded"],
        "ungraded": labels["ungraded"],
        "advisory_labels": labels["advisory"],
        "passed": labels["passed"],
        "failed": labels["failed"],
        "tool_calls": _ranked(calls),
        "unanswered_calls": unanswered,
        "faults": _ranked(faults),
        "fault_sites": [
            {"tool": t, "fault": f, "count": n}
            for (t, f), n in sorted(sites.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "failing_tools": sorted(
            set(failures) | set(failed_in), key=lambda t: (-failures[t], -failed_in[t], t)
        ),
        "touched_tools": list(_ranked(calls)),
        "n_flaw_rows": len(flaws),
        "flaw_rows": flaws,
    }


def _first_speaker(messages: Iterable[Any]) -> str | None:
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") not in {"system", "developer"}:
            role = message.get("role")
            return str(role) if role is not None else None
    return None


def opening_share(rows: Any) -> float:
    """The share of traces whose conversation opens with the assistant (0.0 for no rows).

    Reads the raw ``messages`` (kept by ``load_traces``); rows without them count as user-opened.

    >>> opening_share([{"messages": [{"role": "assistant", "content": "Hi, how can I help?"},
    ...     {"role": "user", "content": "refund"}]}, {"prompt": "hi"}])
    0.5
    """
    data = [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, Iterable) else []
    if not data:
        return 0.0
    opened = sum(
        1
        for r in data
        if isinstance(r.get("messages"), list) and _first_speaker(r["messages"]) == "assistant"
    )
    return opened / len(data)
