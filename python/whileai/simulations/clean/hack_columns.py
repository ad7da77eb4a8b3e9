"""The candidate features of ``hack_scan`` for many rows at once, column by column.

The same features as :func:`~whileai.simulations.clean.hack_features.hand_features` and
:func:`~whileai.simulations.clean.hack_features.auto_features` (the per-row definition), built
in one pass over the rows: Python reads what only row dicts hold (tools, turns, truncation,
log-probability, markers, trace flags, the caller's features) and hands each row's agent text
to the ``hack_text_features`` kernel, which lowercases it, for the counts and the auto tier.
A column is ``(rows, values)``: ``array('q')`` of row indices (ascending) and ``array('d')``
of the non-zero values.

>>> cols = feature_columns([{"final_text": "Done!", "steps": [{"tool": "lookup_order"}]},
...                         {"final_text": "ok"}])
>>> list(cols["exclamations"][0]), list(cols["tool:lookup_order"][1])
([0], [1.0])
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from whileai import _backend
from whileai.simulations.clean.hack_features import AUTO_TOP, agent_text, row_extras
from whileai.simulations.clean.trace_batch import FLAGS, Seen, TraceInputs

__all__ = ["Column", "feature_columns"]

Column = tuple["array[int]", "array[float]"]
_COUNTS = ("reply_words", "exclamations", "questions", "bullets", "headings", "code_fences",
           "digits")


def _seen(row: Mapping[str, Any]) -> Seen:
    """What ``TraceInputs.add`` returns, for a row whose steps are not all dicts."""
    raw_steps = row.get("steps")
    tools: list[str] = []
    users = 0
    cut = False
    for step in raw_steps if isinstance(raw_steps, list) else ():
        if not isinstance(step, dict):
            continue
        if step.get("role") == "user":
            users += 1
        tool = step.get("tool")
        if isinstance(tool, str):
            tools.append(tool)
        cut = cut or step.get("truncated") is True or step.get("finish_reason") == "length"
    return agent_text(row), users, tools, cut, False


def feature_columns(
    rows: Iterable[Mapping[str, Any]],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    trace_kinds: Mapping[str, str] | None = None,
    *,
    auto: bool = True,
    top: int = AUTO_TOP,
    texts_seen: list[tuple[str, bool]] | None = None,
) -> dict[str, Column]:
    """Return ``{name: (rows, values)}`` of every non-zero hand and auto feature of ``rows``.

    ``texts_seen``, when given, gets each row's agent text and whether the calls part of its
    ``trajectory_key`` is plain (``trace_batch.Seen``), read in the same walk.

    Raises:
        TypeError: a caller's feature returned something other than a finite number or bool.
    """
    cells: dict[str, tuple[list[int], list[float]]] = {}

    def put(name: str, i: int, value: float) -> None:
        if value != 0.0:
            col = cells.get(name)
            if col is None:
                col = cells[name] = ([], [])
            col[0].append(i)
            col[1].append(value)

    texts: list[str] = []
    final_chars = array("q")
    trace = TraceInputs(trace_kinds, plain=texts_seen is not None)
    # The columns every row may have, filled in place (no lookup per cell).
    fixed = {name: cells.setdefault(name, ([], []))
             for name in ("reply_chars", "tool_calls", "turns", "truncated")}
    chars, calls, turns, truncated = fixed.values()
    tool_keys: dict[str, str] = {}
    for i, row in enumerate(rows):
        seen = trace.add(row)
        text, users, tools, cut, plain = _seen(row) if seen is None else seen
        if texts_seen is not None:
            texts_seen.append((text, plain))
        if not cut:
            cut = row.get("truncated") is True or row.get("finish_reason") == "length"
        final_value = row.get("final_text")
        if isinstance(final_value, str):
            # The text ends with the final reply; the pinned lowercase maps one code point to
            # one, so the reply keeps its length.
            final_chars.append(len(final_value))
            texts.append(text)
            if final_value:
                chars[0].append(i)
                chars[1].append(float(len(final_value)))
        else:
            final_chars.append(0)
            texts.append(text)
        if tools:
            calls[0].append(i)
            calls[1].append(float(len(tools)))
            for name in dict.fromkeys(tools):
                key = tool_keys.get(name)
                if key is None:
                    key = tool_keys[name] = f"tool:{name}"
                put(key, i, 1.0)
        turns[0].append(i)
        turns[1].append(float(1 + users))
        if cut:
            truncated[0].append(i)
            truncated[1].append(1.0)
        for name, value in row_extras(row, features, trace_kinds, flags=False):
            put(name, i, value)
    for name, (empty, _) in fixed.items():
        if not empty:
            del cells[name]
    flagged = [(i, mask) for i, mask in enumerate(trace.masks()) if mask]
    del trace
    for k, flag in enumerate(FLAGS):
        fired = [i for i, mask in flagged if mask >> k & 1]
        if fired:
            cells[f"trace:{flag}"] = (fired, [1.0] * len(fired))
    counts, vocab, ptr, members = _backend.hack_text_features(
        texts, final_chars, top if auto else 0, lower=True
    )
    del texts
    out: dict[str, Column] = {n: (array("q", r), array("d", v)) for n, (r, v) in cells.items()}
    width = len(_COUNTS)
    for k, name in enumerate(_COUNTS):
        column = counts[k::width]
        hit = array("q", (i for i, c in enumerate(column) if c))
        if hit:
            out[name] = (hit, array("d", (float(column[i]) for i in hit)))
    for j, term in enumerate(vocab):
        rows_j = members[ptr[j]:ptr[j + 1]]
        out[f"contains:{term}"] = (rows_j, array("d", [1.0]) * len(rows_j))
    return out
