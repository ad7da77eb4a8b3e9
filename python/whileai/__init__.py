"""whileai: turn an agent's tools and system prompt into post-training data you can trust.

>>> import whileai
>>> whileai.BACKEND in ("rust", "python")
True
"""

from __future__ import annotations

from typing import Any

from whileai._backend import BACKEND
from whileai._version import __version__
from whileai.context import configure, context
from whileai.errors import (
    AgentFailedWarning,
    AuthError,
    BackendError,
    ConfigError,
    InputError,
    JudgeError,
    PublishGateError,
    QuotaError,
    RowError,
    SandboxError,
    SpecError,
    WhileaiError,
)

__all__ = [
    "BACKEND",
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
    "__version__",
    "account",
    "configure",
    "context",
    "issue_delegated_credential",
    "refresh_delegated_credential",
]

# The platform client loads on first use, so `import whileai` does not import requests.
_PLATFORM = ("account", "issue_delegated_credential", "refresh_delegated_credential")


def __getattr__(name: str) -> Any:
    if name in _PLATFORM:
        import importlib

        return getattr(importlib.import_module("whileai.platform.account"), name)
    raise AttributeError(f"module 'whileai' has no attribute {name!r}")
