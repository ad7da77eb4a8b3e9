"""Shared route plumbing: the store of the app and the authenticated account."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from whileai.server.services import Account, Store
from whileai.server.services.accounts import authenticate

__all__ = ["CurrentAccount", "MaybeAccount", "StoreDep", "get_store"]

_bearer = HTTPBearer(auto_error=False, description="an API key or a delegated credential")


def get_store(request: Request) -> Store:
    """The store the app was built with."""
    store: Store = request.app.state.store
    return store


StoreDep = Annotated[Store, Depends(get_store)]
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def current_account(store: StoreDep, credentials: Bearer) -> Account:
    """The caller's account; 401 without a valid key."""
    return authenticate(store, credentials.credentials if credentials else None)


def maybe_account(store: StoreDep, credentials: Bearer) -> Account | None:
    """The caller's account when a key is sent (public routes)."""
    if credentials is None:
        return None
    return authenticate(store, credentials.credentials)


CurrentAccount = Annotated[Account, Depends(current_account)]
MaybeAccount = Annotated[Account | None, Depends(maybe_account)]
