"""The platform's web pages: server-rendered HTML over the same services as the API."""

from __future__ import annotations

from fastapi import APIRouter

from whileai.server.pages import (
    apidocs,
    comparison,
    hacks,
    render,
    rows,
    session,
    traceview,
    views,
)

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
router.include_router(render.router)
router.include_router(session.router)
router.include_router(rows.router)
router.include_router(comparison.router)
router.include_router(hacks.router)
router.include_router(traceview.router)
router.include_router(views.router)
router.include_router(apidocs.router)
