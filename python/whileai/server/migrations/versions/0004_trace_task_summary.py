"""Traces: the per-task summary (runs, scored runs, passes), filled from the stored traces, and
indexes that serve the newest-first trace pages without sorting every trace.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``trace_task_stats``, count the traces already stored into it, index the pages."""
    op.create_table(
        "trace_task_stats",
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("agent", sa.String(200), primary_key=True),
        sa.Column("genai", sa.Boolean, primary_key=True),
        sa.Column("task", sa.Text, primary_key=True),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("scored", sa.Integer, nullable=False),
        sa.Column("passes", sa.Integer, nullable=False),
    )
    op.execute(
        "INSERT INTO trace_task_stats (account_id, agent, genai, task, runs, scored, passes) "
        "SELECT account_id, COALESCE(agent, ''), genai, "
        "CASE WHEN genai THEN COALESCE(task, '') ELSE '' END, COUNT(*), COUNT(score), "
        "SUM(CASE WHEN score >= 1.0 THEN 1 ELSE 0 END) FROM traces "
        "GROUP BY account_id, COALESCE(agent, ''), genai, "
        "CASE WHEN genai THEN COALESCE(task, '') ELSE '' END"
    )
    op.drop_index("ix_traces_account_agent", table_name="traces")
    op.create_index("ix_traces_account_seq", "traces", ["account_id", "seq"])
    op.create_index("ix_traces_account_agent_seq", "traces", ["account_id", "agent", "seq"])


def downgrade() -> None:
    """Drop the summary (the traces keep everything it was counted from) and the page indexes."""
    op.drop_index("ix_traces_account_agent_seq", table_name="traces")
    op.drop_index("ix_traces_account_seq", table_name="traces")
    op.create_index("ix_traces_account_agent", "traces", ["account_id", "agent"])
    op.drop_table("trace_task_stats")
