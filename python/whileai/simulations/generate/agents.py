"""The agent protocol: what ``simulate`` plays, and how callables, objects and model specs plug in.

- a plain callable ``agent(message) -> {"steps": [...], "final_text": str}`` is wrapped;
- an object with ``run(situation, *, world, seed) -> dict`` (a model agent, the seeded agent)
  is called directly;
- a string such as ``"openai:gpt-4.1-mini"`` is resolved by ``generate.backends.resolve_agent``.

During a rollout, ``current_rollout()`` names the rollout being answered (``.prompt``,
``.rollout_index``, ``.scenario_id``) for per-rollout state in the caller's own world.

>>> type(resolve_agent(lambda m: {"steps": [], "final_text": m})).__name__
'CallableAgent'
>>> checked_output({"final_text": "ok"})["steps"]
[]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from whileai.errors import ConfigError
from whileai.simulations.generate.situation import Situation
from whileai.simulations.world.rollout import current_rollout

__all__ = [
    "AgentOutputError",
    "CallableAgent",
    "RolloutAgent",
    "ToolWorld",
    "checked_output",
    "current_rollout",
    "resolve_agent",
]


class ToolWorld(Protocol):
    """Anything that answers tool calls (the mock ``World``, or the caller's ``execute``)."""

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any: ...


@runtime_checkable
class RolloutAgent(Protocol):
    """An agent the engine can play: one call per rollout, a dict with steps and final_text."""

    def run(self, situation: Situation, *, world: ToolWorld, seed: int) -> Mapping[str, Any]:
        """Play one rollout of ``situation`` against ``world``."""
        ...


class AgentOutputError(TypeError):
    """An agent returned something that is not ``{"steps": [...], "final_text": str}``."""


class CallableAgent:
    """Wraps ``agent(message) -> dict`` as a :class:`RolloutAgent`."""

    def __init__(self, fn: Callable[[str], Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def run(self, situation: Situation, *, world: ToolWorld, seed: int) -> Mapping[str, Any]:
        """Call the wrapped function with the ask."""
        result: Mapping[str, Any] = self.fn(situation.prompt)
        return result


def checked_output(result: object) -> dict[str, Any]:
    """Return the agent's output as a dict with ``steps`` and ``final_text``, or raise.

    Raises:
        AgentOutputError: not a dict, ``steps`` not a list of dicts, ``final_text`` not a str.
    """
    if not isinstance(result, Mapping):
        raise AgentOutputError(
            f"agent returned {type(result).__name__}, expected a dict with 'steps' (list) and "
            "'final_text' (str)"
        )
    steps = result.get("steps", [])
    if steps is None:
        steps = []
    if not isinstance(steps, list | tuple) or not all(isinstance(s, Mapping) for s in steps):
        raise AgentOutputError("agent output 'steps' must be a list of dicts")
    final = result.get("final_text")
    if not isinstance(final, str):
        raise AgentOutputError(
            f"agent output 'final_text' must be a str, got {type(final).__name__}"
        )
    out = dict(result)
    out["steps"] = [dict(s) for s in steps]
    return out


def _backends() -> Any:
    try:
        return importlib.import_module("whileai.simulations.generate.backends")
    except ImportError as exc:  # pragma: no cover - depends on the models area
        raise ConfigError(
            "model backends are unavailable (whileai.simulations.generate.backends did not "
            f"import: {exc}); pass agent= a callable or simulator=False"
        ) from exc


def resolve_agent(agent: object, **backend_kwargs: Any) -> RolloutAgent:
    """Turn what the caller passed as ``agent`` into a :class:`RolloutAgent`.

    Raises:
        ConfigError: no agent, or a model spec while model backends are unavailable.
    """
    if agent is None:
        raise ConfigError(
            "no agent: pass agent= a callable (message -> {'steps', 'final_text'}), an object "
            "with run(situation, *, world, seed), zps.seeded_agent(TOOLS), or a model spec "
            "such as 'openai:gpt-4.1-mini'"
        )
    if isinstance(agent, str):
        backends = _backends()
        resolver = getattr(backends, "resolve_agent", None)
        if resolver is None:
            raise ConfigError(
                f"model backends are unavailable: cannot resolve agent {agent!r} "
                "(generate.backends.resolve_agent is missing); pass a callable instead"
            )
        resolved: RolloutAgent = resolver(agent, **backend_kwargs)
        return resolved
    if isinstance(agent, RolloutAgent) and not isinstance(agent, type):
        return agent
    if callable(agent):
        return CallableAgent(agent)
    raise ConfigError(
        f"agent must be a callable, an object with run(), or a model spec string; got "
        f"{type(agent).__name__}"
    )
