"""Spans keyed by ``(account, trace id, span id)``, one index instead of two.

The spans were keyed by ``(account, span id)`` with a second index on ``(account, trace id)``:
every span written went into two indexes at a random place each (span ids are random), so a
batch dirtied about two index pages a span, which SQLite wrote to its log at each commit. Keyed
by trace first, the spans of a trace sit together in the one index that both finds a trace's
spans and keeps a re-sent span out; a batch dirties about one page a trace, and ingest spends
about half as long in SQLite. A span is now identified within its trace (as OTLP defines span
ids); a re-sent span still stores nothing twice.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_COLUMNS = "account_id, span_id, trace_id, body, received_at"


def _spans_table(name: str, key: tuple[str, ...], key_name: str) -> None:
    op.create_table(
        name,
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("span_id", sa.String(64), nullable=False),
        sa.Column("trace_id", sa.String(64), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("received_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint(*key, name=key_name),
    )


def _replace(key: tuple[str, ...], key_name: str, *, skip_repeats: bool) -> None:
    """Copy the spans into a table with primary key ``key`` and put it in the old one's place."""
    _spans_table("trace_spans_next", key, key_name)
    repeats = " WHERE true ON CONFLICT DO NOTHING" if skip_repeats else ""
    op.execute(f"INSERT INTO trace_spans_next ({_COLUMNS}) SELECT {_COLUMNS} FROM trace_spans"
               f"{repeats}")
    op.drop_table("trace_spans")
    op.rename_table("trace_spans_next", "trace_spans")


def upgrade() -> None:
    """Rebuild ``trace_spans`` keyed by trace, then span (every stored span is kept)."""
    op.drop_index("ix_trace_spans_trace", table_name="trace_spans")
    _replace(("account_id", "trace_id", "span_id"), "pk_trace_spans", skip_repeats=False)


def downgrade() -> None:
    """Key by span id again (a span id stored under two traces keeps one of them)."""
    _replace(("account_id", "span_id"), "trace_spans_pkey", skip_repeats=True)
    op.create_index("ix_trace_spans_trace", "trace_spans", ["account_id", "trace_id"])
