"""The candidate features of ``hack_scan`` for many rows at once, column by column.

The same features as :func:`~whileai.simulations.clean.hack_features.hand_features` and
:func:`~whileai.simulations.clean.hack_features.auto_features` (the per-row definition), built
in one pass over the rows: Python reads what only row dicts hold (tools, turns, truncation,
log-probability, markers, trace flags, the caller's features) and hands each row's agent text,
lowercased, to the ``hack_text_features`` kernel for the counts and the auto tier. A column is
``(rows, values)``: ``array('q')`` of row indices (ascending) and ``array('d')`` of the non-zero
values.

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
from whileai.simulations.clean.hack_features import AUTO_TOP, row_extras
from whileai.simulations.clean.trace_batch import FLAGS, TraceInputs

__all__ = ["Column", "feature_columns"]

Column = tuple["array[int]", "array[float]"]
_COUNTS = ("reply_words", "exclamations", "questions", "bullets", "headings", "code_fences",
           "digits")


def _truncated(row: Mapping[str, Any], steps: list[dict[str, Any]]) -> bool:
    if row.get("truncated") is True or row.get("finish_reason") == "length":
        return True
    return any(s.get("truncated") is True or s.get("finish_reason") == "length" for s in steps)


def feature_columns(
    rows: Iterable[Mapping[str, Any]],
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    trace_kinds: Mapping[str, str] | None = None,
    *,
    auto: bool = True,
    top: int = AUTO_TOP,
) -> dict[str, Column]:
    """Return ``{name: (rows, values)}`` of every non-zero hand and auto feature of ``rows``.

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
    trace = TraceInputs(trace_kinds)
    for i, row in enumerate(rows):
        trace.add(row)
        raw_steps = row.get("steps")
        steps = [s for s in raw_steps if isinstance(s, dict)] if isinstance(raw_steps, list) else []
        parts = [c.lower() for s in steps
                 if s.get("role") == "assistant" and isinstance(c := s.get("content"), str)]
        final_value = row.get("final_text")
        final = final_value if isinstance(final_value, str) else ""
        if isinstance(final_value, str):
            low_final = final.lower()
            parts.append(low_final)
            final_chars.append(len(low_final))
        else:
            final_chars.append(0)
        texts.append("\n".join(parts))
        put("reply_chars", i, float(len(final)))
        tools = [s["tool"] for s in steps if isinstance(s.get("tool"), str)]
        put("tool_calls", i, float(len(tools)))
        put("turns", i, float(1 + sum(s.get("role") == "user" for s in steps)))
        if _truncated(row, steps):
            put("truncated", i, 1.0)
        for name in dict.fromkeys(tools):
            put(f"tool:{name}", i, 1.0)
        for name, value in row_extras(row, features, trace_kinds, flags=False):
            put(name, i, value)
    masks = trace.masks()
    del trace
    for k, flag in enumerate(FLAGS):
        hit = [i for i, mask in enumerate(masks) if mask >> k & 1]
        if hit:
            cells[f"trace:{flag}"] = (hit, [1.0] * len(hit))
    counts, vocab, ptr, members = _backend.hack_text_features(
        texts, final_chars, top if auto else 0
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
