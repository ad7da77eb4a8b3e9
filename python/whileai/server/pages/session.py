"""Signing in to the pages: an API key opens a page session kept in a cookie.

The key itself never goes into the cookie; the cookie holds a page session (``wps_...``,
``services.sessions``, 12 hours) that only the pages accept, and that sign-out revokes on the
server. The cookie is HttpOnly, SameSite=Strict and (over https or with ``--secure-cookies``)
Secure. Both forms carry a CSRF token and are refused from another origin (``pages.guard``);
failed sign-ins are throttled per client address like every credential check.
"""

from __future__ import annotations

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from whileai.server.errors import ApiError, api_error
from whileai.server.pages.guard import check_form, secure_cookies
from whileai.server.pages.render import render
from whileai.server.routes.deps import StoreDep, checked
from whileai.server.services import Account, Store
from whileai.server.services.problems import ServiceError
from whileai.server.services.sessions import (
    SESSION_TTL,
    close_session,
    open_session,
    session_account,
)

__all__ = ["COOKIE", "page_account", "router"]

COOKIE = "whileai_session"
router = APIRouter(include_in_schema=False)


def page_account(store: Store, request: Request) -> Account | None:
    """The account behind the session cookie, or None (not signed in, signed out, expired)."""
    token = request.cookies.get(COOKIE)
    if not token:
        return None
    try:
        return session_account(store, token)
    except ServiceError:
        return None


def _form(message: str = "", status: int = 200) -> HTMLResponse:
    return render("signin.html", status, title="Sign in", message=message, signed_in=False)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, store: StoreDep) -> Response:
    """The datasets when signed in, else the sign-in form."""
    if page_account(store, request) is not None:
        return RedirectResponse("/datasets", status_code=303)
    return _form()


@router.get("/signin", response_class=HTMLResponse)
def signin_form() -> Response:
    """The sign-in form."""
    return _form()


@router.post("/signin", response_class=HTMLResponse)
def signin(request: Request, store: StoreDep, key: str = Form(...),
           csrf: str = Form("")) -> Response:
    """Check the key; on success open a session, set its cookie and go to the datasets."""
    try:
        check_form(request, csrf)
    except ApiError as exc:
        return _form(exc.message, status=exc.status)
    try:
        token = open_session(store, checked(request, store, key.strip()), ttl_seconds=SESSION_TTL)
    except ServiceError as exc:
        answer = api_error(exc)
        if answer.code == "busy":
            response = _form(answer.message, status=answer.status)
            response.headers["Retry-After"] = str(answer.retry_after)
            return response
        return _form("That key was refused." if answer.code == "refused_key" else answer.message,
                     status=answer.status)
    done = RedirectResponse("/datasets", status_code=303)
    done.set_cookie(COOKIE, token, max_age=SESSION_TTL, httponly=True, samesite="strict",
                    secure=secure_cookies(request))
    return done


@router.post("/signout")
def signout(request: Request, store: StoreDep, csrf: str = Form("")) -> Response:
    """End the session on the server (its cookie is refused from now on) and forget it."""
    try:
        check_form(request, csrf)
    except ApiError as exc:
        return render("notfound.html", exc.status, title="Sign out", message=exc.message)
    token = request.cookies.get(COOKIE)
    if token:
        close_session(store, token)
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE, httponly=True, samesite="strict",
                           secure=secure_cookies(request))
    return response
