"""Scores on stored traces: one per (trace, name), the verdict ``score`` also kept on the trace.

A trace id may be given whole (32 hex digits) or by its first 16 (``trace_ids.expand_short``);
the same (trace, name) again is a correction. The per-task summary the cuts report reads
moves in the same transaction (``trace_stats``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Store, trace_stats
from whileai.server.services.problems import NotFound
from whileai.server.services.trace_ids import expand_short
from whileai.server.store.dialect import upsert
from whileai.server.store.trace_tables import trace_scores, traces

__all__ = ["send_scores"]


def send_scores(store: Store, account: Account,
                scores: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Attach scores to traces; the same (trace, name) again is a correction.

    Raises:
        NotFound: nothing landed (every trace id unknown, or every score malformed).
    """
    now = time.time()
    good: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    for i, item in enumerate(scores):
        trace_id = str(item.get("traceId") or item.get("trace_id") or "").lower()
        value = item.get("value")
        if isinstance(value, bool):
            value = float(value)
        if not trace_id or not isinstance(value, (int, float)) or not math.isfinite(value):
            rejected.append({"index": i, "reason": "needs traceId and a finite numeric value"})
            continue
        name = str(item.get("name") or "score")[:200]
        extra = {k: v for k, v in item.items() if k not in ("traceId", "trace_id", "value",
                                                              "name")}
        good.append({"account_id": account.id, "trace_id": trace_id, "name": name,
                     "value": float(value), "fields": json.dumps(extra, default=str),
                     "updated_at": now})
    with store.engine.begin() as conn:
        good, ambiguous = expand_short(conn, account.id, good)
        rejected += ambiguous
        known = set(conn.execute(sa.select(traces.c.trace_id).where(
            traces.c.account_id == account.id,
            traces.c.trace_id.in_(sorted({g["trace_id"] for g in good}) or [""]))).scalars())
        applied = [g for g in good if g["trace_id"] in known]
        unknown = sorted({g["trace_id"] for g in good if g["trace_id"] not in known})
        upsert(conn, trace_scores, applied, keys=("account_id", "trace_id", "name"),
               update=("value", "fields", "updated_at"))
        verdicts = {g["trace_id"]: g["value"] for g in applied if g["name"] == "score"}
        if verdicts:  # the verdict also sits on the trace and in the summary cuts count
            before = trace_stats.states(conn, account.id, sorted(verdicts))
            conn.execute(sa.update(traces).where(
                traces.c.account_id == account.id,
                traces.c.trace_id == sa.bindparam("t")).values(score=sa.bindparam("v")),
                [{"t": t, "v": v} for t, v in verdicts.items()])
            trace_stats.apply(conn, account.id, before.values(),
                              [replace(s, score=verdicts[t]) for t, s in before.items()])
    if not applied:
        raise NotFound(f"no score landed: unknown trace ids {unknown[:5]}"
                       + (f", rejected {rejected[:3]}" if rejected else "")
                       + " (a trace id is the 32-hex OTLP id, or its first 16)")
    return {"applied": len(applied), "unknown": unknown, "rejected": rejected}
