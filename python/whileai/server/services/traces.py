"""Traces: store received spans once, keep one conversation row per trace, attach scores.

A request's spans arrive decoded once (``services.otlp``: the body to store and the
:class:`~whileai.simulations.ingest.otlp.Span`); its new span ids go in with one insert (a span id
already stored is a duplicate and skipped), all in one transaction. Every trace the request added
a span to is then rebuilt with ``ingest.otel.read_otel`` (the conversion ``rows_from_otel`` uses):
the traces first seen in the request from its spans as they are, in one ``read_otel`` call when
no span names a conversation; a trace seen before from all of its stored spans, so spans of one
trace may arrive over several requests. The per-task summary the cuts report reads moves in the
same transaction (``trace_stats``). A trace with no ``gen_ai.*`` attribute stays raw: kept and
counted, no row. The agent is the trace's ``gen_ai.agent.name`` (span or resource attribute); an
agent exists from its first trace.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa

from whileai.server.errors import ApiError
from whileai.server.services import Account, Store, trace_stats
from whileai.server.services.otlp import Incoming
from whileai.server.store.dialect import insert_absent, insert_new, upsert
from whileai.server.store.tables import agents
from whileai.server.store.trace_tables import trace_scores, trace_spans, traces
from whileai.simulations.ingest.otel import CONVERSATION_ID, SCENARIO_KEYS, read_otel
from whileai.simulations.ingest.otlp import Span, decode_spans
from whileai.simulations.rowsource import task_key

__all__ = ["get_trace", "ingest", "list_traces", "send_scores", "since_cutoff", "trace_rows"]

AGENT_KEY = "gen_ai.agent.name"
_HEX = re.compile(r"[0-9a-fA-F]+")
_compact = json.JSONEncoder(separators=(",", ":")).encode  # one encoder, not one per span


def _valid_id(value: Any, length: int) -> bool:
    """A hex id of ``length`` digits that is not all zeros (the OTLP invalid id)."""
    return (isinstance(value, str) and len(value) == length and value.strip("0") != ""
            and _HEX.fullmatch(value) is not None)


def ingest(store: Store, account: Account, received: Sequence[Incoming]) -> dict[str, Any]:
    """Store a decoded export request; returns counts and the partial-success message."""
    now = time.time()
    lines: list[dict[str, Any]] = []
    spans: dict[str, Span] = {}  # span id -> span, the first of a batch's repeats
    agent_of: dict[str, str] = {}  # trace id -> the agent its first span naming one names
    agents_seen: set[str] = set()
    rejected = valid = 0
    problems: list[str] = []
    for item in received:
        body = item.body
        trace_id, span_id = body.get("traceId"), body.get("spanId")
        if not _valid_id(trace_id, 32) or not _valid_id(span_id, 16):
            rejected += 1
            if len(problems) < 3:
                problems.append(f"span {body.get('name')!r} has no valid traceId/spanId")
            continue
        valid += 1
        span_id, trace_id = str(span_id).lower(), str(trace_id).lower()
        if span_id in spans:
            continue  # a repeat inside the batch: a duplicate, as a repeat across batches is
        agent = item.span.attributes.get(AGENT_KEY) or item.resource.get(AGENT_KEY)
        if agent:
            body["whileaiAgent"] = str(agent)
            agents_seen.add(body["whileaiAgent"])
            agent_of.setdefault(trace_id, body["whileaiAgent"])
        spans[span_id] = item.span
        del body["traceId"], body["spanId"]  # kept once, in their columns (``_with_ids``)
        lines.append({"account_id": account.id, "span_id": span_id, "trace_id": trace_id,
                      "body": _compact(body), "received_at": now})
    with store.engine.begin() as conn:
        fresh = {key[1] for key in insert_absent(conn, trace_spans, lines)}
        batch: dict[str, list[Span]] = {}
        for line in lines:
            if line["span_id"] in fresh:
                batch.setdefault(line["trace_id"], []).append(spans[line["span_id"]])
        built = _rebuild(conn, account, batch, agent_of, now)
        for agent in sorted(agents_seen):
            _touch_agent(conn, account, agent, now)
    message = "; ".join(problems) + (f" (and {rejected - len(problems)} more)"
                                     if rejected > len(problems) else "")
    return {"accepted": len(fresh), "duplicates": valid - len(fresh), "rejected": rejected,
            "message": message, "traces": len(batch), "genai": built}


def _touch_agent(conn: sa.Connection, account: Account, name: str, now: float) -> None:
    insert_new(conn, agents, [{"id": "agt_" + secrets.token_hex(8), "account_id": account.id,
                               "name": name, "created_at": now, "updated_at": now}])


def _stored_spans(conn: sa.Connection, account: Account, trace_ids: Sequence[str],
                  agent_of: dict[str, str]) -> dict[str, list[Span]]:
    """All stored spans of ``trace_ids`` (this transaction's included), in the order stored;
    ``agent_of`` gets each trace's agent as its stored spans name it."""
    bodies: dict[str, list[dict[str, Any]]] = {t: [] for t in trace_ids}
    for chunk in range(0, len(trace_ids), 500):
        for trace_id, span_id, body in conn.execute(
                sa.select(trace_spans.c.trace_id, trace_spans.c.span_id, trace_spans.c.body)
                .where(trace_spans.c.account_id == account.id,
                       trace_spans.c.trace_id.in_(trace_ids[chunk:chunk + 500]))):
            bodies[trace_id].append(_with_ids(trace_id, span_id, body))
    for trace_id, found in bodies.items():
        agent = next((b["whileaiAgent"] for b in found if b.get("whileaiAgent")), None)
        if agent:
            agent_of[trace_id] = agent
        else:
            agent_of.pop(trace_id, None)
    return {trace_id: decode_spans(found)[0] for trace_id, found in bodies.items()}


def _with_ids(trace_id: str, span_id: str, body: str) -> dict[str, Any]:
    """A stored span body with its ids back in front (bodies stored before they were left out
    of the body still hold them: the same values)."""
    return {"traceId": trace_id, "spanId": span_id, **json.loads(body)}


def _is_genai(spans: Sequence[Span]) -> bool:
    return any(k.startswith("gen_ai.") for s in spans for k in s.attributes)


def _rows(groups: Mapping[str, Sequence[Span]]) -> dict[str, dict[str, Any]]:
    """The conversation row of each trace (``read_otel``'s first); traces without one are left
    out. One ``read_otel`` over all of them when no span names a conversation (then its groups
    are the traces), else one per trace, so a conversation never spans two traces' rows."""
    if any(CONVERSATION_ID in s.attributes for group in groups.values() for s in group):
        return {trace_id: dict(rows[0]) for trace_id, group in groups.items()
                if (rows := read_otel(group).rows)}
    rows = read_otel([s for group in groups.values() for s in group]).rows
    return {row["lineage"]["group"]: dict(row) for row in rows}


def _rebuild(conn: sa.Connection, account: Account, batch: Mapping[str, list[Span]],
             agent_of: dict[str, str], now: float) -> int:
    """Re-derive the row of every trace the batch added spans to, and move the summary.

    A trace first seen in this batch is built from the batch's spans as they are (they are all
    it has); a trace seen before is built from all of its stored spans.
    """
    if not batch:
        return 0
    before = trace_stats.states(conn, account.id, sorted(batch))
    spans = {**batch, **_stored_spans(conn, account, sorted(before), agent_of)}
    genai_ids = [t for t in spans if _is_genai(spans[t])]
    rows = _rows({t: spans[t] for t in genai_ids if t not in before})
    for trace_id in genai_ids:
        if trace_id in before and (found := read_otel(spans[trace_id]).rows):
            rows[trace_id] = dict(found[0])
    records, after, genai = [], [], 0
    for trace_id in sorted(spans):
        record = _record(account, trace_id, spans[trace_id], agent_of.get(trace_id),
                         rows.get(trace_id), now)
        old = before.get(trace_id)
        after.append(trace_stats.TraceState(agent=record["agent"], genai=record["genai"],
                                            task=record["task"],
                                            score=old.score if old else None))
        genai += record["genai"]
        records.append(record)
    upsert(conn, traces, [r for r in records if r["trace_id"] in before],
           keys=("account_id", "trace_id"),
           update=("agent", "genai", "spans", "scenario", "task", "model", "row", "updated_at"),
           absent=[r for r in records if r["trace_id"] not in before])
    trace_stats.apply(conn, account.id, before.values(), after)
    return genai


def _record(account: Account, trace_id: str, spans: Sequence[Span], agent: str | None,
            row: dict[str, Any] | None, now: float) -> dict[str, Any]:
    """The ``traces`` row of one trace: its conversation row when it is GenAI and has one."""
    scenario = next((str(s.attributes[k]) for s in spans for k in SCENARIO_KEYS
                     if s.attributes.get(k)), None)
    return {"account_id": account.id, "trace_id": trace_id, "agent": agent,
            "genai": row is not None, "spans": len(spans), "scenario": scenario,
            "task": (task_key(row) or trace_id) if row is not None else None,
            "model": row.get("model_version") if row else None,
            "row": _compact(row) if row is not None else None,
            "created_at": now, "updated_at": now}


def since_cutoff(since: str) -> float | None:
    """``"all"`` -> None; ``"24h"``, ``"7d"``, ``"30m"`` -> the cut-off epoch time."""
    if since in ("", "all"):
        return None
    units = {"m": 60, "h": 3600, "d": 86400}
    number, unit = since[:-1], since[-1:]
    if unit not in units or not number.isdigit():
        raise ApiError("bad_request", f"since must be 'all' or like '24h', '7d', '30m'; got "
                                      f"{since!r}")
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
                      "scores": scores.get(r.trace_id, {}), "createdAt": r.created_at})
    return {"traces": items, "genai": counts.get(True, 0), "raw": counts.get(False, 0),
            "total": sum(counts.values())}


def send_scores(store: Store, account: Account,
                scores: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Attach scores to traces; the same (trace, name) again is a correction.

    Raises:
        ApiError: nothing landed (every trace id unknown, or every score malformed).
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
        raise ApiError("not_found", f"no score landed: unknown trace ids {unknown[:5]}"
                                    + (f", rejected {rejected[:3]}" if rejected else ""))
    return {"applied": len(applied), "unknown": unknown, "rejected": rejected}


def get_trace(store: Store, account: Account, trace_id: str) -> dict[str, Any]:
    """One trace: its row (None for a raw trace), its spans as received, and its scores."""
    with store.engine.connect() as conn:
        found = conn.execute(sa.select(traces).where(
            traces.c.account_id == account.id, traces.c.trace_id == trace_id.lower())).first()
        if found is None:
            raise ApiError("not_found", f"no trace {trace_id!r} in this account")
        spans = [_with_ids(found.trace_id, span_id, body) for span_id, body in conn.execute(
            sa.select(trace_spans.c.span_id, trace_spans.c.body).where(
                trace_spans.c.account_id == account.id,
                trace_spans.c.trace_id == found.trace_id).order_by(trace_spans.c.span_id))]
        scores = dict(conn.execute(
            sa.select(trace_scores.c.name, trace_scores.c.value).where(
                trace_scores.c.account_id == account.id,
                trace_scores.c.trace_id == found.trace_id)).tuples().all())
    for span in spans:
        span.pop("whileaiAgent", None)
    return {"traceId": found.trace_id, "agent": found.agent, "genai": bool(found.genai),
            "row": json.loads(found.row) if found.row else None, "spans": spans,
            "scores": scores}
