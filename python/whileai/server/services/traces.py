"""Traces: store received spans once, keep one conversation row per trace, attach scores.

A request's spans arrive decoded once (``services.otlp``: what to store, the protobuf bytes or
the OTLP/JSON body, and the :class:`~whileai.simulations.ingest.otlp.Span`). Before the write
transaction, JSON bodies are encoded and every trace of the request gets its row from
``ingest.otel.read_otel`` (the
conversion ``rows_from_otel`` uses) as if it were new: one ``read_otel`` call when no span names
a conversation. In the transaction the new spans go in with one insert (a span whose trace and
span id are stored already is a duplicate and skipped); a trace first seen takes its prepared
row, a trace seen before is rebuilt from all of its stored spans, so spans of one trace may
arrive over several requests. The per-task summary the cuts report reads moves in the same
transaction (``trace_stats``). A trace without a row stays raw: kept and counted, its reason
(``ingest.unbuilt``: no GenAI attribute, no message content, merged) in its ``task`` column and
in the reply. Each call of a conversation without a parent span is a trace of its own: a trace
whose row is a truncated copy of another trace's row is merged into it (``trace_joins``), in
one request or across requests in either order; traces whose spans name one conversation are
joined into one row even when neither is a copy (``conversations``). The agent is the trace's
``gen_ai.agent.name`` (span or resource attribute); an agent exists from its first trace.
"""

from __future__ import annotations

import json
import operator
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import sqlalchemy as sa

from whileai.rows.source import task_key
from whileai.server.services import Account, Store, conversations, trace_joins, trace_stats
from whileai.server.services.otlp import Incoming
from whileai.server.services.trace_reads import STORED_COLUMNS, stored_span
from whileai.server.store.dialect import insert_absent, insert_many, insert_new, upsert
from whileai.server.store.tables import agents
from whileai.server.store.trace_tables import trace_spans, traces
from whileai.simulations.ingest.otel import CONVERSATION_ID, SCENARIO_KEYS, is_genai, read_otel
from whileai.simulations.ingest.otlp import Span, decode_spans
from whileai.simulations.ingest.unbuilt import explain

__all__ = ["ingest"]

AGENT_KEY = "gen_ai.agent.name"
MAX_AGENT = 200  # the characters an agent's name may hold (the agents and traces tables)
_HEX = "0123456789abcdefABCDEF"
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16  # the OTLP invalid ids


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _compact_encoder() -> Callable[[Any], str]:
    """Compact JSON (what ``json.dumps`` with ``(",", ":")`` separators writes), calling the C
    encoder made once: ``JSONEncoder.encode`` makes a new one per call, about 1 µs a span."""
    if c_make_encoder is None:
        return json.JSONEncoder(separators=(",", ":")).encode
    encode = c_make_encoder(None, _not_json, encode_basestring_ascii, None, ":", ",", False,
                            False, True)
    return lambda value: "".join(encode(value, 0))


_compact = _compact_encoder()
_TURN = threading.Lock()  # one export request at a time: see ``ingest``


def _valid_id(value: Any, length: int) -> bool:
    """A hex id of ``length`` digits that is not all zeros (the OTLP invalid id)."""
    return (isinstance(value, str) and len(value) == length and value.strip("0") != ""
            and not value.strip(_HEX))  # only hex digits: nothing is left once they are stripped


@dataclass(slots=True)
class _Prepared:
    """A request made ready outside the write transaction: the span rows to insert, the decoded
    spans of each trace, and each trace's ``traces`` record as if the trace were new."""

    lines: list[dict[str, Any]]
    spans: dict[tuple[str, str], Span]  # (trace id, span id) -> the first of a batch's repeats
    by_trace: dict[str, list[Span]]
    records: dict[str, dict[str, Any]]
    agent_of: dict[str, str]  # trace id -> the agent its first span naming one names
    agents: set[str]
    valid: int
    rejected: int
    problems: list[str]


def _prepare(account: Account, received: Sequence[Incoming], now: float) -> _Prepared:
    """Validate the spans, encode their bodies and build every trace's record as if it were
    first seen in this request (the usual case), all without touching the database."""
    lines: list[dict[str, Any]] = []
    spans: dict[tuple[str, str], Span] = {}
    by_trace: dict[str, list[Span]] = {}
    agent_of: dict[str, str] = {}
    agents_seen: set[str] = set()
    rejected = n_valid = 0
    problems: list[str] = []
    account_id = account.id
    for item in received:
        body, span = item.body, item.span
        trace_id: Any
        span_id: Any
        if body is None:  # protobuf: the ids are lowercase hex of their bytes already
            trace_id, span_id = span.trace_id, span.span_id
            ok = (len(trace_id) == 32 and len(span_id) == 16
                  and trace_id != _ZERO_TRACE and span_id != _ZERO_SPAN)
        else:
            trace_id, span_id = body.get("traceId"), body.get("spanId")
            ok = _valid_id(trace_id, 32) and _valid_id(span_id, 16)
        if not ok:
            rejected += 1
            if len(problems) < 3:
                problems.append(f"span {span.name if body is None else body.get('name')!r} has "
                                "no valid traceId/spanId")
            continue
        n_valid += 1
        span_id, trace_id = str(span_id).lower(), str(trace_id).lower()
        if (trace_id, span_id) in spans:
            continue  # a repeat inside the batch: a duplicate, as a repeat across batches is
        agent = span.attributes.get(AGENT_KEY) or item.resource.get(AGENT_KEY)
        if agent and len(str(agent)) > MAX_AGENT:  # more than an agent's name can hold
            n_valid -= 1
            rejected += 1
            if len(problems) < 3:
                problems.append(f"span {span_id!r}: {AGENT_KEY} is longer than {MAX_AGENT} "
                                "characters")
            continue
        if agent:
            agent = str(agent)
            agents_seen.add(agent)
            agent_of.setdefault(trace_id, agent)
        spans[trace_id, span_id] = span
        by_trace.setdefault(trace_id, []).append(span)
        if body is not None:
            del body["traceId"], body["spanId"]  # kept once, in their columns (``stored_span``)
        lines.append({"account_id": account_id, "span_id": span_id, "trace_id": trace_id,
                      "body": "" if body is None else _compact(body), "proto": item.proto,
                      "agent": agent or None, "received_at": now})
    genai = {t: group for t, group in by_trace.items() if is_genai(group)}
    rows = _rows(genai)
    records = {t: _record(account, t, group, agent_of.get(t), rows.get(t), now)
               for t, group in by_trace.items()}
    return _Prepared(lines=lines, spans=spans, by_trace=by_trace, records=records,
                     agent_of=agent_of, agents=agents_seen, valid=n_valid, rejected=rejected,
                     problems=problems)


def ingest(store: Store, account: Account,
           received: Callable[[], Sequence[Incoming]]) -> dict[str, Any]:
    """Decode (``received()``) and store one export request; returns counts and the
    partial-success message.

    Requests are served one at a time in this process, in the order they queue (``_TURN``).
    Decoding and building rows is Python, one core however many threads share it, and SQLite
    takes one writer at a time anyway (a thread queued on a lock starts the moment it is free,
    where SQLite's busy handler sleeps in steps of up to 100 ms). Served side by side, two
    requests finished together and both senders then encoded their next batch while the server
    sat idle; in turn, each response goes back as soon as its request is stored and its sender's
    next batch is encoded while the server works on the other (CHANGELOG.md, 2026-12-02).
    """
    with _TURN:
        now = time.time()
        ready = _prepare(account, received(), now)
        with store.engine.begin() as conn:
            before = trace_stats.states(conn, account.id, sorted(ready.by_trace))
            fresh = {key[1:] for key in _insert_spans(conn, ready.lines, before)}
            batch: dict[str, list[Span]] = {}
            for key, span in ready.spans.items():  # in the order received
                if key in fresh:
                    batch.setdefault(key[0], []).append(span)
            built, raw = _rebuild(conn, account, batch, before, ready, now)
            for agent in sorted(ready.agents):
                _touch_agent(conn, account, agent, now)
    problems, rejected = ready.problems, ready.rejected
    message = "; ".join(problems) + (f" (and {rejected - len(problems)} more)"
                                     if rejected > len(problems) else "")
    if raw:
        message = "; ".join(m for m in (message, explain(raw)) if m)
    return {"accepted": len(fresh), "duplicates": ready.valid - len(fresh),
            "rejected": rejected, "message": message, "traces": len(batch), "genai": built,
            "raw": raw}


_by_trace = operator.itemgetter("trace_id")


def _insert_spans(conn: sa.Connection, lines: Sequence[dict[str, Any]],
                  stored: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Insert the spans not stored yet; return the keys of those inserted.

    On SQLite (one writer at a time) a trace with no ``traces`` row yet has no stored span
    either (both are written in one transaction), so its spans go straight in; only the spans
    of traces seen before are looked up. PostgreSQL's writers run side by side: every span goes
    through ``insert_absent``.
    """
    if conn.dialect.name != "sqlite":
        return insert_absent(conn, trace_spans, lines)
    new = [line for line in lines if line["trace_id"] not in stored]
    # In key order the index is written page after page instead of all over; the sort is
    # stable, so a trace's spans keep the order they came in (rowid is the arrival tie-break).
    new.sort(key=_by_trace)
    insert_many(conn, trace_spans, new)
    seen = insert_absent(conn, trace_spans, [line for line in lines if line["trace_id"] in stored])
    return [(line["account_id"], line["trace_id"], line["span_id"]) for line in new] + seen


def _touch_agent(conn: sa.Connection, account: Account, name: str, now: float) -> None:
    insert_new(conn, agents, [{"id": "agt_" + secrets.token_hex(8), "account_id": account.id,
                               "name": name, "created_at": now, "updated_at": now}])


def _stored_spans(conn: sa.Connection, account: Account, trace_ids: Sequence[str],
                  agent_of: dict[str, str]) -> dict[str, list[Span]]:
    """All stored spans of ``trace_ids`` (this transaction's included), in the order stored;
    ``agent_of`` gets each trace's agent as its stored spans name it."""
    bodies: dict[str, list[dict[str, Any]]] = {t: [] for t in trace_ids}
    agents: dict[str, str] = {}
    # The key orders a trace's spans by span id; the order they arrived in is the tie-break
    # ``read_otel`` falls back on when times are missing or equal.
    arrival = ([sa.literal_column("rowid")] if conn.dialect.name == "sqlite"
               else [trace_spans.c.received_at, sa.literal_column("ctid")])
    for chunk in range(0, len(trace_ids), 500):
        for stored in conn.execute(
                sa.select(*STORED_COLUMNS).where(
                    trace_spans.c.account_id == account.id,
                    trace_spans.c.trace_id.in_(trace_ids[chunk:chunk + 500]))
                .order_by(*arrival)):
            body, agent = stored_span(*stored)
            bodies[stored.trace_id].append(body)
            if agent:
                agents.setdefault(stored.trace_id, agent)
    for trace_id in bodies:
        if trace_id in agents:
            agent_of[trace_id] = agents[trace_id]
        else:
            agent_of.pop(trace_id, None)
    return {trace_id: decode_spans(found)[0] for trace_id, found in bodies.items()}


def _rows(groups: Mapping[str, Sequence[Span]]) -> dict[str, dict[str, Any]]:
    """The conversation row of each trace (``read_otel``'s first); traces without one are left
    out. One ``read_otel`` over all of them when no span names a conversation (then its groups
    are the traces), else one per trace, so a conversation never spans two traces' rows."""
    if any(CONVERSATION_ID in s.attributes for group in groups.values() for s in group):
        return {trace_id: dict(rows[0]) for trace_id, group in groups.items()
                if (rows := read_otel(group, merge=False).rows)}
    rows = read_otel([s for group in groups.values() for s in group], merge=False).rows
    return {row["lineage"]["group"]: dict(row) for row in rows}


def _rebuild(conn: sa.Connection, account: Account, batch: Mapping[str, list[Span]],
             stored: Mapping[str, trace_stats.TraceState], ready: _Prepared,
             now: float) -> tuple[int, dict[str, int]]:
    """Store the row of every trace the batch added spans to, and move the summary.

    A trace first seen in this batch takes the record prepared before the transaction when all
    of its spans went in (else it is built from those that did); a trace seen before is built
    from all of its stored spans.
    """
    if not batch:
        return 0, {}
    agent_of = ready.agent_of
    before = {t: stored[t] for t in sorted(batch) if t in stored}
    records = {t: ready.records[t] for t, group in batch.items()
               if t not in before and len(group) == len(ready.by_trace[t])}
    spans = {t: group for t, group in batch.items() if t not in records}
    spans.update(_stored_spans(conn, account, sorted(before), agent_of))
    genai_ids = [t for t in spans if is_genai(spans[t])]
    rows = _rows({t: spans[t] for t in genai_ids if t not in before})
    for trace_id in genai_ids:
        if trace_id in before and (found := read_otel(spans[trace_id], merge=False).rows):
            rows[trace_id] = dict(found[0])
    for trace_id in spans:
        records[trace_id] = _record(account, trace_id, spans[trace_id], agent_of.get(trace_id),
                                    rows.get(trace_id), now)
    trace_joins.keep_absorbed(conn, account, records, set(before), encode=_compact)
    before = {**before, **trace_joins.join(conn, account, records, now, encode=_compact)}

    def spans_of(ids: Sequence[str]) -> dict[str, Sequence[Span]]:
        have: dict[str, Sequence[Span]] = {t: spans.get(t) or ready.by_trace[t]
                                           for t in ids if t in spans or t in ready.by_trace}
        return {**have, **_stored_spans(conn, account, [t for t in ids if t not in have],
                                        agent_of)}

    def build(trace_id: str, group: Sequence[Span], row: dict[str, Any]) -> dict[str, Any]:
        return _record(account, trace_id, group, records[trace_id]["agent"], row, now)

    for trace_id, state in conversations.join(conn, account, records, spans_of, build,
                                              now).items():
        before.setdefault(trace_id, state)
    after, genai, raw = [], 0, Counter[str]()
    for trace_id in sorted(records):
        record = records[trace_id]
        old = before.get(trace_id)
        after.append(trace_stats.TraceState(agent=record["agent"], genai=record["genai"],
                                            task=record["task"],
                                            score=old.score if old else None))
        genai += record["genai"]
        if not record["genai"]:  # of this request, or stored and merged into one of it
            raw[record["task"]] += 1
    upsert(conn, traces, [r for t, r in sorted(records.items()) if t in before],
           keys=("account_id", "trace_id"),
           update=("agent", "genai", "spans", "scenario", "task", "model", "row", "updated_at",
                   "conversation"),
           absent=[r for t, r in sorted(records.items()) if t not in before])
    trace_stats.apply(conn, account.id, before.values(), after)
    return genai, dict(raw)


def _record(account: Account, trace_id: str, spans: Sequence[Span], agent: str | None,
            row: dict[str, Any] | None, now: float) -> dict[str, Any]:
    """The ``traces`` row of one trace: its conversation row when it is GenAI and has one."""
    scenario = next((str(s.attributes[k]) for s in spans for k in SCENARIO_KEYS
                     if s.attributes.get(k)), None)
    reason = "without_content" if row is None and is_genai(spans) else "not_genai"
    return {"account_id": account.id, "trace_id": trace_id, "agent": agent,
            "genai": row is not None, "spans": len(spans), "scenario": scenario,
            "task": (task_key(row) or trace_id) if row is not None else reason,
            "model": str(row["model_version"])[:300] if row and row.get("model_version")
            else None,  # an index column: the row keeps the whole text
            "row": _compact(row) if row is not None else None,
            "created_at": now, "updated_at": now,
            "conversation": conversations.conversation_of(spans)}
