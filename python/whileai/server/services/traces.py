"""Traces: store received spans once, keep one conversation row per trace, attach scores.

A batch is stored span by span (a span id already stored is a duplicate and skipped). Every trace
the batch touched is then rebuilt from all of its stored spans with ``ingest.otel.read_otel`` (the
conversion ``rows_from_otel`` uses), so spans of one trace may arrive over several batches. A
trace with no ``gen_ai.*`` attribute stays raw: kept and counted, no row. The agent is the
trace's ``gen_ai.agent.name`` (span or resource attribute); an agent exists from its first trace.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from whileai.server.errors import ApiError
from whileai.server.services import Account, Store
from whileai.server.services.otlp import flat_spans
from whileai.server.store.dialect import insert_new, upsert
from whileai.server.store.tables import agents
from whileai.server.store.trace_tables import trace_scores, trace_spans, traces
from whileai.simulations.ingest.otel import SCENARIO_KEYS, read_otel
from whileai.simulations.ingest.otlp import decode_attributes
from whileai.simulations.rowsource import task_key

__all__ = ["get_trace", "ingest", "list_traces", "send_scores", "since_cutoff", "trace_rows"]

AGENT_KEY = "gen_ai.agent.name"
_SPAN_ID_CHARS = set("0123456789abcdef")


def _valid_id(value: Any, length: int) -> bool:
    return (isinstance(value, str) and len(value) == length
            and set(value.lower()) <= _SPAN_ID_CHARS and set(value) != {"0"})


def ingest(store: Store, account: Account, export: Mapping[str, Any]) -> dict[str, Any]:
    """Store an OTLP/JSON export; returns counts and the partial-success message."""
    now = time.time()
    lines: list[dict[str, Any]] = []
    rejected = 0
    agents_seen: dict[str, str] = {}
    problems: list[str] = []
    for span, resource in flat_spans(dict(export)):
        trace_id, span_id = span.get("traceId"), span.get("spanId")
        if not _valid_id(trace_id, 32) or not _valid_id(span_id, 16):
            rejected += 1
            if len(problems) < 3:
                problems.append(f"span {span.get('name')!r} has no valid traceId/spanId")
            continue
        body = dict(span)
        attrs = decode_attributes(span.get("attributes"))
        agent = attrs.get(AGENT_KEY) or resource.get(AGENT_KEY)
        if agent:
            agents_seen[str(trace_id)] = str(agent)
            body["whileaiAgent"] = str(agent)
        lines.append({"account_id": account.id, "span_id": str(span_id).lower(),
                      "trace_id": str(trace_id).lower(),
                      "body": json.dumps(body, separators=(",", ":")), "received_at": now})
    with store.engine.begin() as conn:
        new = insert_new(conn, trace_spans, lines)
        touched = sorted({line["trace_id"] for line in lines})
        built = _rebuild(conn, account, touched, now)
        for agent in sorted(set(agents_seen.values())):
            _touch_agent(conn, account, agent, now)
    message = "; ".join(problems) + (f" (and {rejected - len(problems)} more)"
                                     if rejected > len(problems) else "")
    return {"accepted": new, "duplicates": len(lines) - new, "rejected": rejected,
            "message": message, "traces": len(touched), "genai": built}


def _touch_agent(conn: sa.Connection, account: Account, name: str, now: float) -> None:
    insert_new(conn, agents, [{"id": "agt_" + secrets.token_hex(8), "account_id": account.id,
                               "name": name, "created_at": now, "updated_at": now}])


def _rebuild(conn: sa.Connection, account: Account, trace_ids: Sequence[str],
             now: float) -> int:
    """Re-derive the row of every trace in ``trace_ids`` from its stored spans."""
    if not trace_ids:
        return 0
    spans: dict[str, list[dict[str, Any]]] = {t: [] for t in trace_ids}
    for chunk in range(0, len(trace_ids), 500):
        for trace_id, body in conn.execute(
                sa.select(trace_spans.c.trace_id, trace_spans.c.body).where(
                    trace_spans.c.account_id == account.id,
                    trace_spans.c.trace_id.in_(trace_ids[chunk:chunk + 500]))):
            spans[trace_id].append(json.loads(body))
    records, genai = [], 0
    for trace_id, bodies in spans.items():
        attrs = [decode_attributes(b.get("attributes")) for b in bodies]
        is_genai = any(k.startswith("gen_ai.") for a in attrs for k in a)
        agent = next((b["whileaiAgent"] for b in bodies if b.get("whileaiAgent")), None)
        scenario = next((str(a[k]) for a in attrs for k in SCENARIO_KEYS if a.get(k)), None)
        row = None
        if is_genai:
            rows = read_otel(bodies).rows
            row = dict(rows[0]) if rows else None
        if row is not None:
            genai += 1
        records.append({"account_id": account.id, "trace_id": trace_id, "agent": agent,
                        "genai": row is not None, "spans": len(bodies), "scenario": scenario,
                        "task": (task_key(row) or trace_id) if row is not None else None,
                        "model": row.get("model_version") if row else None,
                        "row": json.dumps(row) if row is not None else None,
                        "created_at": now, "updated_at": now})
    upsert(conn, traces, records, keys=("account_id", "trace_id"),
           update=("agent", "genai", "spans", "scenario", "task", "model", "row", "updated_at"))
    return genai


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
        counts: dict[bool, int] = {bool(genai): int(n) for genai, n in conn.execute(
            sa.select(traces.c.genai, sa.func.count()).where(*where).group_by(traces.c.genai))}
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
        verdicts = [g for g in applied if g["name"] == "score"]
        if verdicts:  # the verdict also sits on the trace, where cuts count it
            conn.execute(sa.update(traces).where(
                traces.c.account_id == account.id,
                traces.c.trace_id == sa.bindparam("t")).values(score=sa.bindparam("v")),
                [{"t": g["trace_id"], "v": g["value"]} for g in verdicts])
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
        spans = [json.loads(b) for b in conn.execute(
            sa.select(trace_spans.c.body).where(trace_spans.c.account_id == account.id,
                                                trace_spans.c.trace_id == found.trace_id)
            .order_by(trace_spans.c.span_id)).scalars()]
        scores = dict(conn.execute(
            sa.select(trace_scores.c.name, trace_scores.c.value).where(
                trace_scores.c.account_id == account.id,
                trace_scores.c.trace_id == found.trace_id)).tuples().all())
    for span in spans:
        span.pop("whileaiAgent", None)
    return {"traceId": found.trace_id, "agent": found.agent, "genai": bool(found.genai),
            "row": json.loads(found.row) if found.row else None, "spans": spans,
            "scores": scores}
