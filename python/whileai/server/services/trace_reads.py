"""Traces read back: the listing, one trace with its spans, the rows cuts are made of.

A stored span is its protobuf bytes or its OTLP/JSON body (``services.traces`` stores them);
:func:`stored_span` reads either back into the one OTLP/JSON shape a trace is shown and rebuilt
from.
"""

from __future__ import annotations

import json
import time
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Store, trace_stats
from whileai.server.services.otlp import proto_body
from whileai.server.services.problems import Invalid, NotFound
from whileai.server.store.trace_tables import trace_scores, trace_spans, traces
from whileai.simulations.ingest.unbuilt import REASONS

__all__ = ["STORED_COLUMNS", "get_trace", "list_traces", "since_cutoff", "stored_span",
           "trace_rows"]

STORED_COLUMNS = (trace_spans.c.trace_id, trace_spans.c.span_id, trace_spans.c.body,
           trace_spans.c.proto, trace_spans.c.agent)


def stored_span(trace_id: str, span_id: str, body: str, proto: bytes | None,
            agent: str | None) -> tuple[dict[str, Any], str | None]:
    """A stored span as its OTLP/JSON body with its ids in front, and the agent it names.

    Protobuf spans are kept as their bytes; a JSON body stored before migration 0007 carries
    its agent as ``whileaiAgent`` (and, before its ids moved to their columns, the same ids).
    """
    found = proto_body(bytes(proto)) if proto is not None else json.loads(body)
    agent = agent or found.pop("whileaiAgent", None)
    found.pop("traceId", None)  # the columns' ids are the ones the span is stored under
    found.pop("spanId", None)
    return {"traceId": trace_id, "spanId": span_id, **found}, agent


def since_cutoff(since: str) -> float | None:
    """``"all"`` -> None; ``"24h"``, ``"7d"``, ``"30m"`` -> the cut-off epoch time."""
    if since in ("", "all"):
        return None
    units = {"m": 60, "h": 3600, "d": 86400}
    number, unit = since[:-1], since[-1:]
    if unit not in units or not number.isdigit() or len(number) > 9:
        raise Invalid(f"since must be 'all' or like '24h', '7d', '30m' (at "
                      f"most 9 digits); got {since[:40]!r}")
    return time.time() - int(number) * units[unit]


def trace_rows(store: Store, account: Account, *, agent: str | None = None,
               since: str = "all", tasks: set[str] | None = None) -> list[dict[str, Any]]:
    """The GenAI traces' rows (with ``trace_id``; only ``tasks`` when given), scores attached as
    ``scores``, oldest first."""
    query = sa.select(traces.c.trace_id, traces.c.row).where(
        traces.c.account_id == account.id, traces.c.genai.is_(True))
    if tasks is not None:
        query = query.where(traces.c.task.in_(sorted(tasks)))
    if agent is not None:
        query = query.where(traces.c.agent == agent)
    cutoff = since_cutoff(since)
    if cutoff is not None:
        query = query.where(traces.c.created_at >= cutoff)
    with store.engine.connect() as conn:
        found = conn.execute(query.order_by(traces.c.seq)).all()
        scores: dict[str, dict[str, float]] = {}
        ids = [trace_id for trace_id, _ in found]
        for chunk in range(0, len(ids), 500):
            for trace_id, name, value in conn.execute(
                    sa.select(trace_scores.c.trace_id, trace_scores.c.name, trace_scores.c.value)
                    .where(trace_scores.c.account_id == account.id,
                           trace_scores.c.trace_id.in_(ids[chunk:chunk + 500]))):
                scores.setdefault(trace_id, {})[name] = value
    out = []
    for trace_id, text in found:
        row = json.loads(text)
        row["trace_id"] = trace_id
        row["scores"] = scores.get(trace_id, {})
        out.append(row)
    return out


def list_traces(store: Store, account: Account, *, agent: str | None, limit: int,
                offset: int) -> dict[str, Any]:
    """A page of traces, newest first, with counts of GenAI and raw traces."""
    where = [traces.c.account_id == account.id]
    if agent is not None:
        where.append(traces.c.agent == agent)
    with store.engine.connect() as conn:
        counts = trace_stats.trace_counts(conn, account.id, agent)
        reasons = trace_stats.raw_reasons(conn, account.id, agent)
        page = conn.execute(sa.select(traces).where(*where).order_by(traces.c.seq.desc())
                            .limit(limit).offset(offset)).all()
        ids = [r.trace_id for r in page]
        scores: dict[str, dict[str, float]] = {}
        if ids:
            for trace_id, name, value in conn.execute(
                    sa.select(trace_scores.c.trace_id, trace_scores.c.name,
                              trace_scores.c.value).where(
                        trace_scores.c.account_id == account.id,
                        trace_scores.c.trace_id.in_(ids))):
                scores.setdefault(trace_id, {})[name] = value
    items = []
    for r in page:
        row = json.loads(r.row) if r.row else None
        items.append({"traceId": r.trace_id, "agent": r.agent, "genai": bool(r.genai),
                      "spans": r.spans, "scenario": r.scenario, "model": r.model,
                      "prompt": row.get("prompt") if row else None,
                      "reason": None if r.genai else (r.task or "not_genai"),
                      "scores": scores.get(r.trace_id, {}), "createdAt": r.created_at})
    return {"traces": items, "genai": counts.get(True, 0), "raw": counts.get(False, 0),
            "raw_reasons": reasons, "raw_advice": {k: REASONS[k] for k in reasons if k in REASONS},
            "total": sum(counts.values())}


def get_trace(store: Store, account: Account, trace_id: str) -> dict[str, Any]:
    """One trace: its row (None for a raw trace), its spans as received, and its scores."""
    with store.engine.connect() as conn:
        found = conn.execute(sa.select(traces).where(
            traces.c.account_id == account.id, traces.c.trace_id == trace_id.lower())).first()
        if found is None:
            raise NotFound(f"no trace {trace_id!r} in this account")
        spans = [stored_span(*stored)[0] for stored in conn.execute(
            sa.select(*STORED_COLUMNS).where(
                trace_spans.c.account_id == account.id,
                trace_spans.c.trace_id == found.trace_id).order_by(trace_spans.c.span_id))]
        scores = dict(conn.execute(
            sa.select(trace_scores.c.name, trace_scores.c.value).where(
                trace_scores.c.account_id == account.id,
                trace_scores.c.trace_id == found.trace_id)).tuples().all())
    return {"traceId": found.trace_id, "agent": found.agent, "genai": bool(found.genai),
            "row": json.loads(found.row) if found.row else None, "spans": spans,
            "scores": scores}
