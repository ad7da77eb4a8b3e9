"""Did the reply quote the row's privileged (teacher-only) context?

A row can be checked when it carries a ``privileged`` block with at least one text field
(``reference``, ``hidden_state``, ``principle``, ``rubric``). The reply leaks a field when it
shares a run of ``n`` tokens with it, or, for a field shorter than ``n`` tokens (three or more),
contains the whole field. The report says how many rows it could check, so a run with nothing
to leak does not read as a pass.

>>> row = {"scenario_id": "sc-1", "rollout_index": 0, "final_text": "Done (note: lookup_order "
...        "succeeds and the reply reports its result)", "privileged": {"reference":
...        "lookup_order succeeds and the reply reports its result"}}
>>> print(format_leak_report(leak_report([row, {"final_text": "hi"}])))
checked 1 of 2 rows: 1 quoted privileged context (100%)
  sc-1 r0: reference = 'lookup_order succeeds and the reply reports its result'
"""

from __future__ import annotations

from typing import Any

from whileai import _backend
from whileai.rows.source import as_rows

__all__ = ["PRIVILEGED_FIELDS", "format_leak_report", "leak_report", "leaked_fields"]

PRIVILEGED_FIELDS = ("reference", "hidden_state", "principle", "rubric")


def _grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _texts(privileged: dict[str, Any]) -> dict[str, str]:
    out = {}
    for key in PRIVILEGED_FIELDS:
        value = privileged.get(key)
        if isinstance(value, list):
            value = "; ".join(str(v) for v in value)
        if isinstance(value, dict):
            value = "; ".join(f"{k}: {v}" for k, v in value.items())
        if isinstance(value, str) and value.strip():
            out[key] = value
    return out


def leaked_fields(row: dict[str, Any], *, n: int = 6) -> dict[str, str] | None:
    """``{field: text}`` the reply quoted; ``{}`` when clean; None when nothing can be checked."""
    privileged = row.get("privileged")
    fields = _texts(privileged) if isinstance(privileged, dict) else {}
    if not fields:
        return None
    reply = row.get("final_text")
    tokens = _backend.tokenize(reply) if isinstance(reply, str) else []
    joined = " " + " ".join(tokens) + " "
    reply_grams = _grams(tokens, n)
    found = {}
    for key, text in fields.items():
        ftoks = _backend.tokenize(text)
        if len(ftoks) >= n:
            if reply_grams & _grams(ftoks, n):
                found[key] = text
        elif len(ftoks) >= 3 and f" {' '.join(ftoks)} " in joined:
            found[key] = text
    return found


def leak_report(rows: Any, *, n: int = 6, examples: int = 10) -> dict[str, Any]:
    """Count the rows whose reply quotes privileged context, out of the rows that can be checked."""
    items = as_rows(rows)
    checked = 0
    leaks: list[dict[str, Any]] = []
    by_field: dict[str, int] = {}
    for i, row in enumerate(items):
        found = leaked_fields(row, n=n)
        if found is None:
            continue
        checked += 1
        if found:
            for key in found:
                by_field[key] = by_field.get(key, 0) + 1
            leaks.append({"index": i, "scenario_id": row.get("scenario_id"),
                          "rollout_index": row.get("rollout_index"), "fields": found})
    notes = []
    if not checked:
        notes.append("no row carries a privileged block: nothing could leak, nothing was checked")
    return {
        "rows": len(items),
        "checked": checked,
        "unchecked": len(items) - checked,
        "leaked": len(leaks),
        "rate": round(len(leaks) / checked, 4) if checked else None,
        "by_field": by_field,
        "examples": leaks[:examples],
        "leaky_indices": [x["index"] for x in leaks],
        "n": n,
        "notes": notes,
    }


def format_leak_report(report: dict[str, Any]) -> str:
    """``checked X of Y rows: Z quoted privileged context (P%)`` and one line per offender."""
    if not report["checked"]:
        return f"checked 0 of {report['rows']} rows: nothing to check (no privileged context)"
    lines = [f"checked {report['checked']} of {report['rows']} rows: {report['leaked']} quoted "
             f"privileged context ({100 * report['rate']:.0f}%)"]
    for ex in report["examples"]:
        key, text = next(iter(ex["fields"].items()))
        short = text if len(text) <= 70 else text[:67] + "..."
        lines.append(f"  {ex['scenario_id']} r{ex['rollout_index']}: {key} = {short!r}")
    return "\n".join(lines)
