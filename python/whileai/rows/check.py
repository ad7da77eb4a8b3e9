"""Check rows against the row contract: counts per field, schema versions, duplicate rollouts,
and the runs (``run_fingerprint``) a set mixes; ``format_row_check`` prints the report.

>>> print(format_row_check(check_rows([{"prompt": "a"}])))
rows 1: 1 valid, 0 invalid (schema versions: 0=1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any

from whileai.errors import RowError
from whileai.rows.duplicates import rollout_key
from whileai.rows.jsonl import read_jsonl
from whileai.rows.schema import row_problems

__all__ = ["check_rows", "format_row_check"]


def _problem_field(problem: str) -> str:
    """The top-level key a problem is about (``steps`` for ``steps[2].call_id``)."""
    if problem.startswith("field `"):
        path = problem[len("field `"):].split("`", 1)[0]
        return path.split(".", 1)[0].split("[", 1)[0]
    return "task key" if "task key" in problem else "row"


def _run_id(row: Mapping[str, Any]) -> str:
    """The row's ``run_fingerprint`` id, or ``none``."""
    found = row.get("run_fingerprint")
    run = found.get("id") if isinstance(found, Mapping) else None
    return run if isinstance(run, str) and run else "none"


def check_rows(rows: Any, *, examples: int = 5) -> dict[str, Any]:
    """Check every row against schema v1 and count what is wrong, per field.

    ``rows`` is an iterable of rows or the path of a JSONL file (read leniently: lines that are
    not a JSON object are counted in ``unreadable_lines``).

    Returns a JSON-able report: ``rows``, ``valid``, ``invalid``, ``versions`` (schema version
    -> rows), ``by_field`` (top-level key -> rows with a problem there), ``duplicates`` (rows
    repeating an earlier rollout's seed, scenario_id and rollout_index), ``fingerprints``
    (``run_fingerprint`` id -> rows; ``none`` for rows without one: more than one key means
    rows of different runs are mixed), ``unreadable_lines`` and ``examples`` (the first few
    invalid rows' index and problems). Print it with ``format_row_check``.

    >>> report = check_rows([{"prompt": "a"}, {"prompt": "b", "reward": "x"}])
    >>> report["invalid"], report["by_field"]
    (1, {'reward': 1})
    """
    reader = None
    if isinstance(rows, (str, PathLike)):
        rows = reader = read_jsonl(rows, strict=False)
    if isinstance(rows, (bytes, Mapping)) or not isinstance(rows, Iterable):
        raise RowError(f"check_rows: expected rows (a list of dicts) or a JSONL path, got "
                       f"{type(rows).__name__}")
    report: dict[str, Any] = {"rows": 0, "valid": 0, "invalid": 0, "versions": {},
                              "by_field": {}, "duplicates": 0, "fingerprints": {},
                              "unreadable_lines": 0, "examples": []}
    seen: set[object] = set()
    for index, row in enumerate(rows):
        report["rows"] += 1
        rollout = rollout_key(row)
        if rollout is not None:
            report["duplicates"] += rollout in seen
            seen.add(rollout)
        problems = row_problems(row)
        if isinstance(row, Mapping):
            version = row.get("schema_version", "0")
            key = version if isinstance(version, str) else repr(version)
            report["versions"][key] = report["versions"].get(key, 0) + 1
            run = _run_id(row)
            report["fingerprints"][run] = report["fingerprints"].get(run, 0) + 1
        if not problems:
            report["valid"] += 1
            continue
        report["invalid"] += 1
        for name in sorted({_problem_field(p) for p in problems}):
            report["by_field"][name] = report["by_field"].get(name, 0) + 1
        if len(report["examples"]) < examples:
            report["examples"].append({"row": index, "problems": problems})
    if reader is not None:
        report["unreadable_lines"] = reader.skipped
    return report


def format_row_check(report: Mapping[str, Any]) -> str:
    """One line of counts, then the problem fields and the first invalid rows.

    >>> print(format_row_check(check_rows([{"prompt": "a"}])))
    rows 1: 1 valid, 0 invalid (schema versions: 0=1)
    """
    versions = ", ".join(f"{k}={v}" for k, v in sorted(report["versions"].items()))
    lines = [f"rows {report['rows']}: {report['valid']} valid, {report['invalid']} invalid"
             f" (schema versions: {versions or 'none'})"]
    if report["by_field"]:
        fields = ", ".join(f"{k} {v}" for k, v in sorted(report["by_field"].items()))
        lines.append(f"rows with a problem, by field: {fields}")
    lines.extend(f"  row {example['row']}: " + "; ".join(example["problems"])
                 for example in report["examples"])
    if report.get("duplicates"):
        lines.append(f"duplicate rollouts: {report['duplicates']} row(s) repeat an earlier row's "
                     "seed, scenario_id and rollout_index (statistics count each once)")
    runs = report.get("fingerprints") or {}
    if len(runs) > 1:
        counts = ", ".join(f"{k}={v}" for k, v in sorted(runs.items()))
        lines.append(f"mixed run fingerprints: rows of {len(runs)} runs ({counts}); rows made "
                     "under other tools, prompts or knobs sit together (split them by "
                     "run_fingerprint.id)")
    return "\n".join(lines)
