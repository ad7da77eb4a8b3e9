"""The pages' sign-in sessions (migration 0008): one row per sign-in, revoked at sign-out.

The cookie holds ``wps_`` plus random characters; only its SHA-256 is kept. A session is bound
to the API key it was opened with, so revoking the key ends it too.
"""

from __future__ import annotations

import sqlalchemy as sa

from whileai.server.store.tables import metadata

__all__ = ["page_sessions"]

page_sessions = sa.Table(
    "page_sessions", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("key_id", sa.String(40), sa.ForeignKey("api_keys.id"), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),  # set at sign-out
)
