"""Signing in to the pages: a key is exchanged for a short-lived credential kept in a cookie.

The key itself never goes into the cookie; the cookie holds a delegated credential (signed by
the server, 12 hours) that ``authenticate`` accepts like a key. The cookie is HttpOnly and
SameSite=Strict, so page forms cannot be posted from another site.
"""

from __future__ import annotations

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from whileai.server.errors import ApiError
from whileai.server.pages.render import render
from whileai.server.routes.deps import StoreDep
from whileai.server.services import Account, Store
from whileai.server.services.accounts import authenticate, issue_delegated

__all__ = ["COOKIE", "page_account", "router"]

COOKIE = "whileai_session"
TTL = 12 * 3600
router = APIRouter(include_in_schema=False)


def page_account(store: Store, request: Request) -> Account | None:
    """The account behind the session cookie, or None (not signed in, or expired)."""
    token = request.cookies.get(COOKIE)
    if not token:
        return None
    try:
        return authenticate(store, token)
    except ApiError:
        return None


def _form(message: str = "", status_code: int = 200) -> HTMLResponse:
    return render("signin.html", status_code, title="Sign in", message=message,
                  signed_in=False)


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
def signin(store: StoreDep, key: str = Form(...)) -> Response:
    """Check the key; on success set the session cookie and go to the datasets."""
    try:
        account = authenticate(store, key.strip())
    except ApiError:
        return _form("That key was refused.", 401)
    credential = issue_delegated(store, account, ttl_seconds=TTL, name="pages")["credential"]
    response = RedirectResponse("/datasets", status_code=303)
    response.set_cookie(COOKIE, credential, max_age=TTL, httponly=True, samesite="strict")
    return response


@router.post("/signout")
def signout() -> Response:
    """Forget the session."""
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE)
    return response
