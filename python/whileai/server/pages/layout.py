"""Small helpers the page handlers share: the page size, the page number, a link cell."""

from __future__ import annotations

from typing import Any

__all__ = ["PAGE_SIZE", "link", "page_no"]

PAGE_SIZE = 50
MAX_PAGE = (2**31 - 1) // PAGE_SIZE  # a page past it would ask SQL for an offset it refuses


def page_no(request: Any, name: str = "page") -> int:
    """The zero-based page number in the query (0 when absent or not a number; a page past
    what SQL can offset is the last one it can)."""
    raw = request.query_params.get(name, "0")
    return min(int(raw), MAX_PAGE) if raw.isdigit() and len(raw) < 12 else 0


def link(href: str, text: Any) -> dict[str, str]:
    """A table cell that is a link (the ``table`` component prints it as ``<a>``, escaped).

    >>> link("/runs/r1", "grpo")
    {'href': '/runs/r1', 'text': 'grpo'}
    """
    return {"href": href, "text": str(text)}
