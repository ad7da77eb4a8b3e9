"""The account: tier, limits and usage; delegated credentials; sign-up; checking a key."""

from __future__ import annotations

from typing import Any

from whileai.platform.http import Connection, call, connect, json_of

__all__ = ["account", "issue_delegated_credential", "refresh_delegated_credential", "signup"]


def account(api_key: str | None = None, *, base_url: str | None = None) -> dict[str, Any]:
    """Tier, limits and usage of the account the key belongs to.

    >>> sorted(account())  # doctest: +SKIP
    ['accountId', 'limits', 'name', 'tier', 'usage']
    """
    out: dict[str, Any] = json_of(call(connect(api_key, base_url=base_url), "GET",
                                       "/v1/account"))
    return out


def issue_delegated_credential(clerk_token: str | None, ttl_seconds: int = 3600,
                               name: str = "sdk-default", timeout: float = 120, *,
                               base_url: str | None = None) -> dict[str, Any]:
    """A short-lived credential signed by the server, usable wherever a key is.

    ``clerk_token`` is the bearer that authorises it (an API key of the account; ``None``
    uses the usual key). Returns ``credential``, ``expiresAt`` and ``name``.
    """
    out: dict[str, Any] = json_of(call(connect(clerk_token, base_url=base_url), "POST",
                                       "/v1/auth/delegated", timeout=timeout,
                                       json={"ttl_seconds": ttl_seconds, "name": name}))
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
