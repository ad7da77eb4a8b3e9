"""Shared route plumbing: the store of the app and the authenticated account.

A credential comes as ``Authorization: Bearer <key>``, or as ``X-Api-Key: <key>`` (the
plain-HTTP form the docs show); Bearer wins when both are sent.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from whileai.server.services import Account, Store
from whileai.server.services.accounts import authenticate

__all__ = ["CurrentAccount", "MaybeAccount", "StoreDep", "get_store"]

_bearer = HTTPBearer(auto_error=False, description="an API key or a delegated credential")
_api_key = APIKeyHeader(name="X-Api-Key", auto_error=False, description="an API key")


def get_store(request: Request) -> Store:
    """The store the app was built with."""
    store: Store = request.app.state.store
    return store


StoreDep = Annotated[Store, Depends(get_store)]
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
ApiKey = Annotated[str | None, Depends(_api_key)]


def current_account(store: StoreDep, credentials: Bearer, api_key: ApiKey) -> Account:
    """The caller's account; 401 without a valid key."""
    return authenticate(store, credentials.credentials if credentials else api_key)


def maybe_account(store: StoreDep, credentials: Bearer, api_key: ApiKey) -> Account | None:
    """The caller's account when a key is sent (public routes)."""
    if credentials is None and not api_key:
        return None
    return authenticate(store, credentials.credentials if credentials else api_key)


CurrentAccount = Annotated[Account, Depends(current_account)]
MaybeAccount = Annotated[Account | None, Depends(maybe_account)]
