"""``traces.conversation``: the conversation id a trace's spans name, to join its traces.

Without a parent span each model call of a conversation is a trace of its own; when the spans
name their conversation (``gen_ai.conversation.id``, or ``session.id`` read as it), the receiver
now builds one row from every trace of it (``services.conversations``). Traces stored before
keep NULL: they are joined when their conversation next receives spans only if those name it.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the column and the index that finds a conversation's traces."""
    with op.batch_alter_table("traces") as batch:
        batch.add_column(sa.Column("conversation", sa.String(300), nullable=True))
    op.create_index("ix_traces_account_conversation", "traces", ["account_id", "conversation"])


def downgrade() -> None:
    """Drop them again (the joined rows stay as they are)."""
    op.drop_index("ix_traces_account_conversation", table_name="traces")
    with op.batch_alter_table("traces") as batch:
        batch.drop_column("conversation")
