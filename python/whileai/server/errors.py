"""One error shape for every route: ``{"error": code, "message": text}`` with a stable code.

The client maps each code to a ``WhileaiError`` subclass (``whileai.platform.errors``). The
services raise their own errors (``services.problems``), which know nothing of HTTP; ``CODES``
is the one table that gives each its code (and so its status), used by the app's exception
handler, the pages and the request limits through :func:`api_error`.

>>> ApiError("not_found", "no dataset ds_x").status
404
>>> api_error(NotFound("no dataset ds_x")).code
'not_found'
"""

from __future__ import annotations

from typing import Literal

from whileai.server.services.problems import (
    Busy,
    Conflict,
    Forbidden,
    Invalid,
    NoCredential,
    NotFound,
    QuotaExceeded,
    RefusedCredential,
    ServiceError,
    SignupClosed,
    TooLarge,
)

__all__ = ["CODES", "STATUS", "ApiError", "ErrorCode", "api_error"]

ErrorCode = Literal[
    "bad_request", "no_key", "refused_key", "forbidden", "not_found", "conflict",
    "quota_exceeded", "too_large", "timeout", "busy", "signup_closed", "internal",
]

STATUS: dict[str, int] = {
    "bad_request": 400, "no_key": 401, "refused_key": 401, "forbidden": 403, "not_found": 404,
    "conflict": 409, "quota_exceeded": 403, "timeout": 408, "too_large": 413, "busy": 429,
    "signup_closed": 403, "internal": 500,
}


class ApiError(Exception):
    """An error a route answers with; ``status`` follows from ``code``; ``retry_after`` (seconds)
    goes out as the ``Retry-After`` header."""

    def __init__(self, code: ErrorCode, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = STATUS[code]
        self.retry_after = retry_after


CODES: dict[type[ServiceError], ErrorCode] = {
    Invalid: "bad_request", NoCredential: "no_key", RefusedCredential: "refused_key",
    Forbidden: "forbidden", NotFound: "not_found", Conflict: "conflict",
    QuotaExceeded: "quota_exceeded", TooLarge: "too_large", Busy: "busy",
    SignupClosed: "signup_closed",
}


def api_error(exc: ApiError | ServiceError) -> ApiError:
    """The answer to a service's error: its code from ``CODES`` (by its class or the nearest
    base listed), its message and ``retry_after``; an ``ApiError`` is returned as it is."""
    if isinstance(exc, ApiError):
        return exc
    codes = [CODES[cls] for cls in type(exc).__mro__ if cls in CODES]
    code: ErrorCode = codes[0] if codes else "internal"
    return ApiError(code, exc.message, retry_after=exc.retry_after)
