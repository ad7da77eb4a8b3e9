"""Shared route plumbing: the store of the app and the caller, checked for what the route needs.

Every authenticated route declares its capability by the type of its caller parameter:
``Reader``, ``Writer``, ``KeyManager`` or ``Admin`` (``services.access`` decides who has it).
Each capability is its own bearer security scheme (``read``, ``write``, ``keys``, ``admin``;
``optional`` for public routes that show more with a credential), so the OpenAPI document
says what every operation needs. Credential checks go through the app's throttle
(``server.throttle``). A credential comes as ``Authorization: Bearer <key>``, or as
``X-Api-Key: <key>`` (the plain-HTTP form the docs show); Bearer wins when both are sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from whileai.server.services import Account, Capability, Store
from whileai.server.services.access import require
from whileai.server.services.accounts import authenticate
from whileai.server.throttle import Throttle, attempt

__all__ = ["KEY_SCHEMES", "Admin", "KeyManager", "MaybeAccount", "Reader", "StoreDep", "Writer",
           "check_credential", "checked", "client_address", "get_store", "needs"]

_WHO = {Capability.READ: "an API key or a delegated credential",
        Capability.WRITE: "an API key or a delegated credential of scope write",
        Capability.KEYS: "an API key (a delegated credential cannot mint or revoke keys)",
        Capability.ADMIN: "an API key of an admin account"}
_bearers = {c: HTTPBearer(auto_error=False, scheme_name=c.value, description=_WHO[c])
            for c in Capability}
_optional = HTTPBearer(auto_error=False, scheme_name="optional",
                       description="no credential, or one that may read (shows private ones)")
_api_key = APIKeyHeader(name="X-Api-Key", auto_error=False, scheme_name="x-api-key",
                        description="the same credential as a plain header (Bearer wins)")


def get_store(request: Request) -> Store:
    """The store the app was built with."""
    store: Store = request.app.state.store
    return store


StoreDep = Annotated[Store, Depends(get_store)]
Bearer = HTTPAuthorizationCredentials | None
ApiKey = Annotated[str | None, Depends(_api_key)]


def _token(credentials: Bearer, api_key: str | None) -> str | None:
    """The credential sent: Bearer first, then ``X-Api-Key``."""
    return credentials.credentials if credentials else (api_key or None)


def client_address(request: Request) -> str:
    """The caller's address (the proxy's ``X-Forwarded-For`` when uvicorn trusts the proxy)."""
    return request.client.host if request.client else "unknown"


def checked(request: Request, store: Store, token: str | None) -> Account:
    """The account behind ``token``, through the throttle of failed attempts."""
    throttle: Throttle = request.app.state.auth_throttle
    return attempt(throttle, client_address(request), token,
                   lambda: authenticate(store, token))


KEY_SCHEMES = frozenset(_bearers.values())  # a route that declares one needs a credential


def check_credential(request: Request) -> Account:
    """The account behind the request's credential (Bearer, else ``X-Api-Key``), checked
    through the throttle: what ``needs`` checks first, run by ``limits.RequestLimits`` before a
    body is read."""
    scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
    token = bearer.strip() if scheme.lower() == "bearer" and bearer.strip() else None
    return checked(request, get_store(request), token or request.headers.get("x-api-key"))


def needs(capability: Capability) -> Callable[..., Account]:
    """A dependency: the caller's account when its credential may do ``capability``
    (401 without a valid credential, 403 when its kind or scope falls short)."""

    def caller(request: Request, store: StoreDep, api_key: ApiKey,
               credentials: Bearer = Depends(_bearers[capability])) -> Account:  # noqa: B008
        return require(checked(request, store, _token(credentials, api_key)), capability)

    caller.__doc__ = f"The caller, allowed to {capability.value}."
    return caller


def maybe_account(request: Request, store: StoreDep, api_key: ApiKey,
                  credentials: Annotated[Bearer, Depends(_optional)]) -> Account | None:
    """The caller's account (allowed to read) when a credential is sent (public routes)."""
    token = _token(credentials, api_key)
    if token is None:
        return None
    return require(checked(request, store, token), Capability.READ)


Reader = Annotated[Account, Depends(needs(Capability.READ))]
Writer = Annotated[Account, Depends(needs(Capability.WRITE))]
KeyManager = Annotated[Account, Depends(needs(Capability.KEYS))]
Admin = Annotated[Account, Depends(needs(Capability.ADMIN))]
MaybeAccount = Annotated[Account | None, Depends(maybe_account)]

