"""Connections that cannot be held open for nothing: a deadline on a request's headers.

uvicorn closes a kept-alive connection after ``timeout_keep_alive`` idle seconds, but only once
a first response went out, and it never bounds the time a client takes to send its headers: a
connection opened and left silent, or fed a header byte every few seconds ("slowloris"), stays
open for good. ``guarded_protocol`` returns uvicorn's HTTP protocol with a header deadline
armed when the connection opens and again after every response, and cancelled when a request's
headers are complete; when it passes, the connection is closed. The body has its own deadline
(``whileai.server.limits``).

>>> guarded_protocol(30).header_timeout
30.0
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["guarded_protocol"]


class _Guarded(HttpToolsProtocol):
    """uvicorn's httptools protocol with the header deadline (``header_timeout`` seconds)."""

    header_timeout = 30.0
    _header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:  # a connection: headers due
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:  # a request began: the body deadline takes over
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:  # answered: the next request's headers are due
        pipelined = bool(self.pipeline)  # (unless they came already and wait their turn)
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def guarded_protocol(header_timeout: float) -> type[_Guarded]:
    """uvicorn's HTTP protocol class with a ``header_timeout``-second header deadline (pass it
    as ``uvicorn.run(..., http=...)``)."""
    return type("GuardedHttpProtocol", (_Guarded,), {"header_timeout": float(header_timeout)})
