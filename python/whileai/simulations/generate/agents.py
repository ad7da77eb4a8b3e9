"""The agent protocol: what ``simulate`` plays, and how callables, objects and model specs plug in.

- a plain callable ``agent(message) -> {"steps": [...], "final_text": str}`` is wrapped;
- an object with ``run(situation, *, world, seed) -> dict`` (a model agent, the seeded agent)
  is called directly;
- a string such as ``"openai:gpt-4.1-mini"`` is resolved by ``generate.resolve.resolve_agent``.

During a rollout, ``current_rollout()`` names the rollout being answered (``.prompt``,
``.rollout_index``, ``.scenario_id``) for per-rollout state in the caller's own world.

>>> type(resolve_agent(lambda m: {"steps": [], "final_text": m})).__name__
'CallableAgent'
>>> checked_output({"final_text": "ok"})["steps"]
[]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from whileai.errors import ConfigError
from whileai.simulations.generate.resolve import resolve_agent as resolve_model_agent
from whileai.simulations.generate.situation import Situation
from whileai.simulations.models.spec import ModelSpec
from whileai.simulations.models.unconfigured import no_model_message
from whileai.simulations.world.rollout import current_rollout

__all__ = [
    "AgentOutputError",
    "CallableAgent",
    "RolloutAgent",
    "ToolWorld",
    "checked_output",
    "current_rollout",
    "is_model_spec",
    "number_turns",
    "resolve_agent",
]


def is_model_spec(value: object) -> bool:
    """Is ``value`` a model spec: a spec string or ``zps.local_model(...)`` (a ``ModelSpec``)?

    >>> is_model_spec("openai:gpt-4.1-mini"), is_model_spec(len)
    (True, False)
    """
    return isinstance(value, str | ModelSpec)


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
    """Wraps ``agent(message) -> dict`` as a :class:`RolloutAgent`.

    A function that computes in-process and never waits on I/O can say so with
    ``fn.cpu_bound = True``; ``simulate`` then plays it on the calling thread (see
    ``run.engine.rollout_threads``).
    """

    def __init__(self, fn: Callable[[str], Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.cpu_bound = getattr(fn, "cpu_bound", False) is True

    def run(self, situation: Situation, *, world: ToolWorld, seed: int) -> Mapping[str, Any]:
        """Call the wrapped function with the ask; number its steps' turns if it did not."""
        result: Mapping[str, Any] = self.fn(situation.prompt)
        steps = result.get("steps") if isinstance(result, Mapping) else None
        if isinstance(steps, list | tuple) and all(isinstance(s, Mapping) for s in steps):
            return {**result, "steps": number_turns(steps)}
        return result


# A tool step carrying one of these came from a new model call (``rows.conversation``).
_MODEL_CALL_KEYS = ("input_tokens", "output_tokens", "logprob", "n_tokens")


def number_turns(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``steps`` with a 0-based agent ``turn`` on each, unless any step has one.

    The numbering keeps ``rows.conversation``'s reading of unnumbered steps: consecutive tool
    calls share a turn, a text step starts one (and the calls right after it belong to it), and
    a tool step carrying a model call's fields starts a new one.

    >>> [s["turn"] for s in number_turns([{"role": "assistant", "content": "looking"},
    ...     {"tool": "a"}, {"tool": "b"}, {"role": "assistant", "content": "done"}])]
    [0, 0, 0, 1]
    """
    out = [dict(s) for s in steps]
    if any("turn" in s for s in out):
        return out
    turn = 0
    for index, step in enumerate(out):
        new_reply = "tool" not in step or any(k in step for k in _MODEL_CALL_KEYS)
        if index and new_reply:
            turn += 1
        step["turn"] = turn if index else 0
    return out


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


def resolve_agent(agent: object, **backend_kwargs: Any) -> RolloutAgent:
    """Turn what the caller passed as ``agent`` into a :class:`RolloutAgent`.

    Raises:
        ConfigError: no agent, or a malformed model spec.
    """
    if agent is None:
        raise ConfigError(no_model_message("agent"))
    if is_model_spec(agent):
        resolved: RolloutAgent | None = resolve_model_agent(agent, **backend_kwargs)
        if resolved is None:  # agent=False: "no model"
            raise ConfigError(f"agent {agent!r} did not resolve to a model agent")
        return resolved
    if isinstance(agent, RolloutAgent) and not isinstance(agent, type):
        return agent
    if callable(agent):
        return CallableAgent(agent)
    raise ConfigError(
        f"agent must be a callable, an object with run(), or a model spec string; got "
        f"{type(agent).__name__}"
    )
