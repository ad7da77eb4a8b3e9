"""How patient a model client is, and the two ways a call ends short of an answer.

:class:`RetryPolicy` holds the per-call timeouts and the context-shrink limits of a chat client;
its retry bounds become one :class:`whileai.retry.Retry` (the retry policy every HTTP caller
shares), so a chat call makes at most ``max_retries + 1`` HTTP attempts in all, whatever failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whileai.config import setting
from whileai.errors import BackendError, ConfigError, QuotaError
from whileai.retry import Retry

__all__ = ["ModelQuotaError", "RetryPolicy", "StoppedError"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How patient the client is. Tests pass tiny values; defaults suit real endpoints.

    ``max_retries`` retries after the first try (HTTP errors, timeouts, malformed bodies and
    replies without a usable message all count), within ``total_time`` seconds in all.

    >>> RetryPolicy(max_retries=2, backoff=0.1).retry().attempts
    3
    """

    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    timeout: float = 120.0
    connect_timeout: float = 10.0
    max_retry_after: float = 60.0
    total_time: float = 900.0
    jitter: float = 0.0
    seed: int = 0
    min_max_tokens: int = 16
    default_max_tokens: int = 1024

    def retry(self) -> Retry:
        """These bounds as the shared retry policy."""
        return Retry(attempts=self.max_retries + 1, total_time=self.total_time,
                     backoff=self.backoff, max_backoff=self.max_backoff,
                     max_retry_after=self.max_retry_after, jitter=self.jitter, seed=self.seed)

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        """Defaults, with ``WHILEAI_MODEL_TIMEOUT`` (seconds per call) and
        ``WHILEAI_MODEL_RETRIES`` applied when set.

        Raises:
            ConfigError: a setting is not a number.
        """
        values: dict[str, Any] = {}
        for name, field, kind in (("MODEL_TIMEOUT", "timeout", float),
                                  ("MODEL_RETRIES", "max_retries", int)):
            raw = setting(name)
            if raw is None:
                continue
            try:
                values[field] = kind(raw)
            except ValueError:
                raise ConfigError(f"WHILEAI_{name}={raw!r} is not a number; "
                                  f"set it to a {kind.__name__} or unset it") from None
        return cls(**values)


class ModelQuotaError(QuotaError):
    """A spent quota; ``role`` is ``"agent"``, ``"writer"`` or ``"judge"``."""

    def __init__(self, message: str, *, role: str) -> None:
        super().__init__(message)
        self.role = role

    @property
    def stopped_because(self) -> str:
        """The run's stop reason: ``agent_quota_exceeded``, ``writer_quota_exceeded``, ..."""
        return f"{self.role}_quota_exceeded"


class StoppedError(BackendError):
    """The client was stopped (the run ended) while a call was waiting to retry."""
