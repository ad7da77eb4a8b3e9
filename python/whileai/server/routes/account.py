"""Accounts and keys: ``/v1/account``, delegated credentials, sign-up, listing and revoking
keys, the admin key route."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from whileai.server.errors import ApiError
from whileai.server.routes.deps import Admin, KeyManager, Reader, StoreDep, client_address
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
from whileai.server.services import Capability, accounts
from whileai.server.throttle import Throttle

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["account"])


@router.get("/account", response_model=AccountOut, summary="Tier, limits and usage")
def account(store: StoreDep, caller: Reader) -> dict[str, Any]:
    """The caller's account."""
    return accounts.account_info(store, caller)


@router.post("/auth/delegated", response_model=DelegatedOut,
             summary="Issue a short-lived credential signed by this server")
def issue(body: DelegatedIn, store: StoreDep, caller: Reader) -> dict[str, Any]:
    """Expires after ``ttl_seconds`` (no later than the caller's own credential) and may do
    ``scope`` (no more than the caller)."""
    scope = tuple(Capability(name) for name in body.scope)
    return accounts.issue_delegated(store, caller, ttl_seconds=body.ttl_seconds, name=body.name,
                                    scope=scope)


@router.post("/auth/delegated/refresh", response_model=DelegatedOut,
             summary="Replace a delegated credential before it expires")
def refresh(body: RefreshIn, store: StoreDep, caller: Reader) -> dict[str, Any]:
    """The old credential must still be valid."""
    return accounts.refresh_delegated(store, caller, body.credential,
                                      ttl_seconds=body.ttl_seconds)


@router.post("/signup", response_model=KeyOut, status_code=201,
             summary="Create an account (servers started with --open-signup only)")
def signup(body: SignupIn, request: Request, store: StoreDep) -> dict[str, Any]:
    """Returns the account's first key, shown once. Nobody checks that the address is the
    caller's: an open server lets anyone make any account name that is not taken."""
    throttle: Throttle = request.app.state.signup_throttle
    where = f"addr:{client_address(request)}"
    wait = throttle.retry_after(where)
    if wait is not None:
        raise ApiError("busy", f"too many sign-ups from this address; retry after {wait} s",
                       retry_after=wait)
    if store.config.open_signup:
        throttle.spend(where)
    created, key = accounts.signup(store, body.email)
    return {"accountId": created.id, "account": created.name, "key": key,
            "keyId": created.key_id}


@router.post("/admin/keys", response_model=KeyOut, status_code=201,
             summary="Mint a key for an account (admin keys only)")
def mint(body: KeyIn, store: StoreDep, caller: Admin) -> dict[str, Any]:
    """Creates the account when new; an existing account needs ``existing: true`` (409 says
    whose it is), so a key never lands in a stranger's account by accident."""
    found = accounts.existing_account(store, body.account)
    if found is not None and not body.existing:
        raise ApiError("conflict", f"{accounts.describe(found)}; send existing: true to add "
                       "a key to it")
    created, key = accounts.create_key(store, body.account, key_name=body.name)
    return {"accountId": created.id, "account": created.name, "key": key,
            "keyId": created.key_id}


@router.get("/keys", response_model=KeyList, summary="The account's API keys (ids, never keys)")
def list_keys(store: StoreDep, caller: Reader) -> dict[str, Any]:
    """Oldest first; ``current`` marks the key of this request."""
    return accounts.list_keys(store, caller)


@router.post("/keys", response_model=KeyOut, status_code=201,
             summary="Mint another key for your own account (to rotate keys)")
def add_key(body: NewKeyIn, store: StoreDep, caller: KeyManager) -> dict[str, Any]:
    """Shown once; a delegated credential may not mint keys."""
    created, key = accounts.add_key(store, caller, key_name=body.name)
    return {"accountId": created.id, "account": created.name, "key": key,
            "keyId": created.key_id}


@router.post("/keys/{key_id}/revoke", response_model=KeyEntry,
             summary="Revoke an API key: refused from the next request on")
def revoke_key(key_id: str, store: StoreDep, caller: KeyManager) -> dict[str, Any]:
    """The account's other keys keep working; revoking twice is no error."""
    return accounts.revoke_key(store, caller, key_id)
