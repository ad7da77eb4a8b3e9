"""The pydantic models of every route: they validate input and produce the OpenAPI description.

Field names are the wire names (camelCase, as the client and the spec read them).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AccountOut", "AgentIn", "AgentOut", "CatalogOut", "DatasetList", "DatasetOut",
    "DelegatedIn", "DelegatedOut", "DeleteEmptyOut", "DeleteOut", "ErrorOut", "HealthOut",
    "KeyEntry", "KeyIn", "KeyList", "KeyOut", "ManifestOut", "NewKeyIn", "PublishIn", "PurgeOut",
    "PushQuery", "RefreshIn", "SignupIn", "UpdateIn",
]


class _Open(BaseModel):
    """A reply model that keeps keys it does not declare (later issues add fields)."""

    model_config = ConfigDict(extra="allow")


class ErrorOut(BaseModel):
    """Every error: a stable code and a sentence."""

    error: str
    message: str


class HealthOut(BaseModel):
    """``GET /health``."""

    status: str
    version: str
    database: str


class PushQuery(BaseModel):
    """Query parameters of ``POST /v1/datasets`` (the body is the JSONL itself)."""

    name: str = Field(min_length=1, max_length=300)
    purpose: str = Field(default="train", max_length=20)
    mode: str | None = Field(default=None, max_length=40)
    agent: str | None = Field(default=None, max_length=200)
    description: str | None = None
    parent: str | None = Field(default=None, max_length=40,
                               description="the ds_ id this set iterates on")
    linked: str | None = Field(default=None, max_length=40,
                               description="the ds_ id of its holdout/train twin")
    keep_privileged: bool = Field(
        default=False, description="store rows holding a teacher-only `privileged` block (a "
        "private store; such a set can never be published); without it they are refused")


class DatasetOut(_Open):
    """A dataset's registry entry."""

    datasetId: str
    name: str
    purpose: str
    mode: str | None
    agent: str | None
    description: str | None
    parentId: str | None
    linkedId: str | None
    rows: int
    bytes: int
    public: bool
    status: str
    createdAt: float
    updatedAt: float


class DatasetList(BaseModel):
    """``GET /v1/datasets``."""

    datasets: list[DatasetOut]
    count: int
    storageBytes: int
    storageLimitBytes: int


class UpdateIn(BaseModel):
    """Fields of ``PATCH /v1/datasets/{id}``; only those given change."""

    purpose: str | None = Field(default=None, max_length=20)
    mode: str | None = Field(default=None, max_length=40)
    agent: str | None = Field(default=None, max_length=200)
    description: str | None = None


class DeleteOut(_Open):
    """A deleted dataset."""

    datasetId: str
    deleted: bool


class DeleteEmptyOut(BaseModel):
    """``POST /v1/datasets/delete-empty``."""

    deleted: list[str]
    count: int
    dryRun: bool
    maxRows: int


class PartOut(BaseModel):
    """One part of a dataset's manifest."""

    index: int
    rows: int
    bytes: int
    sha256: str
    url: str


class ManifestOut(BaseModel):
    """Every part of a dataset, in order."""

    datasetId: str
    name: str
    rows: int
    bytes: int
    parts: list[PartOut]


class PublishIn(BaseModel):
    """``POST /v1/datasets/{id}/publish``."""

    agent: str = Field(min_length=1, max_length=200)
    description: str | None = None


class CatalogOut(BaseModel):
    """The public catalog."""

    datasets: list[dict[str, Any]]
    agents: list[dict[str, Any]]


class AgentIn(BaseModel):
    """``PUT /v1/agents/{name}``."""

    description: str | None = None
    tools: list[Any] | None = None
    systemPrompt: str | None = None


class AgentOut(_Open):
    """An agent record (with counts when listed)."""

    agent: str


class PurgeOut(_Open):
    """``DELETE /v1/agents/{name}``."""

    agent: str
    traces: int
    datasets: int
    deleted: bool


class AccountOut(_Open):
    """Tier, limits and usage."""

    accountId: str
    name: str
    tier: str
    limits: dict[str, int]
    usage: dict[str, int]


class KeyIn(BaseModel):
    """``POST /v1/admin/keys``: mint a key for an account (created when new)."""

    account: str = Field(min_length=1, max_length=200)
    name: str = "default"
    existing: bool = Field(False, description="add the key to the account when it exists "
                           "already (else 409 saying whose it is)")


class KeyOut(BaseModel):
    """A freshly minted key: shown once (``keyId`` is the handle to revoke it by)."""

    accountId: str
    account: str
    key: str
    keyId: str | None = None


class NewKeyIn(BaseModel):
    """``POST /v1/keys``: another key for your own account."""

    name: str = Field(default="default", min_length=1, max_length=200)


class KeyEntry(BaseModel):
    """One API key of the account, as listed (never the key itself)."""

    keyId: str
    name: str
    accountId: str
    createdAt: float
    revokedAt: float | None
    current: bool


class KeyList(BaseModel):
    """``GET /v1/keys``."""

    keys: list[KeyEntry]
    count: int
    active: int


class SignupIn(BaseModel):
    """``POST /v1/signup``."""

    email: str = Field(min_length=3, max_length=320)


class DelegatedIn(BaseModel):
    """``POST /v1/auth/delegated``."""

    ttl_seconds: int = 3600
    name: str = Field(default="sdk-default", max_length=200)
    scope: list[Literal["read", "write"]] = Field(
        ["read", "write"], description="what it may do: read, write (never more than the "
        "caller; it can never mint or revoke keys)")


class RefreshIn(BaseModel):
    """``POST /v1/auth/delegated/refresh``."""

    credential: str
    ttl_seconds: int = 3600


class DelegatedOut(BaseModel):
    """A short-lived credential."""

    credential: str
    name: str
    accountId: str
    expiresAt: float
    ttlSeconds: int
    scope: list[str] = ["read", "write"]
