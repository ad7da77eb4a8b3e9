"""A ready agent or writer for a model spec: the spec chosen by ``models.resolve_spec``
(keyword, then ``whileai.configure`` / ``context``, then ``WHILEAI_AGENT`` / ``WHILEAI_SIMULATOR``)
wrapped in a :class:`ModelAgent` or :class:`ModelWriter` over one :class:`ChatClient`.

Both return ``None`` when no model is configured for the role (``False`` also means "no model").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.simulations.generate.model_agent import AgentSettings, ModelAgent
from whileai.simulations.generate.model_writer import ModelWriter
from whileai.simulations.models.client import ChatClient, RetryPolicy
from whileai.simulations.models.resolve import resolve_spec

__all__ = ["resolve_agent", "resolve_writer"]


def resolve_agent(
    spec: object = None,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    system_prompt: str = "",
    temperature: float | None = 0.7,
    max_tokens: int | None = 1024,
    logprobs: bool | str = False,
    avg_turns: int = 12,
    max_turns: int | None = None,
    execute: Callable[[str, dict[str, Any]], Any] | None = None,
    writer: Any = None,
    agent_spec: Any = None,
    policy: RetryPolicy | None = None,
    stop: threading.Event | None = None,
) -> ModelAgent | None:
    """A :class:`ModelAgent` for the resolved agent spec, or None when none is configured.

    ``writer`` (the run's ``Writer``) supplies later user turns via ``follow_up``; ``tools``
    may be OpenAI-shape dicts, bare function dicts, or objects with ``to_openai()``;
    ``agent_spec`` (the engine's ``AgentSpec``) fills ``tools`` / ``system_prompt`` when unset.

    >>> agent = resolve_agent("vllm:m@http://127.0.0.1:9/v1", system_prompt="Be brief.")
    >>> agent.name
    'm'
    >>> agent.close()
    """
    model = resolve_spec("agent", spec)
    if model is None:
        return None
    if agent_spec is not None:
        tools = tools or getattr(agent_spec, "tools", None)
        system_prompt = system_prompt or str(getattr(agent_spec, "policy", "") or "")
    settings = AgentSettings(temperature=temperature, max_tokens=max_tokens, logprobs=logprobs,
                             avg_turns=avg_turns, max_turns=max_turns)
    client = ChatClient(model, role="agent", policy=policy, stop=stop)
    return ModelAgent(client, tools=tools, system_prompt=system_prompt, settings=settings,
                      execute=execute, writer=writer)


def resolve_writer(
    spec: object = None,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    avg_turns: int = 12,
    max_attempts: int = 3,
    temperature: float | None = 0.9,
    concurrency: int = 8,
    policy: RetryPolicy | None = None,
    stop: threading.Event | None = None,
) -> ModelWriter | None:
    """A :class:`ModelWriter` for the resolved simulator spec, or None (template writer)."""
    model = resolve_spec("simulator", spec)
    if model is None:
        return None
    client = ChatClient(model, role="writer", policy=policy, stop=stop)
    return ModelWriter(client, tools=tools, avg_turns=avg_turns, max_attempts=max_attempts,
                       temperature=temperature, concurrency=concurrency)
