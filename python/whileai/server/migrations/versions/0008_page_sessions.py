"""Page sessions kept server-side so sign-out revokes them: ``page_sessions``.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the table (cookies of older servers were delegated credentials: refused now,
    so everyone signs in once more)."""
    op.create_table(
        "page_sessions",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("key_id", sa.String(40), sa.ForeignKey("api_keys.id"), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float, nullable=True),
    )


def downgrade() -> None:
    """Drop it again."""
    op.drop_table("page_sessions")
