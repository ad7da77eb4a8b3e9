"""The account: tier, limits and usage; its API keys and revoking one; delegated credentials;
sign-up; checking a key."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from whileai.platform.http import Connection, call, connect, json_of

__all__ = [
    "account", "create_key", "issue_delegated_credential", "list_keys",
    "refresh_delegated_credential", "revoke_key", "signup",
]


def account(api_key: str | None = None, *, base_url: str | None = None) -> dict[str, Any]:
    """Tier, limits and usage of the account the key belongs to.

    >>> sorted(account())  # doctest: +SKIP
    ['accountId', 'limits', 'name', 'tier', 'usage']
    """
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "GET",
                                       "/v1/account"))
    return out


def list_keys(api_key: str | None = None, *, base_url: str | None = None) -> dict[str, Any]:
    """The account's API keys, oldest first: ``keyId``, ``name``, ``createdAt``, ``revokedAt``.

    Only ids are listed, never a key; ``current`` marks the key this call used.

    >>> [k["keyId"] for k in list_keys()["keys"] if k["current"]]  # doctest: +SKIP
    ['key_...']
    """
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "GET", "/v1/keys"))
    return out


def create_key(name: str = "default", api_key: str | None = None, *,
               base_url: str | None = None) -> dict[str, Any]:
    """Mint another API key for your own account, to rotate keys; the key is shown once.

    Returns ``key``, ``keyId`` (the handle to revoke it by), ``accountId`` and ``account``.
    A delegated credential may not mint keys (``KeyRefusedError``).

    >>> new = create_key("ci")  # doctest: +SKIP
    >>> revoke_key(old_key_id, api_key=new["key"])  # doctest: +SKIP
    """
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "POST", "/v1/keys",
                                       json={"name": name}, retry=False))
    return out


def revoke_key(key_id: str, api_key: str | None = None, *,
               base_url: str | None = None) -> dict[str, Any]:
    """Revoke one API key of the account (by its ``key_...`` id); returns its entry.

    From the next request on the server refuses that key (``KeyRefusedError``, HTTP 401) and
    every delegated credential issued with it; the account's other keys keep working.
    Revoking a key twice is no error.

    Raises:
        NotFoundError: the account has no key ``key_id``.

    >>> revoke_key("key_1a2b3c4d5e6f7a8b")["revokedAt"]  # doctest: +SKIP
    1764620000.0
    """
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "POST",
                                       f"/v1/keys/{quote(key_id, safe='')}/revoke",
                                       retry=False))
    return out


def issue_delegated_credential(clerk_token: str | None, ttl_seconds: int = 3600,
                               name: str = "sdk-default", timeout: float = 120, *,
                               scope: tuple[str, ...] = ("read", "write"),
                               base_url: str | None = None) -> dict[str, Any]:
    """A short-lived credential signed by the server, usable wherever a key is to read and
    (in ``scope``) write; it can never mint or revoke keys.

    ``clerk_token`` is the bearer that authorises it (an API key of the account; ``None``
    uses the usual key; a delegated credential gets one no longer-lived and no wider than
    itself). Returns ``credential``, ``expiresAt``, ``ttlSeconds``, ``scope`` and ``name``.

    >>> issue_delegated_credential(None, 600, "ui", scope=("read",))  # doctest: +SKIP
    """
    out: dict[str, Any] = json_of(call(connect(clerk_token, base_url=base_url), "POST",
                                       "/v1/auth/delegated", timeout=timeout,
                                       json={"ttl_seconds": ttl_seconds, "name": name,
                                             "scope": list(scope)}))
    return out


def refresh_delegated_credential(clerk_token: str | None, credential: str,
                                 ttl_seconds: int = 3600, timeout: float = 120, *,
                                 base_url: str | None = None) -> dict[str, Any]:
    """Replace a still-valid delegated credential with a fresh one."""
    out: dict[str, Any] = json_of(call(connect(clerk_token or credential, base_url=base_url),
                                       "POST", "/v1/auth/delegated/refresh", timeout=timeout,
                                       json={"credential": credential,
                                             "ttl_seconds": ttl_seconds}))
    return out


def signup(email: str, *, base_url: str | None = None) -> dict[str, Any]:
    """Create an account on a server started with ``--open-signup``; returns its first key."""
    conn = connect(None, base_url=base_url, need_key=False)
    out: dict[str, Any] = json_of(call(Connection(base_url=conn.base_url, api_key=None), "POST",
                                       "/v1/signup", json={"email": email}, retry=False))
    return out
