"""Traces in: any supported trace source normalised to canonical row dicts.

A trace is a plain row dict: ``prompt`` (the ask), ``steps`` (tool calls and later turns),
``final_text``, and an optional 0/1 ``reward``. Exports from other stacks spell these
differently, so :func:`load_traces` also accepts ``tool_trace``/``trace`` for ``steps``,
``final``/``output``/``response`` for ``final_text``, ``score`` for ``reward``, rows that
carry only OpenAI-style ``messages``, and free-form step shapes. Rows with neither an ask nor
steps are dropped; :func:`normalize_traces` says how many, and why.

>>> rows = load_traces([{"prompt": "where is 4412", "trace": [{"tool": "get_order",
...     "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}],
...     "output": "It shipped.", "reward": "0"}, {"note": "nothing"}])
>>> len(rows), rows[0]["final_text"], rows[0]["reward"]
(1, 'It shipped.', 0.0)
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai.errors import RowError
from whileai.rows.jsonl import read_jsonl
from whileai.simulations.ingest.steps import (
    StepCounts,
    canonical_steps,
    content_text,
    split_conversation,
)

__all__ = [
    "TraceLoad",
    "coerce_reward",
    "load_traces",
    "normalize_trace",
    "normalize_traces",
]

_STEP_ALIASES = ("steps", "tool_trace", "trace")
_FINAL_ALIASES = ("final_text", "final", "output", "response", "outputs")
_REWARD_ALIASES = ("reward", "score")
_ASK_ALIASES = ("prompt", "input", "question", "query", "instruction", "ask", "inputs")
# Inside a dict-valued ask or answer (``{"inputs": {"question": ...}}``), the keys looked at.
_ASK_INNER = ("prompt", "input", "question", "query", "text", "content", "messages")
_FINAL_INNER = ("content", "text", "output", "answer", "response", "final_text")
_MAX_PROBLEMS = 5
_TRUE = {"1", "1.0", "true", "pass", "passed", "yes"}
_FALSE = {"0", "0.0", "false", "fail", "failed", "no"}


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceLoad:
    """Canonical rows plus the counts of everything normalisation could not keep as given."""

    rows: tuple[dict[str, Any], ...]
    n_in: int = 0
    dropped: int = 0
    drop_reasons: Mapping[str, int] = field(default_factory=dict)
    skipped_lines: int = 0
    problems: tuple[str, ...] = ()
    rewards_rejected: int = 0
    steps: StepCounts = field(default_factory=StepCounts)

    def counts(self) -> dict[str, Any]:
        """The counts as a plain JSON-able dict."""
        return {
            "n_in": self.n_in,
            "n_rows": len(self.rows),
            "dropped": self.dropped,
            "drop_reasons": dict(self.drop_reasons),
            "skipped_lines": self.skipped_lines,
            "problems": list(self.problems),
            "rewards_rejected": self.rewards_rejected,
            "steps": self.steps.as_dict(),
        }


def coerce_reward(value: Any) -> float | None:
    """Return 0.0 or 1.0 when ``value`` is cleanly a 0/1 label, else None.

    >>> coerce_reward(True), coerce_reward("fail"), coerce_reward(0.5), coerce_reward(None)
    (1.0, 0.0, None, None)
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value) if value in (0, 1) else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return 1.0
        if text in _FALSE:
            return 0.0
    return None


def _first_present(row: Mapping[str, Any], keys: Iterable[str]) -> tuple[str | None, Any]:
    for key in keys:
        if key in row and row[key] is not None:
            return key, row[key]
    return None, None


def _inner(value: Any, keys: Iterable[str]) -> Any:
    """The first usable entry of a dict-valued ask or answer (the value itself otherwise)."""
    if isinstance(value, Mapping):
        return next((value[k] for k in keys if value.get(k) not in (None, "")), None)
    return value


def _final_text(value: Any) -> str:
    return content_text(_inner(value, _FINAL_INNER))


def normalize_trace(row: Any) -> tuple[dict[str, Any] | None, str, StepCounts, bool]:
    """One raw trace -> ``(canonical row or None, drop reason, step counts, reward rejected)``.

    Every key the row carried that is not an alias consumed here is kept as it was.

    >>> normalize_trace({"messages": [{"role": "user", "content": "hi"}]})[0]["prompt"]
    'hi'
    """
    if not isinstance(row, Mapping):
        return None, "not_a_dict", StepCounts(), False
    out = dict(row)
    messages = out.get("messages")
    ask_key, ask = _first_present(out, _ASK_ALIASES)
    ask = _inner(ask, _ASK_INNER)
    if isinstance(ask, list) and messages is None:  # chat list under `prompt` or `input`
        messages, ask = ask, None
        out.pop(str(ask_key))
        out["messages"] = messages
    prompt = ask if isinstance(ask, str) else content_text(ask) if ask is not None else ""
    step_key, raw_steps = _first_present(out, _STEP_ALIASES)
    final_key, final = _first_present(out, _FINAL_ALIASES)
    from_messages: tuple[str, list[dict[str, Any]], str, StepCounts] | None = None
    if isinstance(messages, list) and (not prompt or raw_steps is None):
        from_messages = split_conversation(messages)
    if raw_steps is not None:
        steps, counts = canonical_steps(raw_steps)
    elif from_messages is not None:
        steps, counts = from_messages[1], from_messages[3]
    else:
        steps, counts = [], StepCounts()
    if not prompt and from_messages is not None:
        prompt = from_messages[0]
    final_text = _final_text(final) if final is not None else ""
    if final is None and from_messages is not None and raw_steps is None:
        final_text = from_messages[2]
    for key in (ask_key, step_key, final_key):
        if key is not None and key not in ("prompt", "steps", "final_text"):
            out.pop(key, None)
    if not prompt.strip() and not steps:
        return None, "no_ask_or_steps", counts, False
    out["prompt"], out["steps"], out["final_text"] = prompt, steps, final_text
    reward_key, _ = _first_present(out, _REWARD_ALIASES)
    if reward_key is not None and reward_key != "reward":
        out["reward"] = out.pop(reward_key)
    rejected = False
    if "reward" in out:
        reward = coerce_reward(out["reward"])
        if reward is None:
            rejected = out["reward"] is not None
            raw = out.pop("reward")
            if rejected:
                out["raw_reward"] = raw
        else:
            out["reward"] = reward
    lineage = out.get("lineage")
    if isinstance(lineage, Mapping):
        stages = list(lineage.get("stages") or [])
        out["lineage"] = {**lineage, "stages": [*stages, "load_traces"]}
    else:
        out["lineage"] = {"source": "trace", "stages": ["load_traces"]}
    return out, "", counts, rejected


def read_jsonl_lenient(path: Path) -> tuple[list[Any], int, tuple[str, ...]]:
    """Rows of a JSONL file, how many lines could not be read, and the first few reasons.

    Raises:
        RowError: the file does not exist.
    """
    if not path.is_file():
        raise RowError(f"traces: no such file {str(path)!r}; pass an existing .jsonl path")
    reader = read_jsonl(path, strict=False)
    rows = list(reader)
    return rows, reader.skipped, tuple(reader.problems[:_MAX_PROBLEMS])


def _read_source(source: Any) -> tuple[list[Any], int, tuple[str, ...]]:
    """Rows from a path (JSONL, lenient), a platform dataset (``ds_...`` id, when no file of
    that name exists) or an iterable, plus the count of unreadable lines."""
    if isinstance(source, str) and not Path(source).exists():
        from whileai.platform.resolve import is_dataset_id, resolve_ids

        if is_dataset_id(source):
            return list(resolve_ids(source)), 0, ()
    if isinstance(source, str | os.PathLike):
        return read_jsonl_lenient(Path(source))
    for attr in ("trajectories", "rows"):  # a SimulationData or ScoredData object
        held = getattr(source, attr, None)
        if isinstance(held, list):
            return list(held), 0, ()
    if isinstance(source, Mapping):
        return [source], 0, ()
    if isinstance(source, (bytes, bytearray, memoryview)):
        raise RowError(
            "traces: got bytes; pass the path of a .jsonl file, or the rows as a list of dicts "
            "(e.g. [json.loads(line) for line in data.decode().splitlines()])"
        )
    if isinstance(source, Iterable):
        return list(source), 0, ()
    raise RowError(
        f"traces: expected a JSONL path or an iterable of row dicts, got "
        f"{type(source).__name__}; pass a list of dicts or the path of a .jsonl file"
    )


def normalize_traces(source: Any) -> TraceLoad:
    """Normalise a JSONL path or an iterable of dicts, with counts of what was dropped.

    Raises:
        RowError: ``source`` is neither a path nor an iterable of rows.

    >>> load = normalize_traces([{"prompt": "hi"}, {}, 3])
    >>> load.dropped, dict(load.drop_reasons)
    (2, {'no_ask_or_steps': 1, 'not_a_dict': 1})
    """
    raw, skipped, problems = _read_source(source)
    rows: list[dict[str, Any]] = []
    reasons: Counter[str] = Counter()
    steps = StepCounts()
    rejected = 0
    for item in raw:
        row, reason, counts, bad_reward = normalize_trace(item)
        steps = steps + counts
        rejected += bad_reward
        if row is None:
            reasons[reason] += 1
        else:
            rows.append(row)
    return TraceLoad(
        rows=tuple(rows),
        n_in=len(raw) + skipped,
        dropped=sum(reasons.values()) + skipped,
        drop_reasons=dict(sorted(reasons.items())),
        skipped_lines=skipped,
        problems=problems,
        rewards_rejected=rejected,
        steps=steps,
    )


def load_traces(source: Any) -> list[dict[str, Any]]:
    """Canonical trace rows from a JSONL path, a platform ``ds_...`` id, or dicts.

    ``reward`` is kept only when it is cleanly 0 or 1 (a rejected value moves to ``raw_reward``);
    rows that are not dicts or carry neither an ask nor steps are dropped. For the counts of what
    was dropped use :func:`normalize_traces` or ``trace_report``.

    Raises:
        RowError: ``source`` is neither a path nor an iterable of rows.

    >>> load_traces([{"prompt": "hi", "response": {"content": "hello"}}])[0]["final_text"]
    'hello'
    """
    return list(normalize_traces(source).rows)
