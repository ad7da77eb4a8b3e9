"""One error shape for every route: ``{"error": code, "message": text}`` with a stable code.

The client maps each code to a ``WhileaiError`` subclass (``whileai.platform.errors``).

>>> ApiError("not_found", "no dataset ds_x").status
404
"""

from __future__ import annotations

from typing import Literal

__all__ = ["STATUS", "ApiError", "ErrorCode"]

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
