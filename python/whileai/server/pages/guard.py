"""What guards the pages: security headers on every response, and CSRF protection of forms.

:class:`PageGuard` (ASGI middleware) adds the headers below to every response and gives each
browser a random CSRF cookie. A form's token is the HMAC of that cookie under the server's
key, so only a page this server rendered for this browser carries it. Every form handler calls
:func:`check_form`: the request's ``Origin`` (else ``Referer``) must be this server, and the
token must match the cookie. Templates put the hidden field in with :func:`csrf_field`
(the token of the request being rendered, kept in a context variable that the middleware sets
for each request, so a template needs no argument for it).

>>> HEADERS["x-frame-options"]
'DENY'
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from whileai.server.errors import ApiError
from whileai.simulations.report.html import Html

__all__ = ["CSP", "CSRF_COOKIE", "CSRF_FIELD", "HEADERS", "PageGuard", "SafeHtml",
           "check_form", "csrf_field", "csrf_token", "secure_cookies"]

API_PREFIX = "/v1/"  # requests under it get the headers, not the CSRF cookie
CSRF_COOKIE = "whileai_csrf"
CSRF_FIELD = "csrf"
# No source outside this server; no framing; forms post only here; no plugins; no <base>.
CSP = ("default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}
# The token of the request being handled (set by PageGuard, read by csrf_token).
_TOKEN: contextvars.ContextVar[str] = contextvars.ContextVar("whileai_csrf_token", default="")


def _token(secret: bytes, nonce: str) -> str:
    return hmac.new(secret, b"csrf|" + nonce.encode(), hashlib.sha256).hexdigest()


def secure_cookies(scope: Scope | Request) -> bool:
    """Whether cookies set now get ``Secure``: ``--secure-cookies``, or the request came over
    https (directly or as a trusted proxy's ``X-Forwarded-Proto`` says)."""
    raw = scope.scope if isinstance(scope, Request) else scope
    return bool(raw["app"].state.store.config.secure_cookies or raw.get("scheme") == "https")


def csrf_token() -> str:
    """The CSRF token of the page being rendered (empty outside a request)."""
    return _TOKEN.get()


class SafeHtml(Html):
    """HTML that Jinja2's autoescape leaves alone too (it asks for ``__html__``)."""

    def __html__(self) -> str:
        return str(self)


def csrf_field() -> SafeHtml:
    """The hidden form field every POST form of the pages carries (in a template:
    ``{{ csrf_field() }}``).

    >>> csrf_field()  # outside a request the token is empty
    '<input type="hidden" name="csrf" value="">'
    """
    return SafeHtml(f'<input type="hidden" name="{CSRF_FIELD}" value="{csrf_token()}">')


def _same_origin(request: Request) -> bool:
    """No Origin/Referer (not a browser) or one naming this server's host and port."""
    claimed = request.headers.get("origin") or request.headers.get("referer")
    if claimed is None:
        return True
    return urlsplit(claimed).netloc.lower() == request.headers.get("host", "").lower()


def check_form(request: Request, token: str) -> None:
    """Refuse a form post from another site or without this browser's token.

    Raises:
        ApiError: ``forbidden``, saying which check failed.
    """
    if not _same_origin(request):
        raise ApiError("forbidden", "this form was sent from another site; open the page on "
                       "this server and send it from there")
    nonce = request.cookies.get(CSRF_COOKIE, "")
    secret: bytes = request.app.state.store.secret
    if not nonce or not hmac.compare_digest(token, _token(secret, nonce)):
        raise ApiError("forbidden", "the form's token is missing or stale; reload the page "
                       "and send the form again")


class PageGuard:
    """ASGI middleware: the security headers on every response, the CSRF cookie for pages."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        fresh = False
        if not scope["path"].startswith(API_PREFIX):  # the API renders no form: no token work
            nonce = _cookie(scope, CSRF_COOKIE)
            fresh = nonce is None or len(nonce) != 32
            if fresh:
                nonce = secrets.token_hex(16)
            _TOKEN.set(_token(scope["app"].state.store.secret, str(nonce)))

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                if fresh and _is_html(headers):
                    headers.append((b"set-cookie", _set_cookie(str(nonce), scope)))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_guarded)


def _cookie(scope: Scope, name: str) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            found = cookie_parser(value.decode("latin-1")).get(name)
            if found is not None:
                return found
    return None


def _is_html(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)


def _set_cookie(nonce: str, scope: Scope) -> bytes:
    attrs: list[Any] = [f"{CSRF_COOKIE}={nonce}", "Path=/", "HttpOnly", "SameSite=Strict"]
    if secure_cookies(scope):
        attrs.append("Secure")
    return "; ".join(attrs).encode()
