"""Limits that hold before a route does any work: body size, body time, and the key.

``RequestLimits`` is the ASGI middleware every request passes through on its way in. It refuses a
URL with a NUL character (nothing is named by one, and PostgreSQL text cannot hold it); for a
request that carries a body it

1. on a route that needs a key, checks the key before the body is read (401), so a stranger
   cannot make the server read and parse hundreds of megabytes;
2. refuses a declared ``Content-Length`` past the route's limit (413) before reading a byte;
3. reads a JSON body whole (it is small: see below) and checks it with ``strict_json.loads``
   before the route parses it (400 naming what is wrong: not UTF-8, a NUL, ``NaN``, a number
   out of range, nesting past ``MAX_DEPTH``), so no route stores what a reader cannot read;
4. counts the body as the route reads it (413 once past the limit, however it is framed) and
   gives it a deadline: each piece within ``read_timeout`` seconds, and the whole at
   ``min_body_rate`` bytes a second on average after the first ``read_timeout`` seconds (408
   and the connection closed otherwise), so a slow or stalled sender cannot hold a request
   (or a trace ingest place) for as long as it likes.

A route's limit is ``max_request_bytes`` when it streams its body itself (a push, a trace
export: those routes bound it further), and at most ``MAX_JSON_BODY`` when the framework
parses it whole (a JSON or form body), since a parsed body lives in memory.

>>> route_limit(has_body_model=True, max_request_bytes=8 * 1024**3) == MAX_JSON_BODY
True
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any

from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from whileai.server.errors import STATUS, ApiError, ErrorCode, api_error
from whileai.server.services import Store
from whileai.server.services.problems import ServiceError
from whileai.server.services.strict_json import loads

__all__ = ["MAX_JSON_BODY", "BodyRefused", "RequestLimits", "RouteLimits", "flat_routes",
           "route_limit"]

# A JSON (or form) body is parsed whole into memory; the largest a client sends is a batch of
# 10,000 scores or 500 run points, a few MB.
MAX_JSON_BODY = 16 * 1024 * 1024
_CLOSE = {"Connection": "close"}  # after a refused body the rest of it is not read

Render = Callable[[Request, Exception], Awaitable[Response]]


def route_limit(*, has_body_model: bool, max_request_bytes: int) -> int:
    """The most bytes a route's body may hold (see the module docstring)."""
    return min(max_request_bytes, MAX_JSON_BODY) if has_body_model else max_request_bytes


def _needs_key(dependant: Any, markers: Collection[Any]) -> bool:
    """Whether one of ``markers`` (the dependencies that demand a key) is in the tree."""
    stack = [dependant]
    while stack:
        node = stack.pop()
        if node.call in markers:
            return True
        stack.extend(node.dependencies)
    return False


def flat_routes(routes: list[Any]) -> list[Any]:
    """The routes of an app with included routers opened up (FastAPI may keep an included
    router as one entry), in matching order."""
    out: list[Any] = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        out.extend(flat_routes(list(inner.routes)) if inner is not None else [route])
    return out


@dataclass(frozen=True, slots=True)
class RouteLimits:
    """What one route demands of a body: at most ``limit`` bytes; a key first when ``keyed``;
    ``parsed`` when the framework parses it (a JSON body is then checked first)."""

    limit: int
    keyed: bool
    parsed: bool


class BodyRefused(HTTPException):
    """The body broke its limit or its deadline while the route read it (``code`` is the
    ``ApiError`` code; an ``HTTPException`` so the framework's body reader lets it through)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(STATUS[code], message, headers=_CLOSE)
        self.code: ErrorCode = code


def _is_json(scope: Scope) -> bool:
    """Whether the framework would parse this body as JSON (no type, or a JSON type)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            media = value.split(b";", 1)[0].strip().lower()
            return bool(media == b"application/json" or media.endswith(b"+json"))
    return True


async def _read_all(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise BodyRefused("bad_request", "the client went away before the body ended")
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` that gives ``body`` (read already) first."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


def _declared_length(scope: Scope) -> tuple[int | None, bool]:
    """(``Content-Length`` when given, whether the request carries a body at all)."""
    length: int | None = None
    chunked = False
    for name, value in scope["headers"]:
        if name == b"content-length":
            length = int(value) if value.isdigit() else None
        elif name == b"transfer-encoding":
            chunked = True
    return length, chunked or bool(length)


class RequestLimits:
    """The middleware (``app.add_middleware(RequestLimits, ...)``); see the module docstring.

    Args:
        app: the next ASGI app.
        store: the server's store (its config has the limits; it checks keys).
        routes: the app's routes (all mounted by now), to find the one a request goes to.
        key_schemes: the dependencies (security schemes) a route declares when it needs a
            key; such a route gets ``check_key`` run before its body is read.
        check_key: checks the request's credential the way the route would (its throttle
            included); raises ``ApiError``.
        render: turns an ``ApiError`` into the response the app would give.
    """

    def __init__(self, app: ASGIApp, *, store: Store, routes: list[Any],
                 key_schemes: Collection[Any], check_key: Callable[[Request], Any],
                 render: Render) -> None:
        self.app = app
        self.store = store
        self.routes = flat_routes(routes)
        self.key_schemes = key_schemes
        self.check_key = check_key
        self.render = render
        self._known: dict[int, RouteLimits] = {}

    def _limits(self, scope: Scope) -> RouteLimits:
        """The limits of the route ``scope`` goes to (the JSON limit when none matches)."""
        config = self.store.config
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is not Match.FULL:
                continue
            found = self._known.get(id(route))
            if found is None:
                dependant = getattr(route, "dependant", None)
                has_body = bool(dependant.body_params) if dependant is not None else False
                found = RouteLimits(
                    limit=route_limit(has_body_model=has_body or not isinstance(route, APIRoute),
                                      max_request_bytes=config.max_request_bytes),
                    keyed=dependant is not None and _needs_key(dependant, self.key_schemes),
                    parsed=has_body)
                self._known[id(route)] = found
            return found
        return RouteLimits(limit=route_limit(has_body_model=True,
                                             max_request_bytes=config.max_request_bytes),
                           keyed=False, parsed=False)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, exc: ApiError) -> None:
        response = await self.render(Request(scope, receive), exc)
        response.headers.update(_CLOSE)
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope["path"] or b"%00" in scope["query_string"]:
            await self._refuse(scope, receive, send, ApiError(
                "bad_request", "the URL holds a NUL character (%00), which names nothing"))
            return
        declared, has_body = _declared_length(scope)
        if not has_body:
            await self.app(scope, receive, send)
            return
        limits = self._limits(scope)
        if limits.keyed:
            try:
                await run_in_threadpool(self.check_key, Request(scope))
            except (ApiError, ServiceError) as exc:
                await self._refuse(scope, receive, send, api_error(exc))
                return
        if declared is not None and declared > limits.limit:
            await self._refuse(scope, receive, send, ApiError(
                "too_large", f"the request holds {declared} bytes; this route takes at most "
                             f"{limits.limit} (whileai serve --max-request-bytes)"))
            return
        timed = _timed_receive(receive, limits.limit, self.store)
        if limits.parsed and _is_json(scope):
            try:
                body = await _read_all(timed)
                if body.strip():
                    await run_in_threadpool(loads, body, where="the request body")
            except BodyRefused as exc:
                await self._refuse(scope, receive, send, ApiError(exc.code, str(exc.detail)))
                return
            except (ApiError, ServiceError) as exc:
                await self._refuse(scope, receive, send, api_error(exc))
                return
            timed = _replay(body, receive)
        await self.app(scope, timed, send)


def _timed_receive(receive: Receive, limit: int, store: Store) -> Receive:
    """``receive`` with the body counted against ``limit`` and read against the deadline."""
    config = store.config
    start = time.monotonic()
    received = 0
    done = False

    async def wrapped() -> Message:
        nonlocal received, done
        if done:
            return await receive()
        allowed = start + config.read_timeout + received / config.min_body_rate
        wait = min(float(config.read_timeout), allowed - time.monotonic())
        try:
            if wait <= 0:
                raise TimeoutError
            message = await asyncio.wait_for(receive(), wait)
        except (TimeoutError, asyncio.TimeoutError):
            raise BodyRefused("timeout", f"the body did not arrive in time ({received} bytes "
                                         f"in {time.monotonic() - start:.0f} s; a body must "
                                         f"keep up {config.min_body_rate} bytes/s)") from None
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyRefused("too_large", f"the body passed {limit} bytes, the most this "
                                               "route takes (whileai serve --max-request-bytes)")
            done = not message.get("more_body", False)
        else:
            done = True
        return message

    return wrapped
