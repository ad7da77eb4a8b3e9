"""Accounts, keys, agents, datasets and their parts, settings.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the first schema."""
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("tier", sa.String(40), nullable=False),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "agents",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("tools", sa.Text, nullable=True),
        sa.Column("system_prompt", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.UniqueConstraint("account_id", "name", name="uq_agents_account_name"),
    )
    op.create_table(
        "datasets",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(40), nullable=False, unique=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("purpose", sa.String(20), nullable=False),
        sa.Column("mode", sa.String(40), nullable=True),
        sa.Column("agent", sa.String(200), nullable=True),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("parent_id", sa.String(40), nullable=True),
        sa.Column("linked_id", sa.String(40), nullable=True),
        sa.Column("rows", sa.BigInteger, nullable=False),
        sa.Column("bytes", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("public", sa.Boolean, nullable=False),
        sa.Column("card_agent", sa.String(200), nullable=True),
        sa.Column("card_description", sa.Text, nullable=True),
        sa.Column("published_at", sa.Float, nullable=True),
        sa.Column("profile", sa.Text, nullable=True),
        sa.Column("profile_version", sa.Integer, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_datasets_account_id", "datasets", ["account_id"])
    op.create_table(
        "parts",
        sa.Column("dataset_id", sa.String(40), sa.ForeignKey("datasets.id"), primary_key=True),
        sa.Column("idx", sa.Integer, primary_key=True),
        sa.Column("path", sa.String(300), nullable=False),
        sa.Column("rows", sa.BigInteger, nullable=False),
        sa.Column("bytes", sa.BigInteger, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
    )
    op.create_table(
        "settings",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    """Drop everything (tests only)."""
    for table in ("settings", "parts", "datasets", "agents", "api_keys", "accounts"):
        op.drop_table(table)
