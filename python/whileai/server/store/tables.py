"""The metadata tables (SQLAlchemy Core); the migrations in ``server/migrations`` create them.

Timestamps are epoch seconds (floats) so SQLite and PostgreSQL order them the same way; JSON
values are stored as text. ``seq`` gives every dataset a strictly increasing number for
"newest first" ordering.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["accounts", "agents", "api_keys", "datasets", "metadata", "parts", "settings"]

metadata = sa.MetaData()

accounts = sa.Table(
    "accounts", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("email", sa.String(320), nullable=True),
    sa.Column("tier", sa.String(40), nullable=False),
    sa.Column("is_admin", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

api_keys = sa.Table(
    "api_keys", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),  # set once; a revoked key is refused
)

agents = sa.Table(
    "agents", metadata,
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

datasets = sa.Table(
    "datasets", metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(40), nullable=False, unique=True),
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False,
              index=True),
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

parts = sa.Table(
    "parts", metadata,
    sa.Column("dataset_id", sa.String(40), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("path", sa.String(300), nullable=False),
    sa.Column("rows", sa.BigInteger, nullable=False),
    sa.Column("bytes", sa.BigInteger, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
)

settings = sa.Table(
    "settings", metadata,
    sa.Column("key", sa.String(100), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
