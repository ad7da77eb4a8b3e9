"""Pick the model for each role: the call's keyword, then ``whileai.context`` /
``whileai.configure``, then ``WHILEAI_AGENT`` / ``WHILEAI_SIMULATOR`` / ``WHILEAI_JUDGE``.

``resolve_agent`` / ``resolve_writer`` / ``resolve_judge`` turn the winning spec into a ready
object (or ``None`` when no model is configured for the role; ``False`` also means "no model").

>>> resolve_spec("judge", "ollama:phi4").model
'phi4'
>>> resolve_spec("agent", False) is None
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.config import setting
from whileai.context import configured
from whileai.errors import ConfigError
from whileai.simulations.generate.model_agent import AgentSettings, ModelAgent
from whileai.simulations.generate.model_writer import ModelWriter
from whileai.simulations.models.client import ChatClient, RetryPolicy
from whileai.simulations.models.spec import ModelSpec, parse_spec

__all__ = ["ENV_VARS", "resolve_agent", "resolve_judge", "resolve_spec", "resolve_writer"]

ENV_VARS = {"agent": "AGENT", "simulator": "SIMULATOR", "writer": "SIMULATOR", "judge": "JUDGE"}


def resolve_spec(role: str, value: object = None) -> ModelSpec | None:
    """The spec for ``role`` (``agent``, ``simulator``/``writer``, ``judge``), or None.

    Raises:
        ConfigError: the winning value is malformed; the message says where it came from.
    """
    if role not in ENV_VARS:
        raise ConfigError(f"unknown role {role!r}; use one of {sorted(ENV_VARS)}")
    source = "keyword"
    if value is None:
        value, source = configured(role), "whileai.configure/context"
    if value is None:
        value, source = setting(ENV_VARS[role]), f"WHILEAI_{ENV_VARS[role]}"
    if value is None or value is False:
        return None
    try:
        return parse_spec(value)  # type: ignore[arg-type]  # parse_spec names a wrong type
    except ConfigError as exc:
        raise ConfigError(f"{role} model from {source}: {exc}") from None


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


def resolve_judge(
    spec: object = None,
    *,
    rubric: str | None = None,
    use_privileged: bool = False,
    temperature: float = 0.0,
    policy: RetryPolicy | None = None,
    stop: threading.Event | None = None,
) -> Any:
    """An LLM judge callable (row -> verdict dict) for the resolved judge spec, or None."""
    from whileai.simulations.judge.llm_judge import LLMJudge

    model = resolve_spec("judge", spec)
    if model is None:
        return None
    client = ChatClient(model, role="judge", policy=policy, stop=stop)
    return LLMJudge(client, rubric=rubric, use_privileged=use_privileged,
                    temperature=temperature)
