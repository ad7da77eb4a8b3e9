"""The platform's web pages: server-rendered HTML over the same services as the API."""

from __future__ import annotations

from fastapi import APIRouter

from whileai.server.pages import apidocs, session, views

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
router.include_router(session.router)
router.include_router(views.router)
router.include_router(apidocs.router)
