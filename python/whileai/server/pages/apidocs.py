"""``/docs``: the API reference as a plain page of this server (no script, no other host).

Each operation of the OpenAPI document with what it does and the capability its caller needs
(its security scheme: ``read``, ``write``, ``keys``, ``admin``, ``optional``, or none); the
full description is ``/openapi.json``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from whileai.server.pages.render import render
from whileai.server.pages.session import page_account
from whileai.server.routes.deps import StoreDep

__all__ = ["operations", "router"]

router = APIRouter(include_in_schema=False)


def operations(spec: dict[str, Any]) -> list[list[str]]:
    """``[method, path, summary, needs]`` for every operation of an OpenAPI document.

    >>> operations({"paths": {"/x": {"get": {"summary": "X", "security": [{"read": []}]}}}})
    [['GET', '/x', 'X', 'read']]
    """
    return [[method.upper(), path, op.get("summary", ""),
             ", ".join(name for rule in op.get("security", []) for name in rule) or "none"]
            for path, ops in sorted(spec.get("paths", {}).items())
            for method, op in sorted(ops.items())]


@router.get("/docs", response_class=HTMLResponse)
def api_docs(request: Request, store: StoreDep) -> HTMLResponse:
    """Every API operation and the capability it needs."""
    return render("apidocs.html", title="API", operations=operations(request.app.openapi()),
                  signed_in=page_account(store, request) is not None)
