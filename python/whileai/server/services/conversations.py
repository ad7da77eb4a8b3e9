"""One row per conversation, across the traces of it that the receiver keeps.

Without a parent span each model call of a conversation is a trace of its own, and the traces
need not be prefixes of one another (a second question in the same session, say). When the
spans name their conversation (``gen_ai.conversation.id``; ``ingest.conventions`` reads
``session.id`` as it), the trace's ``conversation`` column keeps it, and :func:`join` reads
every trace of the conversation again together with ``ingest.otel.read_otel``: the grouping
``rows_from_otel`` does offline, so the server's row is the offline one. The row goes to the
trace with the lowest id (the row's ``trace_id``, as offline); the other traces stay raw under
``merged``, their own rows kept to show, and the row names them in ``lineage.merged``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, trace_stats
from whileai.server.services.trace_joins import mark_merged
from whileai.server.store.trace_tables import traces
from whileai.simulations.ingest.otel import CONVERSATION_ID, read_otel
from whileai.simulations.ingest.otlp import Span

__all__ = ["MAX_CONVERSATION", "conversation_of", "join"]

MAX_CONVERSATION = 300  # the characters the ``traces.conversation`` column holds

SpansOf = Callable[[Sequence[str]], Mapping[str, Sequence[Span]]]
Build = Callable[[str, Sequence[Span], dict[str, Any]], dict[str, Any]]


def _arrival(span: Span) -> int:
    return span.index


def conversation_of(spans: Sequence[Span]) -> str | None:
    """The conversation id the first span naming one names (``None`` when none does, or when
    it is longer than the column holds: such a trace is not joined)."""
    found = next((str(s.attributes[CONVERSATION_ID]) for s in spans
                  if s.attributes.get(CONVERSATION_ID)), None)
    return found if found is not None and len(found) <= MAX_CONVERSATION else None


def join(conn: sa.Connection, account: Account, records: dict[str, dict[str, Any]],
         spans_of: SpansOf, build: Build, now: float) -> dict[str, trace_stats.TraceState]:
    """Give each conversation of ``records`` with two traces or more its one row.

    ``records`` are the ``traces`` records of this batch; the stored traces of the same
    conversations join them (and are returned with their states before the change, for the
    summary). ``spans_of`` gives every span of the traces named; ``build(trace_id, spans, row)``
    the record of a trace that carries ``row``.
    """
    wanted = sorted({r["conversation"] for r in records.values() if r.get("conversation")})
    if not wanted:
        return {}
    members: dict[str, set[str]] = {}
    for trace_id, record in records.items():
        if record.get("conversation"):
            members.setdefault(record["conversation"], set()).add(trace_id)
    stored = conn.execute(sa.select(traces).where(
        traces.c.account_id == account.id, traces.c.conversation.in_(wanted),
        traces.c.trace_id.notin_(sorted(records)))).all()
    for found in stored:
        members.setdefault(found.conversation, set()).add(found.trace_id)
    joined = {c: sorted(ids) for c, ids in members.items() if len(ids) > 1}
    if not joined:
        return {}
    changed: dict[str, trace_stats.TraceState] = {}
    for found in stored:
        if found.conversation in joined:
            changed[found.trace_id] = trace_stats.TraceState(
                agent=found.agent, genai=bool(found.genai), task=found.task, score=found.score)
            record = dict(found._mapping)
            record.pop("seq", None)  # and the score, which stays: not a record field
            record.pop("score", None)
            records[found.trace_id] = record
    spans = spans_of(sorted(t for ids in joined.values() for t in ids))
    for conversation, ids in joined.items():
        # One numbering across the traces, as one export's spans have (``index`` orders a
        # trace's spans that share a time; each trace was decoded on its own).
        group = [span._replace(index=i) for i, span in enumerate(
            span for t in ids for span in sorted(spans[t], key=_arrival))]
        rows = read_otel(group, merge=False).rows
        row = next((dict(r) for r in rows if r["lineage"]["group"] == conversation), None)
        if row is None:  # no content in any of them: each stays as it is
            continue
        lead, others = ids[0], ids[1:]
        row["lineage"] = {**row["lineage"], "merged": others}
        kept = records[lead]
        records[lead] = {**build(lead, spans[lead], row), "spans": kept["spans"],
                         "created_at": kept["created_at"]}
        for trace_id in others:
            mark_merged(records[trace_id], now)
    return changed
