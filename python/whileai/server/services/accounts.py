"""Accounts, API keys (stored as SHA-256 hashes) and short-lived delegated credentials.

A key is ``wai_`` plus 43 random characters; only its hash is kept, so the key is shown once.
A revoked key keeps its row (``revoked_at``) and is refused from the next request on; the
account's other keys are untouched. A delegated credential is ``wdc_<payload>.<signature>``:
the account, the key that issued it, a name and an expiry, signed with the server's key
(HMAC-SHA256); it is refused after it expires or once its key is revoked. It also carries a
scope (read, or read and write); what it issues is capped by its own expiry and scope
(``access.capped``). Page sessions (``wps_``, ``services.sessions``) are not API credentials.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Capability, Kind, Store
from whileai.server.services.access import capped
from whileai.server.services.problems import (
    Conflict,
    Forbidden,
    Invalid,
    NoCredential,
    NotFound,
    RefusedCredential,
    SignupClosed,
)
from whileai.server.store.db import reading
from whileai.server.store.tables import accounts, api_keys, datasets

__all__ = [
    "account_info", "add_key", "authenticate", "create_key", "describe", "existing_account",
    "issue_delegated", "list_keys", "named_account", "refresh_delegated", "revoke_key",
    "signup", "usage_bytes",
]

KEY_PREFIX = "wai_"
DELEGATED_PREFIX = "wdc_"
SESSION_PREFIX = "wps_"
MAX_TTL = 7 * 24 * 3600
DELEGATED_SCOPE = (Capability.READ, Capability.WRITE)  # the widest a delegated credential gets
# Every refusal of an unknown key says this: a key belongs to the folder or database it was
# minted in (the commonest cause is a server started with another --dir or WHILEAI_HOME).
UNKNOWN_KEY = ("the API key was refused (unknown to this server; a key works only on the "
               "server folder or database it was minted in: check --dir, WHILEAI_SERVER_DIR, "
               "WHILEAI_HOME and WHILEAI_DATABASE_URL of the server)")


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _account(row: Any, key_id: str | None = None, **credential: Any) -> Account:
    return Account(id=row.id, name=row.name, tier=row.tier, is_admin=bool(row.is_admin),
                   key_id=key_id, **credential)


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def create_key(store: Store, account_name: str, *, key_name: str = "default",
               admin: bool = False, email: str | None = None) -> tuple[Account, str]:
    """Mint a key for ``account_name`` (created when new); return the account and the key.

    The account's ``key_id`` is the new key's id (``key_...``), the handle to revoke it by.
    """
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    key_id = "key_" + secrets.token_hex(8)
    now = time.time()
    with store.engine.begin() as conn:
        row = conn.execute(sa.select(accounts).where(accounts.c.name == account_name)).first()
        if row is None:
            account_id = "acct_" + secrets.token_hex(8)
            conn.execute(sa.insert(accounts).values(
                id=account_id, name=account_name, email=email, tier="self-hosted",
                is_admin=admin, created_at=now))
            row = conn.execute(sa.select(accounts).where(accounts.c.id == account_id)).one()
        elif admin and not row.is_admin:
            conn.execute(sa.update(accounts).where(accounts.c.id == row.id).values(is_admin=True))
            row = conn.execute(sa.select(accounts).where(accounts.c.id == row.id)).one()
        conn.execute(sa.insert(api_keys).values(
            id=key_id, account_id=row.id, name=key_name, key_hash=_hash(key), created_at=now))
    return _account(row, key_id), key


def existing_account(store: Store, name: str) -> dict[str, Any] | None:
    """Who owns account ``name`` when it exists: its id, how and when it was made, its keys."""
    with store.engine.connect() as conn:
        row = conn.execute(sa.select(accounts).where(accounts.c.name == name)).first()
        if row is None:
            return None
        active = conn.execute(sa.select(sa.func.count()).select_from(api_keys).where(
            api_keys.c.account_id == row.id, api_keys.c.revoked_at.is_(None))).scalar()
    return {"accountId": row.id, "name": row.name, "createdAt": row.created_at,
            "signup": row.email is not None, "admin": bool(row.is_admin),
            "activeKeys": int(active or 0)}


def describe(found: dict[str, Any]) -> str:
    """One sentence on whose an existing account is (for the confirmation of a new key).

    >>> print(describe({"accountId": "acct_1", "name": "n", "createdAt": 0.0,
    ...                 "signup": False, "admin": True, "activeKeys": 2}))
    account n (acct_1) exists: made by an admin at 1970-01-01 00:00:00 UTC, an admin, 2 active keys
    """
    when = _when(found["createdAt"])
    how = (f"by open sign-up at {when} (nobody checked that address)" if found["signup"]
           else f"by an admin at {when}")
    admin = ", an admin" if found["admin"] else ""
    return (f"account {found['name']} ({found['accountId']}) exists: made {how}{admin}, "
            f"{found['activeKeys']} active key{'' if found['activeKeys'] == 1 else 's'}")


def signup(store: Store, email: str) -> tuple[Account, str]:
    """Create an account for ``email`` with one key, when the server allows open sign-up."""
    if not store.config.open_signup:
        raise SignupClosed("this server does not allow sign-up; ask its admin "
                           "for a key (whileai serve --create-key NAME)")
    if "@" not in email or len(email) > 320:
        raise Invalid(f"not an e-mail address: {email!r}")
    with store.engine.connect() as conn:
        taken = conn.execute(sa.select(accounts.c.id).where(accounts.c.name == email)).first()
    if taken is not None:
        raise Conflict(f"an account for {email} exists already; log in with its key")
    return create_key(store, email, key_name="signup", email=email)


def _sign(store: Store, payload: bytes) -> str:
    digest = hmac.new(store.secret, payload, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _read_delegated(store: Store, token: str) -> dict[str, Any]:
    try:
        body, signature = token[len(DELEGATED_PREFIX):].split(".", 1)
        payload = _unb64(body)
    except ValueError as exc:
        raise RefusedCredential("the delegated credential is malformed") from exc
    if not hmac.compare_digest(_sign(store, payload), signature):
        raise RefusedCredential("the delegated credential was not signed by this server")
    try:
        claims: dict[str, Any] = json.loads(payload)
        float(claims["exp"])
    except (ValueError, KeyError, TypeError) as exc:  # signed, so only an older format
        raise RefusedCredential("the delegated credential is malformed") from exc
    if claims["exp"] <= time.time():
        raise RefusedCredential("the delegated credential has expired; refresh it or "
                                "issue a new one")
    return claims


def _key_row(conn: sa.Connection, column: Any, value: str) -> Any:
    return conn.execute(
        sa.select(accounts, api_keys.c.id.label("key_id"), api_keys.c.revoked_at)
        .join(api_keys, api_keys.c.account_id == accounts.c.id).where(column == value)).first()


def authenticate(store: Store, token: str | None) -> Account:
    """The account behind an API key or a delegated credential.

    Raises:
        NoCredential: no token; RefusedCredential: (unknown, revoked, expired,
            forged, or a delegated credential whose key was revoked).
    """
    if not token:
        raise NoCredential("this route needs an API key: Authorization: Bearer <key>")
    if token.startswith(SESSION_PREFIX):
        raise RefusedCredential("a page session works only as the pages' cookie; "
                                "send an API key or a delegated credential")
    credential: dict[str, Any] = {}
    if token.startswith(DELEGATED_PREFIX):
        claims = _read_delegated(store, token)
        with store.engine.connect() as conn:
            if "k" in claims:
                row = _key_row(conn, api_keys.c.id, str(claims["k"]))
            else:  # issued before keys could be revoked: bound to the account only
                row = conn.execute(sa.select(accounts, sa.null().label("key_id"),
                                             sa.null().label("revoked_at"))
                                   .where(accounts.c.id == claims["a"])).first()
        if row is not None and row.revoked_at is not None:
            raise RefusedCredential(f"the delegated credential was issued with API key "
                                    f"{row.key_id}, which was revoked at {_when(row.revoked_at)}")
        credential = {"kind": Kind.DELEGATED, "expires_at": float(claims["exp"]),
                      "scope": _scope(claims.get("c", [c.value for c in DELEGATED_SCOPE]))}
    else:  # every request passes here: a read that never waits for an ingest's write
        with reading(store.engine) as conn:
            row = _key_row(conn, api_keys.c.key_hash, _hash(token))
        if row is not None and row.revoked_at is not None:
            raise RefusedCredential(f"this API key ({row.key_id}) was revoked at "
                                    f"{_when(row.revoked_at)}; use another key of the account "
                                    "or ask its admin for a new one")
    if row is None:
        raise RefusedCredential(UNKNOWN_KEY)
    return _account(row, row.key_id, **credential)


def _scope(values: Any) -> tuple[Capability, ...]:
    """The scope a credential's claims name (unknown names grant nothing)."""
    names = {str(v) for v in values} if isinstance(values, list) else set()
    return tuple(c for c in DELEGATED_SCOPE if c.value in names)


def named_account(token: str) -> str | None:
    """The account id a delegated credential names, read without checking its signature
    (what the throttle counts a failed attempt against); None for anything else.

    >>> named_account("wai_x") is None
    True
    """
    if not token.startswith(DELEGATED_PREFIX):
        return None
    try:
        claims = json.loads(_unb64(token[len(DELEGATED_PREFIX):].split(".", 1)[0]))
    except (ValueError, RecursionError):  # not base64 or JSON, or nested past the limit
        return None
    account = claims.get("a") if isinstance(claims, dict) else None
    return account if isinstance(account, str) else None


def _key_entry(row: Any, caller: Account) -> dict[str, Any]:
    return {"keyId": row.id, "name": row.name, "accountId": row.account_id,
            "createdAt": row.created_at, "revokedAt": row.revoked_at,
            "current": row.id == caller.key_id}


def list_keys(store: Store, caller: Account) -> dict[str, Any]:
    """The caller's API keys, oldest first: ids, names, when made and revoked (never a key)."""
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(api_keys).where(api_keys.c.account_id == caller.id)
                            .order_by(api_keys.c.created_at, api_keys.c.id)).all()
    items = [_key_entry(r, caller) for r in rows]
    return {"keys": items, "count": len(items),
            "active": sum(1 for item in items if item["revokedAt"] is None)}


def add_key(store: Store, caller: Account, *, key_name: str) -> tuple[Account, str]:
    """Mint another key for the caller's own account (to rotate keys), shown once (the route
    needs ``Capability.KEYS``: an API key)."""
    return create_key(store, caller.name, key_name=key_name)


def revoke_key(store: Store, caller: Account, key_id: str) -> dict[str, Any]:
    """Revoke one key of the caller's account (an admin may revoke any key); idempotent.

    Raises:
        NotFound: when the account has no key ``key_id``.
    """
    with store.engine.begin() as conn:
        rule = api_keys.c.id == key_id
        if not caller.is_admin:
            rule = sa.and_(rule, api_keys.c.account_id == caller.id)
        row = conn.execute(sa.select(api_keys).where(rule)).first()
        if row is None:
            raise NotFound(f"no API key {key_id} on this account (whileai keys "
                           "lists them)")
        if row.revoked_at is None:
            conn.execute(sa.update(api_keys).where(api_keys.c.id == key_id)
                         .values(revoked_at=time.time()))
            row = conn.execute(sa.select(api_keys).where(api_keys.c.id == key_id)).one()
    return _key_entry(row, caller)


def issue_delegated(store: Store, account: Account, *, ttl_seconds: int, name: str,
                    scope: tuple[Capability, ...] = DELEGATED_SCOPE) -> dict[str, Any]:
    """A credential for ``account`` that expires after ``ttl_seconds`` (at most 7 days) and
    may do ``scope``; when ``account`` is itself a delegated credential, the new one expires
    no later and may do no more than it (``ttlSeconds`` says what was granted).

    Raises:
        Invalid: for a ttl out of 1..7 days or an empty scope.
    """
    if not 1 <= ttl_seconds <= MAX_TTL:
        raise Invalid(f"ttl_seconds must be 1..{MAX_TTL}, got {ttl_seconds}")
    now = time.time()
    expires, granted = capped(account, ttl_seconds=ttl_seconds, now=now,
                              scope=tuple(c for c in scope if c in DELEGATED_SCOPE))
    if not granted:
        raise Invalid("scope must name read and/or write (of what the "
                      "caller may do)")
    claims: dict[str, Any] = {"a": account.id, "n": name, "iat": now, "exp": expires,
                              "c": [c.value for c in granted]}
    if account.key_id is not None:
        claims["k"] = account.key_id
    payload = json.dumps(claims, separators=(",", ":")).encode()
    credential = f"{DELEGATED_PREFIX}{_b64(payload)}.{_sign(store, payload)}"
    return {"credential": credential, "name": name, "accountId": account.id,
            "expiresAt": expires, "ttlSeconds": max(0, round(expires - now)),
            "scope": [c.value for c in granted]}


def refresh_delegated(store: Store, account: Account, credential: str, *,
                      ttl_seconds: int) -> dict[str, Any]:
    """A fresh credential replacing a still-valid one of the same account, with the same name
    and scope (capped like :func:`issue_delegated`: a delegated caller cannot outlive itself).
    """
    claims = _read_delegated(store, credential)
    if claims["a"] != account.id:
        raise Forbidden("that delegated credential belongs to another account")
    return issue_delegated(store, account, ttl_seconds=ttl_seconds, name=str(claims["n"]),
                           scope=_scope(claims.get("c", [c.value for c in DELEGATED_SCOPE])))


def usage_bytes(conn: sa.Connection, account_id: str) -> int:
    """Stored bytes of one account."""
    total = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(datasets.c.bytes), 0))
                         .where(datasets.c.account_id == account_id)).scalar()
    return int(total or 0)


def account_info(store: Store, account: Account) -> dict[str, Any]:
    """Tier, limits and usage of the caller's account."""
    with store.engine.connect() as conn:
        used = usage_bytes(conn, account.id)
        count = conn.execute(sa.select(sa.func.count()).select_from(datasets)
                             .where(datasets.c.account_id == account.id)).scalar()
    cfg = store.config
    return {
        "accountId": account.id, "name": account.name, "tier": account.tier,
        "limits": {"storageBytes": cfg.max_storage_bytes,
                   "rowsPerDataset": cfg.max_rows_per_dataset,
                   "requestBytes": cfg.max_request_bytes},
        "usage": {"storageBytes": used, "datasets": int(count or 0)},
    }
