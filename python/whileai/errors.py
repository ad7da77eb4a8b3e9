"""One small error hierarchy: every error the package raises on purpose is a ``WhileaiError``.

Each class also subclasses the builtin a caller would naturally catch (``ValueError`` for bad
input, ``RuntimeError`` for a failed run, ...), so ``except ValueError`` keeps working.

>>> from whileai.errors import RowError
>>> issubclass(RowError, ValueError)
True
"""

from __future__ import annotations

from whileai.secrets import mask_secrets

__all__ = [
    "AgentFailedWarning",
    "AuthError",
    "BackendError",
    "ConfigError",
    "InputError",
    "JudgeError",
    "PublishGateError",
    "QuotaError",
    "RowError",
    "SandboxError",
    "SpecError",
    "WhileaiError",
]


class WhileaiError(Exception):
    """Root of every error whileai raises on purpose; credential-shaped text in its message is
    masked (:func:`whileai.secrets.mask_secrets`), whatever a server echoed into it."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(mask_secrets(a) if isinstance(a, str) else a for a in args))


class SpecError(WhileaiError, ValueError):
    """The agent spec (tools, system prompt, spec folder) cannot be used as given."""


class RowError(WhileaiError, ValueError):
    """A row (or a JSONL line) does not follow the row contract."""


class ConfigError(WhileaiError, ValueError):
    """A setting, environment variable or keyword has a value that cannot be used."""


class JudgeError(WhileaiError, RuntimeError):
    """A judge could not be run at all (as opposed to one row failing, which is recorded)."""


class PublishGateError(WhileaiError, RuntimeError):
    """The publish gate refused a dataset: it is ungraded or carries no learning signal."""


class BackendError(WhileaiError, RuntimeError):
    """The native kernels are missing, stale, or a model endpoint failed for good."""


class AuthError(WhileaiError, PermissionError):
    """A model endpoint refused the credentials (HTTP 401/403)."""


class SandboxError(WhileaiError, RuntimeError):
    """Untrusted code cannot be isolated here (no working sandbox) and the caller did not opt
    out with ``unsafe_no_sandbox=True``."""


class QuotaError(WhileaiError, RuntimeError):
    """A model endpoint's quota is spent (HTTP 429 without a usable Retry-After)."""


class InputError(WhileaiError, FileNotFoundError):
    """An input path does not exist, or is a folder or other non-file where a file is needed."""


class AgentFailedWarning(UserWarning):
    """``simulate`` ended with no rows because the agent failed every rollout it was given.

    A warning, not an error: the returned run still says why (``stopped_because`` is
    ``"agent_failed"`` and ``search["first_agent_error"]`` holds the first failure), and a
    caller that expects failures can filter it. The CLI turns it into exit code 1.
    """
