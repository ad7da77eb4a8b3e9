"""The services' errors: which rule refused a request, with no word of HTTP.

A service raises one of these; the HTTP side maps each class to its stable error code and
status in one table (``server.errors.CODES``), for the routes, the pages and the request limits.
Each subclasses the builtin it is closest to, so plain callers may catch ``ValueError`` or
``LookupError``.

>>> raise NotFound("no dataset ds_x on this account")
Traceback (most recent call last):
whileai.server.services.problems.NotFound: no dataset ds_x on this account
"""

from __future__ import annotations

from whileai.errors import WhileaiError

__all__ = ["Busy", "Conflict", "Forbidden", "Invalid", "NoCredential", "NotFound",
           "QuotaExceeded", "RefusedCredential", "ServiceError", "SignupClosed", "TooLarge"]


class ServiceError(WhileaiError):
    """A request a service refuses; ``retry_after`` (seconds) says when trying again may work."""

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class Invalid(ServiceError, ValueError):
    """The request is malformed or names a value out of range."""


class NoCredential(ServiceError, PermissionError):
    """The request needs a credential and sent none."""


class RefusedCredential(ServiceError, PermissionError):
    """The credential is unknown, malformed, revoked or expired."""


class Forbidden(ServiceError, PermissionError):
    """The credential is valid but its kind or scope does not allow this."""


class NotFound(ServiceError, LookupError):
    """Nothing of that id in the caller's account."""


class Conflict(ServiceError):
    """The request clashes with what is stored (a name taken, a gate refusing)."""


class QuotaExceeded(ServiceError):
    """The account's storage or row quota would be passed."""


class TooLarge(ServiceError):
    """One piece of the request is bigger than the server takes."""


class Busy(ServiceError):
    """The server or the caller is throttled for now; see ``retry_after``."""


class SignupClosed(ServiceError):
    """This server does not let anyone sign up."""
