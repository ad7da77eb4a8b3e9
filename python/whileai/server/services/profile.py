"""What a trainer wants to know about a dataset, computed by streaming its parts once.

``profile`` counts pass rate, gradient support (graded rows whose task has both a pass and a
fail), mixed tasks, tool use, tokens and per-task pass rates; the result is cached on the
dataset row and reused until the set's ``version`` changes. ``preview`` is three rows and the
row-contract check of the first rows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from whileai.rows.check import check_rows
from whileai.rows.outbound import outbound
from whileai.rows.source import read_reward, task_key
from whileai.server.services import Account, Store
from whileai.server.services.datasets import _owned
from whileai.server.store.tables import datasets, parts
from whileai.simulations.selection.hygiene import PASS_AT

__all__ = ["PER_TASK_LIMIT", "PREVIEW_CHECKED", "dataset_rows", "preview", "profile",
           "profile_rows"]

PER_TASK_LIMIT = 1000
PREVIEW_CHECKED = 1000


def _rows(parts_dir: Path, paths: list[str]) -> Iterator[dict[str, Any]]:
    for relative in paths:
        with open(parts_dir / relative, "rb") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)


def _tokens(row: dict[str, Any]) -> tuple[int, int]:
    """(reported model tokens, words of prompt and final text)."""
    reported = 0
    for holder in (row, *[s for s in row.get("steps") or () if isinstance(s, dict)]):
        for key in ("input_tokens", "output_tokens"):
            value = holder.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                reported += value
    words = sum(len(str(row.get(k) or "").split()) for k in ("prompt", "final_text"))
    return reported, words


def profile_rows(rows: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """The profile of rows read once (pure; the route caches it).

    >>> p = profile_rows(iter([{"prompt": "a", "reward": 1.0}, {"prompt": "a", "reward": 0.0}]))
    >>> p["pass_rate"], p["mixed_tasks"], p["gradient_support"]
    (0.5, 1, 1.0)
    """
    tasks: dict[str, list[int]] = {}
    total = graded = passed = with_tools = tool_calls = reported = words = 0
    by_tool: dict[str, int] = {}
    for row in rows:
        total += 1
        key = task_key(row) or ""
        counts = tasks.setdefault(key, [0, 0, 0])  # rows, graded, passes
        counts[0] += 1
        reward, _ = read_reward(row)
        if reward is not None:
            graded += 1
            counts[1] += 1
            if reward >= PASS_AT:
                passed += 1
                counts[2] += 1
        calls = [s for s in row.get("steps") or () if isinstance(s, dict) and s.get("tool")]
        if calls:
            with_tools += 1
            tool_calls += len(calls)
            for step in calls:
                by_tool[str(step["tool"])] = by_tool.get(str(step["tool"]), 0) + 1
        r, w = _tokens(row)
        reported += r
        words += w
    mixed = [k for k, (_, g, p) in tasks.items() if 0 < p < g]
    mixed_rows = sum(tasks[k][1] for k in mixed)
    per_task = {k: round(p / g, 4) for k, (_, g, p) in list(tasks.items())[:PER_TASK_LIMIT] if g}
    return {
        "rows": total, "graded": graded, "ungraded": total - graded,
        "pass_rate": round(passed / graded, 4) if graded else None,
        "tasks": len(tasks), "mixed_tasks": len(mixed),
        "gradient_support": round(mixed_rows / graded, 4) if graded else 0.0,
        "tool_use": {"rows_with_tools": with_tools, "tool_calls": tool_calls,
                     "by_tool": dict(sorted(by_tool.items()))},
        "tokens": {"reported": reported, "words": words},
        "per_task_pass_rate": per_task,
        "per_task_truncated": max(0, len(tasks) - PER_TASK_LIMIT),
    }


def _paths(conn: sa.Connection, dataset_id: str) -> list[str]:
    return list(conn.execute(sa.select(parts.c.path).where(parts.c.dataset_id == dataset_id)
                             .order_by(parts.c.idx)).scalars())


def dataset_rows(store: Store, account: Account, dataset_id: str) -> Iterator[dict[str, Any]]:
    """The rows of one of the account's datasets, part after part, through the exit filter
    (``rows.outbound``: a private store's ``privileged`` block is not handed on)."""
    with store.engine.connect() as conn:
        _owned(conn, account, dataset_id)
        paths = _paths(conn, dataset_id)
    return (outbound(row) for row in _rows(store.config.parts_dir, paths))


def profile(store: Store, account: Account, dataset_id: str, *, force: bool) -> dict[str, Any]:
    """The dataset's profile, from the cache unless the set changed or ``force``."""
    with store.engine.connect() as conn:
        row = _owned(conn, account, dataset_id)
        paths = _paths(conn, dataset_id)
    if not force and row.profile and row.profile_version == row.version:
        return {**json.loads(row.profile), "cached": True}
    result = {"datasetId": dataset_id, "version": int(row.version), "computedAt": time.time(),
              **profile_rows(_rows(store.config.parts_dir, paths))}
    with store.engine.begin() as conn:
        conn.execute(sa.update(datasets).where(
            datasets.c.id == dataset_id, datasets.c.version == row.version)
            .values(profile=json.dumps(result), profile_version=row.version))
    return {**result, "cached": False}


def preview(store: Store, account: Account, dataset_id: str) -> dict[str, Any]:
    """Three sample rows (through the exit filter, ``rows.outbound``: a private store's
    ``privileged`` block is not shown) and the row-contract report of the first rows."""
    with store.engine.connect() as conn:
        row = _owned(conn, account, dataset_id)
        paths = _paths(conn, dataset_id)
    sample: list[dict[str, Any]] = []
    checked: list[dict[str, Any]] = []
    for item in _rows(store.config.parts_dir, paths):
        if len(sample) < 3:
            sample.append(outbound(item))
        checked.append(item)
        if len(checked) >= PREVIEW_CHECKED:
            break
    report = check_rows(checked)
    return {"datasetId": dataset_id, "name": row.name, "rows": int(row.rows), "sample": sample,
            "report": {**report, "checked": len(checked), "of": int(row.rows)}}
