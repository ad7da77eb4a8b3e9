"""What can go wrong talking to a platform server, as ``WhileaiError`` subclasses.

The server answers ``{"error": code, "message": ...}``; ``error_for`` picks the class by code.
No message ever contains an API key.

>>> issubclass(NotFoundError, LookupError), issubclass(KeyRefusedError, PermissionError)
(True, True)
"""

from __future__ import annotations

from whileai.errors import AuthError, QuotaError, WhileaiError

__all__ = [
    "KeyRefusedError", "NoKeyError", "NotFoundError", "PlatformError", "PlatformQuotaError",
    "RequestTooLargeError", "UnreachableError", "error_for",
]


class PlatformError(WhileaiError, RuntimeError):
    """The platform server refused or failed a request (the message says why)."""


class NoKeyError(AuthError):
    """No API key was found (argument, WHILEAI_API_KEY, or a saved login)."""


class KeyRefusedError(AuthError):
    """The server refused the API key (unknown, revoked or expired)."""


class NotFoundError(WhileaiError, LookupError):
    """No such dataset or agent on this account (or it is not public)."""


class PlatformQuotaError(QuotaError):
    """The push would pass the account's storage or rows-per-dataset quota; nothing was stored."""


class RequestTooLargeError(PlatformQuotaError):
    """The request is bigger than the server accepts (HTTP 413)."""


class UnreachableError(WhileaiError, ConnectionError):
    """No platform server answers at the URL."""


_BY_CODE: dict[str, type[WhileaiError]] = {
    "no_key": NoKeyError, "refused_key": KeyRefusedError, "forbidden": KeyRefusedError,
    "signup_closed": KeyRefusedError, "not_found": NotFoundError,
    "quota_exceeded": PlatformQuotaError, "too_large": RequestTooLargeError,
}


def error_for(code: str, message: str) -> WhileaiError:
    """The exception for a server error code.

    >>> type(error_for("not_found", "no dataset ds_1")).__name__
    'NotFoundError'
    """
    return _BY_CODE.get(code, PlatformError)(message)
