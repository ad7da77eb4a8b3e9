"""``whileai view``'s app: the row pages over one local source, on 127.0.0.1, no account.

With no account, the app guards itself the way a loopback service must: it answers only a
loopback ``Host`` (so a web page that rebinds its name to 127.0.0.1 cannot read the rows) and
takes a label only from its own origin (so another page cannot post one).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
>>> _ = path.write_text('{"prompt": "a", "reward": 1}\\n')
>>> app = viewer_app(path)
>>> app.state.viewers["local"].name, len(app.state.viewers["local"].index)
('rows.jsonl', 1)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from whileai._version import __version__
from whileai.server.pages import comparison, hacks, render, rows
from whileai.server.pages.rows import COMPARE_ID, LOCAL_ID, Viewer
from whileai.server.pages.rowsource import open_local

__all__ = ["serve", "viewer_app"]


def _viewer(path: str | Path, show_privileged: bool, annotator: str) -> Viewer:
    source = open_local(path)
    return Viewer(name=source.path.name, index=source.index, labels=source.labels,
                  show_privileged=show_privileged, annotator=annotator)


def viewer_app(path: str | Path, *, compare: str | Path | None = None,
               show_privileged: bool = False, annotator: str = "local") -> FastAPI:
    """The viewer for the rows at ``path`` (and ``compare``'s, to set beside them), indexed
    once, here."""
    app = FastAPI(title="whileai view", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.viewers = {LOCAL_ID: _viewer(path, show_privileged, annotator)}
    if compare is not None:
        app.state.viewers[COMPARE_ID] = _viewer(compare, show_privileged, annotator)
    app.include_router(render.router)
    app.include_router(rows.router)
    app.include_router(comparison.router)
    app.include_router(hacks.router)

    @app.middleware("http")
    async def loopback_only(request: Request, call_next: Any) -> Response:
        refused = _refused(request.headers.get("host", ""), request.headers.get("origin"),
                           request.method)
        if refused:
            return PlainTextResponse(refused, status_code=403)
        response: Response = await call_next(request)
        return response

    @app.get("/", include_in_schema=False)
    def home() -> Response:
        return RedirectResponse(f"/datasets/{LOCAL_ID}/rows", status_code=303)

    return app


_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def _refused(host: str, origin: str | None, method: str) -> str:
    """Why a request is refused, or "": a Host that is not loopback (a DNS-rebinding page
    reading the rows), or a POST from another origin (a page labelling behind your back).

    >>> _refused("127.0.0.1:7000", None, "GET"), _refused("evil.example:7000", None, "GET")
    ('', 'this viewer answers only on 127.0.0.1 (Host: evil.example:7000)')
    >>> _refused("127.0.0.1:7000", "http://evil.example", "POST")
    'a label may come only from this viewer, not from http://evil.example'
    """
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    if name not in _LOOPBACK:
        return f"this viewer answers only on 127.0.0.1 (Host: {host})"
    if method == "POST" and origin is not None and origin not in (
            f"http://{host}", *(f"http://{n}:{host.rsplit(':', 1)[-1]}" for n in _LOOPBACK)):
        return f"a label may come only from this viewer, not from {origin}"
    return ""


def serve(app: Any, *, port: int, open_browser: bool) -> None:
    """Serve ``app`` on 127.0.0.1 until interrupted, printing the URL (and opening it)."""
    import socket
    import sys
    import threading
    import webbrowser

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/datasets/{LOCAL_ID}/rows"
    viewer: Viewer = app.state.viewers[LOCAL_ID]
    print(f"whileai view: {len(viewer.index)} rows of {viewer.name} at {url} "
          f"(labels go to {viewer.labels}); Ctrl-C stops", file=sys.stderr, flush=True)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                           timeout_graceful_shutdown=2))
    server.run(sockets=[sock])
