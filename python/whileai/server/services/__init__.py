"""The rules of the platform: ownership, quotas, lineage, profiles. Every call is scoped by the
account the route authenticated; nothing here trusts an account id from the caller."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from whileai.server.config import ServerConfig

__all__ = ["Account", "Store"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Store:
    """What a service needs: the engine, the server settings and the signing key."""

    engine: sa.Engine
    config: ServerConfig
    secret: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Account:
    """The authenticated caller (``key_id``: the API key it used or that issued its delegated
    credential; ``delegated``: it came with a short-lived credential, not a key)."""

    id: str
    name: str
    tier: str
    is_admin: bool = False
    key_id: str | None = None
    delegated: bool = False
