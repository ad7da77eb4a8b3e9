"""Page sessions: signing in to the pages opens one, signing out revokes it on the server.

A session token is ``wps_`` plus 43 random characters, sent only as the pages' cookie (the API
refuses it as a bearer credential); only its SHA-256 is stored. It dies at its expiry, at
sign-out, or when the API key it was opened with is revoked, whichever comes first; a new
sign-in deletes the account's sessions that ended a day before or more.
"""

from __future__ import annotations

import hashlib
import secrets
import time

import sqlalchemy as sa

from whileai.server.services import Account, Kind, Store
from whileai.server.services.accounts import SESSION_PREFIX
from whileai.server.services.problems import Forbidden, RefusedCredential
from whileai.server.store.db import reading
from whileai.server.store.session_tables import page_sessions
from whileai.server.store.tables import accounts, api_keys

__all__ = ["SESSION_TTL", "close_session", "open_session", "session_account"]

SESSION_TTL = 12 * 3600


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def open_session(store: Store, account: Account, *, ttl_seconds: int = SESSION_TTL) -> str:
    """A new session token for ``account``, which signed in with an API key.

    Raises:
        Forbidden: when ``account`` came with anything but an API key.
    """
    if account.kind is not Kind.KEY or account.key_id is None:
        raise Forbidden("sign in to the pages with an API key (wai_...)")
    token = SESSION_PREFIX + secrets.token_urlsafe(32)
    now = time.time()
    with store.engine.begin() as conn:
        # the account's sessions that ended a day ago or more go, so the table stays small
        conn.execute(sa.delete(page_sessions).where(
            page_sessions.c.account_id == account.id,
            sa.func.coalesce(page_sessions.c.revoked_at, page_sessions.c.expires_at)
            < now - 86400))
        conn.execute(sa.insert(page_sessions).values(
            id="ses_" + secrets.token_hex(8), token_hash=_hash(token), account_id=account.id,
            key_id=account.key_id, created_at=now, expires_at=now + ttl_seconds))
    return token


def close_session(store: Store, token: str) -> bool:
    """Revoke the session behind ``token``; whether one was open (twice is no error)."""
    with store.engine.begin() as conn:
        done = conn.execute(sa.update(page_sessions).where(
            page_sessions.c.token_hash == _hash(token), page_sessions.c.revoked_at.is_(None))
            .values(revoked_at=time.time()))
    return bool(done.rowcount)


def session_account(store: Store, token: str) -> Account:
    """The account of an open session.

    Raises:
        RefusedCredential: for an unknown, expired, signed-out session or one whose
            API key was revoked.
    """
    if not token.startswith(SESSION_PREFIX):
        raise RefusedCredential("not a page session; sign in again")
    with reading(store.engine) as conn:
        row = conn.execute(
            sa.select(accounts, page_sessions.c.key_id, page_sessions.c.expires_at,
                      page_sessions.c.revoked_at, api_keys.c.revoked_at.label("key_revoked"))
            .join(page_sessions, page_sessions.c.account_id == accounts.c.id)
            .join(api_keys, api_keys.c.id == page_sessions.c.key_id)
            .where(page_sessions.c.token_hash == _hash(token))).first()
    if (row is None or row.revoked_at is not None or row.key_revoked is not None
            or row.expires_at <= time.time()):
        raise RefusedCredential("the page session is over; sign in again")
    return Account(id=row.id, name=row.name, tier=row.tier, is_admin=bool(row.is_admin),
                   key_id=row.key_id, kind=Kind.SESSION, expires_at=row.expires_at)
