"""The rules of the platform: ownership, quotas, lineage, profiles. Every call is scoped by the
account the route authenticated; nothing here trusts an account id from the caller."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import sqlalchemy as sa

from whileai.server.config import ServerConfig

__all__ = ["Account", "Capability", "Kind", "Store"]


class Capability(str, Enum):
    """What a route needs (``services.access`` decides who has it)."""

    READ = "read"
    WRITE = "write"
    KEYS = "keys"  # mint or revoke API keys of one's own account
    ADMIN = "admin"  # mint keys for any account


class Kind(str, Enum):
    """How the caller authenticated."""

    KEY = "key"  # an API key, wai_...
    DELEGATED = "delegated"  # a short-lived credential signed by the server, wdc_...
    SESSION = "session"  # the pages' sign-in cookie, wps_...


@dataclass(frozen=True, slots=True, kw_only=True)
class Store:
    """What a service needs: the engine, the server settings and the signing key."""

    engine: sa.Engine
    config: ServerConfig
    secret: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Account:
    """The authenticated caller.

    Attributes:
        key_id: the API key it used, or that issued its delegated credential or page session.
        kind: how it authenticated (key, delegated credential, page session).
        scope: what its credential allows at most (a delegated credential may be read-only).
        expires_at: when its credential expires (None: an API key, valid until revoked).
    """

    id: str
    name: str
    tier: str
    is_admin: bool = False
    key_id: str | None = None
    kind: Kind = Kind.KEY
    scope: tuple[Capability, ...] = tuple(Capability)
    expires_at: float | None = None

    @property
    def delegated(self) -> bool:
        """It came with a short-lived credential (delegated or page session), not a key."""
        return self.kind is not Kind.KEY
