"""Traces: spans as received, one row per trace, scores.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the trace tables."""
    op.create_table(
        "trace_spans",
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("span_id", sa.String(64), primary_key=True),
        sa.Column("trace_id", sa.String(64), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("received_at", sa.Float, nullable=False),
    )
    op.create_index("ix_trace_spans_trace", "trace_spans", ["account_id", "trace_id"])
    op.create_table(
        "traces",
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
        sa.UniqueConstraint("account_id", "trace_id", name="uq_traces_account_trace"),
    )
    op.create_index("ix_traces_account_agent", "traces", ["account_id", "agent"])
    op.create_index("ix_traces_cuts", "traces",
                    ["account_id", "genai", "agent", "task", "score"])
    op.create_table(
        "trace_scores",
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("trace_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("fields", sa.Text, nullable=True),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    """Drop the trace tables."""
    op.drop_table("trace_scores")
    op.drop_index("ix_traces_cuts", table_name="traces")
    op.drop_index("ix_traces_account_agent", table_name="traces")
    op.drop_table("traces")
    op.drop_index("ix_trace_spans_trace", table_name="trace_spans")
    op.drop_table("trace_spans")
