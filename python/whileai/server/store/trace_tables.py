"""The tables of traces (migration 0003): spans as received, one row per trace, scores; and
(migration 0004) the per-task summary the cuts report and the traces page read.

A span is identified by ``(account, trace id, span id)`` (migration 0006), so a re-sent batch
stores nothing twice; a protobuf span is kept as its bytes (migration 0007). A trace with GenAI
spans gets its conversation row, its ``task`` (the row's task key: what cuts group runs by) and
the value of its ``score`` (kept beside the row so cuts never read rows); other traces keep their
spans raw and are only counted.
"""

from __future__ import annotations

import sqlalchemy as sa

from whileai.server.store.tables import metadata

__all__ = ["trace_scores", "trace_spans", "trace_task_stats", "traces"]

# Keyed by trace, then span (migration 0006): the one index finds a trace's spans and keeps a
# re-sent span out, and the spans of a trace sit together in it.
trace_spans = sa.Table(
    "trace_spans", metadata,
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("span_id", sa.String(64), nullable=False),
    sa.Column("trace_id", sa.String(64), nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # OTLP/JSON; "" when ``proto`` holds the span
    sa.Column("received_at", sa.Float, nullable=False),
    # Migration 0007: a protobuf span's bytes as received, and the agent the span names.
    sa.Column("proto", sa.LargeBinary, nullable=True),
    sa.Column("agent", sa.String(200), nullable=True),
    sa.PrimaryKeyConstraint("account_id", "trace_id", "span_id", name="pk_trace_spans"),
)

traces = sa.Table(
    "traces", metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("trace_id", sa.String(64), nullable=False),
    sa.Column("agent", sa.String(200), nullable=True),
    sa.Column("genai", sa.Boolean, nullable=False),
    sa.Column("spans", sa.Integer, nullable=False),
    sa.Column("scenario", sa.Text, nullable=True),
    sa.Column("task", sa.Text, nullable=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("model", sa.String(300), nullable=True),
    sa.Column("row", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    # Migration 0010: the conversation the spans name; its traces are joined into one row.
    sa.Column("conversation", sa.String(300), nullable=True),
    sa.UniqueConstraint("account_id", "trace_id", name="uq_traces_account_trace"),
    # The newest-first pages (migration 0004): a page reads its rows off the index, no sort.
    sa.Index("ix_traces_account_seq", "account_id", "seq"),
    sa.Index("ix_traces_account_agent_seq", "account_id", "agent", "seq"),
    # Covers the cuts query (counts and passes per task) without reading the rows.
    sa.Index("ix_traces_cuts", "account_id", "genai", "agent", "task", "score"),
    sa.Index("ix_traces_account_conversation", "account_id", "conversation"),
)

trace_scores = sa.Table(
    "trace_scores", metadata,
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), primary_key=True),
    sa.Column("trace_id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("value", sa.Float, nullable=False),
    sa.Column("fields", sa.Text, nullable=True),
    sa.Column("updated_at", sa.Float, nullable=False),
)

# Runs, scored runs and passes per (agent, task), kept up to date at ingest and at score time so
# the cuts report and the trace counts never scan the traces. ``agent`` is "" for a trace
# without one; raw (non-GenAI) traces are counted under ``genai`` false and task "".
trace_task_stats = sa.Table(
    "trace_task_stats", metadata,
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), primary_key=True),
    sa.Column("agent", sa.String(200), primary_key=True),
    sa.Column("genai", sa.Boolean, primary_key=True),
    sa.Column("task", sa.Text, primary_key=True),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.Column("scored", sa.Integer, nullable=False),
    sa.Column("passes", sa.Integer, nullable=False),
)
