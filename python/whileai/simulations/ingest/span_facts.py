"""What a conversation's spans say about its row besides the messages: which spans are tool
calls or agent invocations, the reward, the model that answered and the token usage.

>>> from whileai.simulations.ingest.otlp import decode_spans
>>> spans, _ = decode_spans([{"traceId": "t", "spanId": "a", "name": "chat",
...     "attributes": {"gen_ai.response.model": "m-1", "gen_ai.usage.input_tokens": 5}}])
>>> model_of(spans), usage_of(spans)
('m-1', {'input_tokens': 5})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from whileai.simulations.ingest.otlp import Span

__all__ = ["OPERATION_NAME", "TOOL_NAME", "USAGE_KEYS", "is_agent_span", "is_tool_span",
           "model_of", "reward_of", "usage_of"]

OPERATION_NAME = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
_USAGE = (
    ("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
    ("output_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")),
)
USAGE_KEYS = frozenset(key for _, keys in _USAGE for key in keys)
_AGENT_OPERATIONS = {"invoke_agent", "create_agent", "invoke_workflow"}


def is_tool_span(span: Span) -> bool:
    """Whether the span is a tool execution (``execute_tool``, or a bare ``gen_ai.tool.name``)."""
    op = span.attributes.get(OPERATION_NAME)
    return op == "execute_tool" or span.name.startswith("execute_tool") or (
        op is None and TOOL_NAME in span.attributes
    )


def is_agent_span(span: Span) -> bool:
    """Whether the span is an agent or workflow invocation (it sums its model calls' usage)."""
    return span.attributes.get(OPERATION_NAME) in _AGENT_OPERATIONS or span.name.startswith(
        "invoke_agent"
    )


def _names_any(spans: Sequence[Span], keys: Sequence[str]) -> bool:
    """Whether an attribute of a span or of one of its events is one of ``keys``."""
    for span in spans:
        for key in keys:
            if key in span.attributes:
                return True
        for event in span.events:
            for key in keys:
                if key in event.attributes:
                    return True
    return False


def reward_of(spans: Sequence[Span], keys: Sequence[str], tally: Counter[str]) -> float | None:
    """The last reward set in time order (``spans`` unordered), checked in range."""
    if not _names_any(spans, keys):
        return None  # the usual case: no reward, no need to order the spans
    found: Any = None
    for span in sorted(spans, key=lambda s: (s.start or 0, s.index)):
        for attrs in (span.attributes, *(e.attributes for e in span.events)):
            for key in keys:
                if key in attrs:
                    found = attrs[key]
    if found is None:
        return None
    try:
        value = float(found)
    except (TypeError, ValueError):
        value = -1.0
    if not 0.0 <= value <= 1.0:
        tally["rewards_rejected"] += 1
        return None
    return value


def model_of(spans: Sequence[Span]) -> str | None:
    """The model that answered: ``gen_ai.response.model`` of the last model call in time order
    (an agent span may name only the model it asked for), else the request model."""
    best: tuple[int, int, int] | None = None
    model = None
    for span in spans:  # one pass: a model call's response model, else its request model, ...
        attrs = span.attributes
        value, rank = attrs.get("gen_ai.response.model"), 2
        if not value:
            value, rank = attrs.get("gen_ai.request.model"), 1
        if not value:
            continue
        if not is_agent_span(span) and not is_tool_span(span):
            rank += 2  # ... then the same of any other span
        key = (rank, span.start or 0, span.index)
        if best is None or key > best:
            best, model = key, value
    return None if model is None else str(model)


def usage_of(spans: Sequence[Span]) -> dict[str, int]:
    """``gen_ai.usage.*`` token counts summed over the spans (either naming of each count)."""
    totals: dict[str, int] = {}
    for name, keys in _USAGE:
        for span in spans:
            attrs, value = span.attributes, None
            for key in keys:
                if key in attrs:
                    value = attrs[key]
                    break
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[name] = totals.get(name, 0) + int(value)
    return totals
