"""Training runs: runs, their points and their events.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the run tables."""
    op.create_table(
        "runs",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(40), nullable=False, unique=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("dataset_id", sa.String(300), nullable=True),
        sa.Column("holdout_id", sa.String(300), nullable=True),
        sa.Column("base_model", sa.String(300), nullable=True),
        sa.Column("trainer", sa.String(100), nullable=True),
        sa.Column("total_steps", sa.Integer, nullable=True),
        sa.Column("config", sa.Text, nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("summary", sa.Text, nullable=True),
        sa.Column("adapter", sa.Text, nullable=True),
        sa.Column("holdout_result", sa.Text, nullable=True),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("last_step", sa.Integer, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float, nullable=True),
    )
    op.create_index("ix_runs_account_id", "runs", ["account_id"])
    op.create_table(
        "run_points",
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("time", sa.Float, nullable=True),
        sa.Column("metrics", sa.Text, nullable=False),
    )
    op.create_table(
        "run_events",
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("step", sa.Integer, nullable=True),
        sa.Column("time", sa.Float, nullable=True),
        sa.Column("body", sa.Text, nullable=False),
    )


def downgrade() -> None:
    """Drop the run tables."""
    op.drop_table("run_events")
    op.drop_table("run_points")
    op.drop_index("ix_runs_account_id", table_name="runs")
    op.drop_table("runs")
