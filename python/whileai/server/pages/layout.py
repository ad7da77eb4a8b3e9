"""The frame every page shares: the document, the navigation, and small formatting helpers."""

from __future__ import annotations

import time
from html import escape

from whileai.server.pages.guard import csrf_field
from whileai.simulations.report.html import page, table

__all__ = ["PAGE_SIZE", "document", "pager", "table", "when"]

PAGE_SIZE = 50
_NAV = [("/datasets", "Datasets"), ("/traces", "Traces"), ("/runs", "Runs"),
        ("/catalog", "Catalog")]


def document(title: str, body: str, *, signed_in: bool = True) -> str:
    """A page with the navigation bar (and a sign-out button when signed in)."""
    links = "".join(f'<a href="{href}">{label}</a>' for href, label in _NAV)
    out = ('<form method="post" action="/signout" style="display:inline">'
           f'{csrf_field()}<button type="submit">Sign out</button></form>') if signed_in else (
        '<a href="/signin">Sign in</a>')
    nav = (f'<nav aria-label="main"><strong>whileai</strong> &nbsp; {links} {out}</nav>')
    return page(f"{title} · whileai", body, nav=nav)


def when(epoch: float | None) -> str:
    """A UTC date and time for a table cell."""
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch))


def pager(path: str, page_no: int, total: int, size: int = PAGE_SIZE) -> str:
    """Previous / next links for a paginated table."""
    last = max(0, (total - 1) // size)
    parts = [f"page {page_no + 1} of {last + 1}"]
    if page_no > 0:
        parts.insert(0, f'<a href="{escape(path)}?page={page_no - 1}">previous</a>')
    if page_no < last:
        parts.append(f'<a href="{escape(path)}?page={page_no + 1}">next</a>')
    return f'<p class="muted">{" · ".join(parts)}</p>'

