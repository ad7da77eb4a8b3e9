"""One way to call the platform: find the key and URL, retry under :data:`POLICY`, map errors.

``call`` returns the ``requests.Response`` of a successful request; every failure becomes a
``WhileaiError`` subclass from ``whileai.platform.errors``. A request body may be a callable
returning the bytes or an iterator of chunks, so a retried upload sends everything again.
Retries follow the shared policy of :mod:`whileai.retry` (429, 500/502/503/504 and refused
connections; ``Retry-After`` honoured; an attempt and a time bound); callers above ``call``
(the training sender) send once and leave retrying to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import requests

from whileai.platform.credentials import find_key, find_url
from whileai.platform.errors import NoKeyError, PlatformError, UnreachableError, error_for
from whileai.retry import RETRY_STATUSES, Retry
from whileai.secrets import mask_secrets

__all__ = ["POLICY", "RETRY_STATUSES", "Connection", "call", "connect", "json_of"]

# four tries within two minutes, waits 0.25 s, 0.5 s, 1 s (or the server's Retry-After, <= 30 s)
POLICY = Retry(attempts=4, total_time=120.0, backoff=0.25, max_backoff=8.0,
               max_retry_after=30.0)
ONCE = Retry(attempts=1)


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


def _raise_for(response: requests.Response, method: str, where: str, *, tries: int = 1,
               key: str | None = None) -> None:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        code, message = body["error"], str(body.get("message", ""))
    else:
        code, message = "http", (response.text or response.reason or "")[:300]
    gave_up = f", gave up after {tries} attempts" if tries > 1 else ""
    raise error_for(code, mask_secrets(
        f"{message} ({method} {where}: HTTP {response.status_code}{gave_up})", keys=(key,)))


def call(conn: Connection, method: str, path: str, *, params: dict[str, Any] | None = None,
         json: Any = None, body: Callable[[], bytes | Iterable[bytes] | Any] | None = None,
         headers: dict[str, str] | None = None, stream: bool = False,
         timeout: float = 120.0, retry: bool = True,
         policy: Retry | None = None) -> requests.Response:
    """Send one request (retrying 429, 5xx and refused connections under ``policy``, by default
    :data:`POLICY`; ``retry=False`` tries once) and return the response.

    Raises:
        UnreachableError: no server at ``conn.base_url`` after the retries.
        PlatformError (or a subclass): the server answered with an error.
    """
    url = conn.base_url + path
    sent = dict(headers or {})
    if conn.api_key:
        sent["Authorization"] = f"Bearer {conn.api_key}"
    query = {k: v for k, v in (params or {}).items() if v is not None}
    budget = ((policy or POLICY) if retry else ONCE).start()
    while True:
        tries = budget.tried()
        try:
            response = requests.request(
                method, url, params=query, json=json, data=None if body is None else body(),
                headers=sent, stream=stream, timeout=timeout)
        except requests.ConnectionError as exc:
            if budget.again():
                continue
            raise UnreachableError(
                f"no whileai server answers at {conn.base_url} ({type(exc).__name__}, "
                f"{tries} attempt{'s' if tries > 1 else ''}); "
                "start one with `whileai serve` or set WHILEAI_BASE_URL"
            ) from None
        except requests.RequestException as exc:
            raise PlatformError(f"{method} {path} failed: {type(exc).__name__}") from None
        if response.status_code in RETRY_STATUSES:
            if budget.again(retry_after=response.headers.get("Retry-After")):
                response.close()
                continue
            if tries > 1:  # the budget is spent: say where and how often
                _raise_for(response, method, url, tries=tries, key=conn.api_key)
        if response.status_code >= 400:
            _raise_for(response, method, path, key=conn.api_key)
        return response


def json_of(response: requests.Response) -> Any:
    """The JSON body of a successful response."""
    try:
        return response.json()
    except ValueError as exc:
        raise PlatformError(f"the server answered {response.url} with something that is not "
                            "JSON; is WHILEAI_BASE_URL a whileai server?") from exc
