"""Routes without a key: ``/health`` and the public catalog."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from whileai._version import __version__
from whileai.server.routes.deps import StoreDep
from whileai.server.routes.models import CatalogOut, HealthOut
from whileai.server.services import datasets

__all__ = ["router"]

router = APIRouter(tags=["public"])


@router.get("/health", response_model=HealthOut, summary="Is the server up")
def health(store: StoreDep) -> dict[str, Any]:
    """The version and the database dialect."""
    return {"status": "ok", "version": __version__, "database": store.engine.dialect.name}


@router.get("/v1/catalog", response_model=CatalogOut, summary="The public catalog")
def catalog(store: StoreDep) -> dict[str, Any]:
    """Every public card and the agents they are grouped under."""
    return datasets.catalog(store)
