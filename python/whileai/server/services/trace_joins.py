"""Truncated per-call copies merged into their conversation, across the traces a receiver keeps.

Without a parent span each model call is a trace of its own, and the row of an earlier call is a
truncated copy of a later one's (``ingest.joins`` says when). The receiver builds each trace's
row as it arrives; :func:`join` then merges copies within the request and between the request's
traces and the stored ones of the same task, whichever came first: the copy stays raw under
``merged`` (its own row kept to show), the whole one takes its usage and names it in
``lineage.merged``. :func:`keep_absorbed` lets a row rebuilt later keep what it absorbed.
``records`` are ``traces`` table records as ``services.traces`` prepares them (``row`` as
compact JSON, written with ``encode``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, trace_stats
from whileai.server.store.trace_tables import traces
from whileai.simulations.ingest.joins import absorb, call_ids, is_prefix, merge_prefixes

__all__ = ["join", "keep_absorbed", "mark_merged"]

Encode = Callable[[Any], str]


def mark_merged(record: dict[str, Any], now: float) -> None:
    """Turn ``record`` into a merged trace: raw under ``merged``, its own row kept to show."""
    record.update(genai=False, task="merged", updated_at=now)


def keep_absorbed(conn: sa.Connection, account: Account, records: dict[str, dict[str, Any]],
                  seen: set[str], *, encode: Encode) -> None:
    """A rebuilt row keeps the traces merged into it before (their usage and their ids)."""
    rebuilt = sorted(t for t, r in records.items() if t in seen and r["genai"])
    if not rebuilt:
        return
    where = traces.c.account_id == account.id
    old = conn.execute(sa.select(traces.c.trace_id, traces.c.row).where(
        where, traces.c.trace_id.in_(rebuilt), traces.c.row.is_not(None))).tuples().all()
    for trace_id, text in old:
        absorbed = json.loads(text).get("lineage", {}).get("merged", [])
        if not absorbed:
            continue
        row = json.loads(records[trace_id]["row"])
        for (short,) in conn.execute(sa.select(traces.c.row).where(
                where, traces.c.trace_id.in_(absorbed), traces.c.task == "merged",
                traces.c.row.is_not(None))).tuples():
            row = absorb(row, json.loads(short))
        records[trace_id]["row"] = encode(row)


def join(conn: sa.Connection, account: Account, records: dict[str, dict[str, Any]],
         now: float, *, encode: Encode) -> dict[str, trace_stats.TraceState]:
    """Merge the rows that are truncated copies of another (``ingest.joins``): within
    ``records`` (the rows of this batch), and between them and the stored rows of the same
    task, whichever came first. Stored traces that change join ``records``; returns their
    states before the change."""
    # Only rows with a call id or a conversation can merge: the text says so before a parse.
    mine = {t: json.loads(r["row"]) for t, r in records.items() if r["genai"] and (
        '"call_id":' in r["row"] or '"conversation_id":' in r["row"])}
    mine = {t: row for t, row in mine.items() if call_ids(row) or row.get("conversation_id")}
    if not mine:
        return {}
    if len(mine) > 1:
        kept, _ = merge_prefixes(list(mine.values()))
        for row in kept:
            for short in row["lineage"].get("merged", ()):
                if short in mine:
                    mark_merged(records[short], now)
                    del mine[short]
            if row["lineage"].get("merged"):
                mine[row["trace_id"]] = row
                records[row["trace_id"]]["row"] = encode(row)
    tasks = sorted({records[t]["task"] for t in mine})
    stored = conn.execute(sa.select(traces).where(
        traces.c.account_id == account.id, traces.c.genai.is_(True),
        traces.c.task.in_(tasks), traces.c.trace_id.notin_(sorted(records)))).all()
    changed: dict[str, trace_stats.TraceState] = {}
    for found in stored:
        theirs = json.loads(found.row)
        for trace_id, row in mine.items():
            if records[trace_id]["task"] != found.task or not records[trace_id]["genai"]:
                continue
            if is_prefix(theirs, row):
                row = mine[trace_id] = absorb(row, theirs)
                records[trace_id]["row"] = encode(row)
                merged = dict(found._mapping)
                mark_merged(merged, now)
            elif is_prefix(row, theirs):
                theirs = absorb(theirs, row)
                merged = {**found._mapping, "row": encode(theirs), "updated_at": now}
                mark_merged(records[trace_id], now)
            else:
                continue
            merged.pop("seq", None)  # and the score, which stays as it is: not a record field
            merged.pop("score", None)
            changed.setdefault(found.trace_id, trace_stats.TraceState(
                agent=found.agent, genai=True, task=found.task, score=found.score))
            records[found.trace_id] = {**records.get(found.trace_id, {}), **merged}
            if not records[found.trace_id]["genai"]:
                break
    return changed
