"""Turning a template and its values into a page: one Jinja2 environment with autoescaping.

Every value a template prints is escaped unless code marked it safe with ``Markup`` (the SVG
charts of ``simulations.report.svg``, which escape their own text); so a forgotten call can no
longer open a stored-XSS hole. The templates and the two assets (``whileai.css``,
``whileai.js``) ship inside the package; pages make no external request and run no inline
script, so a strict Content-Security-Policy (``script-src 'self'``) holds.

>>> cell(0.123456), cell(None), cell([0.1, 0.25])
('0.123', '-', '[0.1, 0.25]')
"""

from __future__ import annotations

import time
from functools import lru_cache
from importlib import resources
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from whileai.errors import ConfigError
from whileai.server.pages.guard import csrf_field

__all__ = ["ASSETS", "cell", "environment", "render", "render_text", "router", "when"]

ASSETS = {"whileai.css": "text/css; charset=utf-8",
          "whileai.js": "text/javascript; charset=utf-8"}
router = APIRouter(include_in_schema=False)


def cell(value: Any) -> str:
    """A table cell's text: ``-`` for nothing, three significant digits, an interval in brackets.

    >>> cell(2), cell("a"), cell((0.5, 0.75))
    ('2', 'a', '[0.5, 0.75]')
    """
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return f"[{value[0]:.3g}, {value[1]:.3g}]"
    return str(value)


def when(epoch: float | None) -> str:
    """A UTC date and time for a table cell.

    >>> when(0), when(None)
    ('1970-01-01 00:00', '-')
    """
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch))


@lru_cache(maxsize=1)
def environment() -> Any:
    """The one Jinja2 environment (autoescape on, undefined names an error)."""
    try:
        import jinja2
    except ImportError as exc:  # pragma: no cover - the server extra brings it
        raise ImportError("the pages need Jinja2: pip install 'whileai[server]'") from exc
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("whileai.server.pages", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=False)
    env.filters["cell"] = cell
    env.filters["when"] = when
    env.globals["csrf_field"] = csrf_field  # the request's token (pages.guard), in POST forms
    return env


def render_text(template: str, /, **values: Any) -> str:
    """The HTML of ``template`` filled with ``values``."""
    text: str = environment().get_template(template).render(**values)
    return text


def render(template: str, status_code: int = 200, /, **values: Any) -> HTMLResponse:
    """An HTML response of ``template`` filled with ``values``."""
    return HTMLResponse(render_text(template, **values), status_code=status_code)


@lru_cache(maxsize=len(ASSETS))
def _asset(name: str) -> bytes:
    if name not in ASSETS:
        raise ConfigError(f"no page asset {name!r}; the assets are {sorted(ASSETS)}")
    return resources.files("whileai.server.pages").joinpath("static").joinpath(name).read_bytes()


@router.get("/static/{name}")
def asset(name: str) -> Response:
    """The stylesheet and the script every page links (404 for any other name)."""
    if name not in ASSETS:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(_asset(name), media_type=ASSETS[name],
                    headers={"Cache-Control": "public, max-age=3600"})
