"""Run ids belong to their account: ``runs.run_id`` (the id the client chose), unique per account.

``runs.id`` was both the client's id and the key of every point and event, unique across the
server, so a client choosing an id another account had taken learned that it existed (409).
Now ``run_id`` holds the client's id, unique within its account only, and ``id`` is the
internal key: the same text for runs made before this migration, a digest of the account and
the client's id for new ones (``services.runs.run_key``), so two accounts may use one id.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``run_id`` (filled with each run's id) and its per-account uniqueness."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("run_id", sa.String(40), nullable=True))
    op.execute("UPDATE runs SET run_id = id")
    with op.batch_alter_table("runs") as batch:
        batch.alter_column("run_id", existing_type=sa.String(40), nullable=False)
        batch.create_unique_constraint("uq_runs_account_run", ["account_id", "run_id"])


def downgrade() -> None:
    """Drop ``run_id`` (runs made since keep their internal key as their id)."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("uq_runs_account_run", type_="unique")
        batch.drop_column("run_id")
