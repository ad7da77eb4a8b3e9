"""API keys can be revoked: ``api_keys.revoked_at`` (NULL while the key works).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the revocation time to every key (existing keys stay valid)."""
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("revoked_at", sa.Float, nullable=True))


def downgrade() -> None:
    """Drop the column again."""
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("revoked_at")
