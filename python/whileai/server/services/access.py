"""What a credential may do: the one place that decides.

Every route declares the :class:`Capability` it needs (``routes.deps``: ``Reader``, ``Writer``,
``KeyManager``, ``Admin``); the caller's credential kind and account decide here:

=============  ====  =====  ====  =====
kind           read  write  keys  admin
=============  ====  =====  ====  =====
API key        yes   yes    yes   the account is an admin
delegated      its scope    no    no
page session   yes   yes    no    no
=============  ====  =====  ====  =====

``keys`` is minting and revoking API keys; ``admin`` is minting keys for other accounts. A
delegated credential carries a scope (read, or read and write) and an expiry; what it issues is
never wider nor longer-lived than itself (:func:`capped`).

>>> from dataclasses import replace
>>> key = Account(id="acct_1", name="a", tier="t")
>>> refusal(key, Capability.KEYS) is None
True
>>> print(refusal(replace(key, kind=Kind.DELEGATED), Capability.KEYS))
a delegated credential cannot mint or revoke API keys; use an API key
"""

from __future__ import annotations

from enum import Enum

from whileai.server.services import Account, Capability, Kind
from whileai.server.services.problems import Forbidden

__all__ = ["GRANTS", "Capability", "Kind", "capped", "refusal", "require"]

GRANTS: dict[Kind, frozenset[Capability]] = {
    Kind.KEY: frozenset(Capability),
    Kind.DELEGATED: frozenset({Capability.READ, Capability.WRITE}),
    Kind.SESSION: frozenset({Capability.READ, Capability.WRITE}),
}

_NAMES = {Kind.KEY: "an API key", Kind.DELEGATED: "a delegated credential",
          Kind.SESSION: "a page session"}
_VERBS = {Capability.READ: "read", Capability.WRITE: "write",
          Capability.KEYS: "mint or revoke API keys",
          Capability.ADMIN: "mint keys for other accounts"}


def _label(values: tuple[Enum, ...]) -> str:
    return " and ".join(str(v.value) for v in values) or "nothing"


def refusal(account: Account, need: Capability) -> str | None:
    """Why ``account`` may not do ``need``, or None when it may.

    >>> reader = Account(id="a", name="a", tier="t", kind=Kind.DELEGATED,
    ...                  scope=(Capability.READ,))
    >>> print(refusal(reader, Capability.WRITE))
    this delegated credential may only read; issue one with scope write
    >>> refusal(Account(id="a", name="a", tier="t"), Capability.ADMIN).startswith("only an admin")
    True
    """
    if need not in GRANTS[account.kind]:
        return f"{_NAMES[account.kind]} cannot {_VERBS[need]}; use an API key"
    if need not in account.scope:
        return (f"this delegated credential may only {_label(account.scope)}; issue one with "
                f"scope {need.value}")
    if need is Capability.ADMIN and not account.is_admin:
        return (f"only an admin account's API key may {_VERBS[need]} "
                "(whileai serve --create-key NAME --admin)")
    return None


def require(account: Account, need: Capability) -> Account:
    """``account`` when it may do ``need``.

    Raises:
        Forbidden: saying which credential kind or scope is missing.
    """
    reason = refusal(account, need)
    if reason is not None:
        raise Forbidden(reason)
    return account


def capped(issuer: Account, *, ttl_seconds: int, scope: tuple[Capability, ...],
           now: float) -> tuple[float, tuple[Capability, ...]]:
    """The expiry and scope of a credential ``issuer`` asks for: never past the issuer's own
    expiry, never wider than its scope (``scope`` in the issuer's order).

    >>> short = Account(id="a", name="a", tier="t", kind=Kind.DELEGATED, expires_at=160.0,
    ...                 scope=(Capability.READ,))
    >>> capped(short, ttl_seconds=604800, scope=(Capability.READ, Capability.WRITE), now=100.0)
    (160.0, (<Capability.READ: 'read'>,))
    """
    expires = now + ttl_seconds
    if issuer.expires_at is not None:
        expires = min(expires, issuer.expires_at)
    return expires, tuple(c for c in issuer.scope if c in scope)

