"""Accounts and keys: ``/v1/account``, delegated credentials, sign-up, listing and revoking
keys, the admin key route."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from whileai.server.errors import ApiError
from whileai.server.routes.deps import CurrentAccount, StoreDep
from whileai.server.routes.models import (
    AccountOut,
    DelegatedIn,
    DelegatedOut,
    KeyEntry,
    KeyIn,
    KeyList,
    KeyOut,
    NewKeyIn,
    RefreshIn,
    SignupIn,
)
from whileai.server.services import accounts

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["account"])


@router.get("/account", response_model=AccountOut, summary="Tier, limits and usage")
def account(store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """The caller's account."""
    return accounts.account_info(store, caller)


@router.post("/auth/delegated", response_model=DelegatedOut,
             summary="Issue a short-lived credential signed by this server")
def issue(body: DelegatedIn, store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """Expires after ``ttl_seconds``."""
    return accounts.issue_delegated(store, caller, ttl_seconds=body.ttl_seconds, name=body.name)


@router.post("/auth/delegated/refresh", response_model=DelegatedOut,
             summary="Replace a delegated credential before it expires")
def refresh(body: RefreshIn, store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """The old credential must still be valid."""
    return accounts.refresh_delegated(store, caller, body.credential,
                                      ttl_seconds=body.ttl_seconds)


@router.post("/signup", response_model=KeyOut, status_code=201,
             summary="Create an account (servers started with --open-signup only)")
def signup(body: SignupIn, store: StoreDep) -> dict[str, Any]:
    """Returns the account's first key, shown once."""
    created, key = accounts.signup(store, body.email)
    return {"accountId": created.id, "account": created.name, "key": key,
            "keyId": created.key_id}


@router.post("/admin/keys", response_model=KeyOut, status_code=201,
             summary="Mint a key for an account (admin keys only)")
def mint(body: KeyIn, store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """Creates the account when new."""
    if not caller.is_admin:
        raise ApiError("forbidden", "only an admin key may mint keys "
                       "(whileai serve --create-key NAME --admin)")
    created, key = accounts.create_key(store, body.account, key_name=body.name)
    return {"accountId": created.id, "account": created.name, "key": key,
            "keyId": created.key_id}


@router.get("/keys", response_model=KeyList, summary="The account's API keys (ids, never keys)")
def list_keys(store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """Oldest first; ``current`` marks the key of this request."""
    return accounts.list_keys(store, caller)


@router.post("/keys", response_model=KeyOut, status_code=201,
             summary="Mint another key for your own account (to rotate keys)")
def add_key(body: NewKeyIn, store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """Shown once; a delegated credential may not mint keys."""
    created, key = accounts.add_key(store, caller, key_name=body.name)
    return {"accountId": created.id, "account": created.name, "key": key,
            "keyId": created.key_id}


@router.post("/keys/{key_id}/revoke", response_model=KeyEntry,
             summary="Revoke an API key: refused from the next request on")
def revoke_key(key_id: str, store: StoreDep, caller: CurrentAccount) -> dict[str, Any]:
    """The account's other keys keep working; revoking twice is no error."""
    return accounts.revoke_key(store, caller, key_id)
