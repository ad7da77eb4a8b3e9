"""One way to call the platform: find the key and URL, retry 429/5xx, map errors.

``call`` returns the ``requests.Response`` of a successful request; every failure becomes a
``WhileaiError`` subclass from ``whileai.platform.errors``. A request body may be a callable
returning the bytes or an iterator of chunks, so a retried upload sends everything again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import requests

from whileai.platform.credentials import find_key, find_url
from whileai.platform.errors import NoKeyError, PlatformError, UnreachableError, error_for

__all__ = ["RETRY_STATUSES", "Connection", "call", "connect", "json_of"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
ATTEMPTS = 4
BACKOFF = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection:
    """The server URL and the key to send (``None`` for public routes)."""

    base_url: str
    api_key: str | None

    def __repr__(self) -> str:  # never print the key
        return f"Connection(base_url={self.base_url!r}, api_key={'***' if self.api_key else None})"


def connect(api_key: str | None = None, *, base_url: str | None = None,
            need_key: bool = True) -> Connection:
    """Resolve the URL and key.

    Raises:
        NoKeyError: ``need_key`` and no key anywhere.

    >>> connect("k", base_url="http://127.0.0.1:1").base_url
    'http://127.0.0.1:1'
    """
    key = find_key(api_key)
    if need_key and not key:
        raise NoKeyError(
            "no whileai API key: pass api_key=, set WHILEAI_API_KEY, or run whileai login "
            "(a self-hosted server mints keys with whileai serve --create-key NAME)"
        )
    return Connection(base_url=find_url(base_url), api_key=key)


def _wait(response: requests.Response | None, attempt: int) -> float:
    if response is not None:
        after = response.headers.get("Retry-After", "")
        if after.isdigit():
            return min(float(after), 30.0)
    return BACKOFF * float(1 << attempt)


def _raise_for(response: requests.Response, method: str, path: str) -> None:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        code, message = body["error"], str(body.get("message", ""))
    else:
        code, message = "http", (response.text or response.reason or "")[:300]
    raise error_for(code, f"{message} ({method} {path}: HTTP {response.status_code})")


def call(conn: Connection, method: str, path: str, *, params: dict[str, Any] | None = None,
         json: Any = None, body: Callable[[], bytes | Iterable[bytes] | Any] | None = None,
         headers: dict[str, str] | None = None, stream: bool = False,
         timeout: float = 120.0, retry: bool = True) -> requests.Response:
    """Send one request (retrying 429, 5xx and refused connections) and return the response.

    Raises:
        UnreachableError: no server at ``conn.base_url`` after the retries.
        PlatformError (or a subclass): the server answered with an error.
    """
    url = conn.base_url + path
    sent = dict(headers or {})
    if conn.api_key:
        sent["Authorization"] = f"Bearer {conn.api_key}"
    query = {k: v for k, v in (params or {}).items() if v is not None}
    attempts = ATTEMPTS if retry else 1
    for attempt in range(attempts):
        last = attempt == attempts - 1
        try:
            response = requests.request(
                method, url, params=query, json=json, data=None if body is None else body(),
                headers=sent, stream=stream, timeout=timeout)
        except requests.ConnectionError as exc:
            if last:
                raise UnreachableError(
                    f"no whileai server answers at {conn.base_url} ({type(exc).__name__}); "
                    "start one with `whileai serve` or set WHILEAI_BASE_URL"
                ) from None
            time.sleep(_wait(None, attempt))
            continue
        except requests.RequestException as exc:
            raise PlatformError(f"{method} {path} failed: {type(exc).__name__}") from None
        if response.status_code in RETRY_STATUSES and not last:
            response.close()
            time.sleep(_wait(response, attempt))
            continue
        if response.status_code >= 400:
            _raise_for(response, method, path)
        return response
    raise AssertionError("unreachable")  # pragma: no cover


def json_of(response: requests.Response) -> Any:
    """The JSON body of a successful response."""
    try:
        return response.json()
    except ValueError as exc:
        raise PlatformError(f"the server answered {response.url} with something that is not "
                            "JSON; is WHILEAI_BASE_URL a whileai server?") from exc
