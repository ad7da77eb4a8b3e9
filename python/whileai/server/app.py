"""Build the FastAPI app: open and migrate the store, sweep stray parts, mount the routers.

>>> app = create_app(ServerConfig(directory=Path("/tmp/whileai-server")))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from whileai._version import __version__
from whileai.server.config import ServerConfig
from whileai.server.errors import ApiError, api_error
from whileai.server.limits import RequestLimits
from whileai.server.pages import router as pages_router
from whileai.server.pages.guard import PageGuard
from whileai.server.routes import ROUTERS
from whileai.server.routes.deps import KEY_SCHEMES, check_credential
from whileai.server.routes.traces import ExportGate, otlp_error
from whileai.server.services import Store
from whileai.server.services.problems import ServiceError
from whileai.server.store.blobs import sweep
from whileai.server.store.checkpoint import background_checkpoints
from whileai.server.store.db import dialect_of, migrate, open_engine, server_secret
from whileai.server.store.folder import make_private_dir, prepare
from whileai.server.store.tables import parts
from whileai.server.throttle import Throttle

__all__ = ["create_app", "open_store"]

log = logging.getLogger("whileai.server")


def open_store(config: ServerConfig, *, sweep_uploads: bool = True) -> Store:
    """Create the folders, migrate the database, and (``sweep_uploads``: when no server runs on
    the folder, i.e. the server starting) remove upload files no manifest lists."""
    prepare(config.directory, sqlite=dialect_of(config.database_url) == "sqlite")
    engine = open_engine(config.database_url)
    migrate(engine)
    if sweep_uploads:
        with engine.connect() as conn:
            referenced = set(conn.execute(sa.select(parts.c.path)).scalars())
        removed = sweep(config.parts_dir, config.tmp_dir, referenced)
        if removed:
            log.info("removed %d unfinished upload file(s)", removed)
    make_private_dir(config.parts_dir)
    make_private_dir(config.tmp_dir)
    return Store(engine=engine, config=config, secret=server_secret(engine))


def _error(request: Request, status: int, code: str, message: str,
           retry_after: int | None = None,
           extra: Mapping[str, str] | None = None) -> Response:
    """``{"error": code, "message": message}``, or what OTLP/HTTP answers an export with."""
    headers = dict(extra) if extra else None
    if retry_after is not None:
        headers = {**(headers or {}), "Retry-After": str(retry_after)}
    otlp = otlp_error(request, status, message, headers)
    if otlp is not None:
        return otlp
    return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers)


async def _api_error(request: Request, exc: Exception) -> Response:
    """A route's ``ApiError``, or a service's error answered with its code (``errors.CODES``)."""
    assert isinstance(exc, ApiError | ServiceError)
    answer = api_error(exc)
    return _error(request, answer.status, answer.code, answer.message, answer.retry_after)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "bad_request", 408: "timeout",
            413: "too_large"}.get(exc.status_code, "bad_request")
    return _error(request, exc.status_code, code, str(exc.detail), extra=exc.headers)


def _where(loc: Sequence[Any]) -> str:
    """A validation error's location as a path: ``("body", "points", 0, "step")`` ->
    ``points[0].step``; a query or path parameter says so (``offset (query)``)."""
    head, *rest = loc or ("body",)
    path = ""
    for part in rest:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return (path or "the body") if head == "body" else f"{path} ({head})"


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(
        f"{_where(err.get('loc', ()))}: {str(err.get('msg')).removeprefix('Value error, ')}"
        for err in exc.errors()
    )
    return _error(request, 400, "bad_request", problems or "invalid request")


async def _internal(request: Request, exc: Exception) -> Response:
    log.exception("internal error", exc_info=exc)
    return _error(request, 500, "internal",
                  f"the server failed ({type(exc).__name__}); see its log")


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """While the server runs, its SQLite log is checkpointed in the background."""
    with background_checkpoints(app.state.store.engine):
        yield


def create_app(config: ServerConfig, store: Store | None = None) -> FastAPI:
    """The app for ``config`` (``store`` when the caller opened it already)."""
    # /docs is our own page (pages.apidocs): FastAPI's loads Swagger UI from a CDN.
    app = FastAPI(title="whileai platform", version=__version__, lifespan=_lifespan,
                  docs_url=None, redoc_url=None,
                  description="Datasets, agents and accounts of a self-hosted whileai server.")
    app.state.store = store or open_store(config)
    app.state.export_gate = ExportGate(limit=config.max_pending_exports,
                                        per_account=config.max_exports_per_account)
    app.state.auth_throttle = Throttle(burst=config.max_auth_failures, window=60.0)
    app.state.signup_throttle = Throttle(burst=config.max_signups, window=3600.0)
    app.add_middleware(PageGuard)  # security headers on every response, the CSRF cookie
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(ServiceError, _api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(Exception, _internal)
    app.add_middleware(RequestLimits, store=app.state.store, routes=app.router.routes,
                       key_schemes=KEY_SCHEMES, check_key=check_credential,
                       render=_api_error)
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(pages_router)  # the web pages: HTML over the same services
    return app
