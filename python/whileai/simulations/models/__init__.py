"""Model backends: spec parsing, the chat client, and resolving a model for each role.

The engine calls :func:`resolve_agent` / :func:`resolve_writer`; grading calls
:func:`resolve_judge`. See ``spec.py`` for the accepted spec forms.
"""

from __future__ import annotations

from whileai.simulations.models.client import (
    ChatClient,
    ModelQuotaError,
    RetryPolicy,
    StoppedError,
)
from whileai.simulations.models.reply import Reply, ToolCall, parse_reply
from whileai.simulations.models.resolve import (
    resolve_agent,
    resolve_judge,
    resolve_spec,
    resolve_writer,
)
from whileai.simulations.models.spec import (
    ACCEPTED_FORMS,
    ModelSpec,
    local_model,
    parse_spec,
)

__all__ = [
    "ACCEPTED_FORMS",
    "ChatClient",
    "ModelQuotaError",
    "ModelSpec",
    "Reply",
    "RetryPolicy",
    "StoppedError",
    "ToolCall",
    "local_model",
    "parse_reply",
    "parse_spec",
    "resolve_agent",
    "resolve_judge",
    "resolve_spec",
    "resolve_writer",
]
