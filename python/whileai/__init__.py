"""whileai: turn an agent's tools and system prompt into post-training data you can trust.

>>> import whileai
>>> whileai.BACKEND in ("rust", "python")
True
"""

from __future__ import annotations

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
    "configure",
    "context",
]
