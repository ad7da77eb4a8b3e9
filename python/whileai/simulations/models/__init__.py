"""Model backends, the layer under generate, judge and clean: spec parsing, the chat client,
reply parsing, choosing the spec for each role, and the embedders.

Nothing here imports a stage. The stages build their objects on top: ``generate.resolve``
(``resolve_agent`` / ``resolve_writer``) and ``judge.llm_judge.resolve_judge``. See ``spec.py``
for the accepted spec forms.
"""

from __future__ import annotations

from whileai.simulations.models.client import (
    ChatClient,
    ModelQuotaError,
    RetryPolicy,
    StoppedError,
)
from whileai.simulations.models.reply import Reply, ToolCall, parse_reply
from whileai.simulations.models.resolve import resolve_spec
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
    "resolve_spec",
]
