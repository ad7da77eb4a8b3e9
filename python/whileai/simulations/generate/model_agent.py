"""The model agent: an OpenAI-compatible model plays the agent against the mock world.

One rollout: the model sees the system prompt, the tools and the ask; each tool call it makes is
answered by the world (``world.call(tool, arguments)``) or by ``execute(tool, arguments)``; when
it replies without a tool call the user may speak again (at most ``avg_turns // 2`` user turns
in all, drawn from ``user``); the rollout ends on a final reply or at the turn cap.

Every step carries ``turn``, the 0-based index of the model reply that made it (tool steps of
one reply share it; a user step carries the turn of the reply it answers), so
``rows.conversation`` tells parallel calls from sequential ones even without usage fields.

The result is the rollout part of a row (docs/rows.md): ``prompt``, ``steps``, ``final_text``,
``usage``, ``model_version``, ``sampling``, ``truncated``, ``finish_reason`` and, with
``logprobs``, ``logprob`` / ``n_tokens`` (``logprobs="tokens"`` also keeps each turn's
``tokens`` on its step and all of them as ``logprob_tokens``). The engine adds the task fields.
The final reply's call has no step of its own: its usage and logprob count in the row totals.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whileai.errors import AuthError, QuotaError
from whileai.simulations.models.client import (
    ChatClient,
    ModelQuotaError,
    ModelRole,
    StoppedError,
)
from whileai.simulations.models.reply import Reply, ToolCall

__all__ = ["AgentSettings", "ModelAgent", "normalise_tools", "situation_field"]

UserTurns = Callable[[list[dict[str, Any]]], "str | None"]
Execute = Callable[[str, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSettings:
    """Sampling and loop limits for the model agent.

    ``logprobs``: ``False``, ``True`` (per-turn sums) or ``"tokens"`` (also the per-token list).
    ``max_turns``: model calls per rollout; ``None`` means ``2 * avg_turns``.
    """

    temperature: float | None = 0.7
    max_tokens: int | None = 1024
    logprobs: bool | str = False
    avg_turns: int = 12
    max_turns: int | None = None

    @property
    def turn_cap(self) -> int:
        """The most model calls one rollout may make."""
        return self.max_turns if self.max_turns is not None else max(2, 2 * self.avg_turns)

    @property
    def user_cap(self) -> int:
        """The most user turns (the opening ask included)."""
        return max(1, self.avg_turns // 2)


def normalise_tools(tools: Sequence[Any] | None) -> list[dict[str, Any]]:
    """Wrap bare ``function`` dicts as ``{"type": "function", "function": ...}``.

    Objects with ``to_openai()`` (the spec's ``ToolSpec``) are converted first.

    >>> normalise_tools([{"name": "f", "parameters": {}}])[0]["type"]
    'function'
    """
    out: list[dict[str, Any]] = []
    for item in tools or ():
        to_openai = getattr(item, "to_openai", None)
        tool: Mapping[str, Any] = to_openai() if callable(to_openai) else item
        if "function" in tool and isinstance(tool["function"], Mapping):
            out.append({"type": "function", "function": dict(tool["function"])})
        else:
            out.append({"type": "function", "function": dict(tool)})
    return out


def situation_field(situation: object, name: str, default: Any = None) -> Any:
    """Read ``name`` from a situation given as a mapping or an object."""
    if isinstance(situation, Mapping):
        return situation.get(name, default)
    return getattr(situation, name, default)


def _call_fields(reply: Reply, logprobs: bool | str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if reply.input_tokens is not None:
        fields["input_tokens"] = reply.input_tokens
    if reply.output_tokens is not None:
        fields["output_tokens"] = reply.output_tokens
    if logprobs and reply.logprob is not None:
        fields["logprob"] = reply.logprob
        fields["n_tokens"] = reply.n_tokens
        if logprobs == "tokens" and reply.tokens is not None:
            fields["tokens"] = [dict(t) for t in reply.tokens]
    if reply.truncated:
        fields["truncated"] = True
        fields["finish_reason"] = reply.finish_reason
    return fields


def _wire_call(call: ToolCall) -> dict[str, Any]:
    args = call.raw_arguments if call.error else json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call.call_id, "type": "function",
            "function": {"name": call.name, "arguments": args}}


def _tool_content(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                             default=str)


class ModelAgent(ModelRole):
    """Play the agent with a chat model. Thread-safe: one instance serves every rollout.

    Args:
        client: the :class:`ChatClient` for the agent role (its spec names the model).
        tools: the tool list (OpenAI shape or bare function dicts).
        system_prompt: the agent's policy.
        settings: sampling and loop limits.
        execute: answer tool calls with ``execute(tool, arguments)`` instead of the world.
        writer: an object with ``follow_up(situation, transcript, *, turn)`` (the engine's
            ``Writer``) that writes later user turns when ``run`` is given no ``user``.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        tools: Sequence[Any] | None = None,
        system_prompt: str = "",
        settings: AgentSettings | None = None,
        execute: Execute | None = None,
        writer: Any = None,
    ) -> None:
        self.client = client
        self.name = client.spec.label
        self.writer = writer
        self.tools = normalise_tools(tools)
        self.tool_names = frozenset(t["function"].get("name", "") for t in self.tools)
        self.system_prompt = system_prompt
        self.settings = settings or AgentSettings()
        self.execute = execute
        self._refused: QuotaError | AuthError | None = None  # what stopped the client, if any

    def _answer(
        self, call: ToolCall, world: Any, execute: Execute | None
    ) -> tuple[Any, str | None]:
        if call.error:
            return {"error": f"{call.error}; send the arguments as a JSON object"}, call.error
        if call.name not in self.tool_names:
            known = ", ".join(sorted(self.tool_names)) or "none"
            why = f"unknown tool {call.name!r}"
            return {"error": f"{why}; available tools: {known}"}, why
        try:
            if execute is not None:
                return execute(call.name, call.arguments), None
            if world is not None:
                return world.call(call.name, call.arguments), None
        except Exception as exc:  # the world's failure is the model's observation
            return {"error": f"{type(exc).__name__}: {exc}"}, None
        return {"error": "no world or execute= was given to answer tool calls"}, "no world"

    def run(
        self,
        situation: object,
        *,
        world: Any = None,
        seed: int = 0,
        user: UserTurns | None = None,
        execute: Execute | None = None,
    ) -> dict[str, Any]:
        """Run one rollout for ``situation`` (a mapping or object with ``prompt``).

        ``user(messages) -> str | None`` writes the next user turn after a reply without tool
        calls (``None`` ends the conversation); it defaults to the situation's own ``user`` /
        ``reply`` callable, its ``user_turns`` list, or the agent's ``writer``.

        Raises:
            ModelQuotaError, AuthError: the endpoint refused for good; the client is stopped
                first, so every other rollout in flight fails at once with the same error
                (not a bare ``StoppedError``) instead of retrying.
            BackendError: the endpoint failed after its retries.
        """
        try:
            return self._run(situation, world, seed, user, execute)
        except (QuotaError, AuthError) as exc:
            self._refused = self._refused or exc
            self.client.stop()
            raise
        except StoppedError:
            refused = self._refused
            if refused is None:  # stopped by the run itself (its clock), not by a refusal
                raise
            raise _same_refusal(refused) from None

    def _run(self, situation: object, world: Any, seed: int, user: UserTurns | None,
             execute: Execute | None) -> dict[str, Any]:
        s = self.settings
        prompt = str(situation_field(situation, "prompt", "") or "")
        system = situation_field(situation, "system_prompt", None) or self.system_prompt
        user = user or _user_source(situation) or _writer_source(self.writer, situation)
        execute = execute or self.execute
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        steps: list[dict[str, Any]] = []
        totals = {"input_tokens": 0, "output_tokens": 0, "logprob": 0.0, "n_tokens": 0}
        seen = {"usage": False, "logprob": False}
        all_tokens: list[dict[str, Any]] = []
        user_turns, calls, invalid = 1, 0, 0
        final_text, finish_reason, truncated, model = "", None, False, None
        while True:
            if calls >= s.turn_cap:
                truncated, finish_reason = True, "turn_cap"
                break
            reply = self.client.chat(
                messages, tools=self.tools or None, max_tokens=s.max_tokens,
                temperature=s.temperature, logprobs=bool(s.logprobs), extra={"seed": seed},
                call_offset=sum(1 for st in steps if "tool" in st),
            )
            turn = calls  # 0-based agent turn: every step this reply makes shares it
            calls += 1
            model = reply.model or model
            fields = _call_fields(reply, s.logprobs)
            for key in ("input_tokens", "output_tokens"):
                if key in fields:
                    totals[key] += fields[key]
                    seen["usage"] = True
            if "tokens" in fields:
                all_tokens.extend(fields["tokens"])
            if "logprob" in fields:
                totals["logprob"] += fields["logprob"]
                totals["n_tokens"] += fields["n_tokens"] or 0
                seen["logprob"] = True
            finish_reason = reply.finish_reason
            truncated = truncated or reply.truncated
            if reply.tool_calls:
                wire: dict[str, Any] = {"role": "assistant", "content": reply.content or None,
                                        "tool_calls": [_wire_call(c) for c in reply.tool_calls]}
                messages.append(wire)
                if reply.content:
                    steps.append({"role": "assistant", "content": reply.content, "turn": turn,
                                  **fields})
                    fields = {}
                for call in reply.tool_calls:
                    result, error = self._answer(call, world, execute)
                    step: dict[str, Any] = {"tool": call.name, "arguments": call.arguments,
                                            "result": result, "call_id": call.call_id,
                                            "turn": turn, **fields}
                    fields = {}
                    if error is not None:
                        invalid += 1
                        step["error"] = error
                        if call.error:
                            step["raw_arguments"] = call.raw_arguments
                    steps.append(step)
                    messages.append({"role": "tool", "tool_call_id": call.call_id,
                                     "content": _tool_content(result)})
                continue
            nxt = None
            if user is not None and user_turns < s.user_cap and not reply.truncated:
                nxt = user([*messages, {"role": "assistant", "content": reply.content}])
            if nxt:
                steps.append({"role": "assistant", "content": reply.content, "turn": turn,
                              **fields})
                steps.append({"role": "user", "content": nxt, "turn": turn})
                messages.append({"role": "assistant", "content": reply.content})
                messages.append({"role": "user", "content": nxt})
                user_turns += 1
                continue
            final_text = reply.content
            break
        row: dict[str, Any] = {
            "prompt": prompt,
            "steps": steps,
            "final_text": final_text,
            "model_version": model or self.client.spec.label,
            "sampling": {"temperature": s.temperature, "max_tokens": s.max_tokens, "seed": seed,
                         "logprobs": s.logprobs, "backend": self.client.spec.kind},
            "truncated": truncated,
            "finish_reason": finish_reason,
            "model_calls": calls,
        }
        if invalid:
            row["invalid_tool_calls"] = invalid
        if seen["usage"]:
            row["usage"] = {"input_tokens": totals["input_tokens"],
                            "output_tokens": totals["output_tokens"]}
        if seen["logprob"]:
            row["logprob"] = totals["logprob"]
            row["n_tokens"] = totals["n_tokens"]
            if s.logprobs == "tokens":
                row["logprob_tokens"] = all_tokens
        return row


def _same_refusal(exc: QuotaError | AuthError) -> QuotaError | AuthError:
    """A fresh copy of the refusal that stopped the client, for a rollout it cut short."""
    if isinstance(exc, ModelQuotaError):
        return ModelQuotaError(str(exc), role=exc.role)
    return type(exc)(str(exc))


def _writer_source(writer: Any, situation: object) -> UserTurns | None:
    follow_up = getattr(writer, "follow_up", None)
    if not callable(follow_up):
        return None
    asked = [0]

    def via_writer(messages: list[dict[str, Any]]) -> str | None:
        turn = asked[0]
        asked[0] += 1
        transcript = [m for m in messages if m.get("role") != "system"]
        text = follow_up(situation, transcript, turn=turn)
        return text if isinstance(text, str) and text.strip() else None

    return via_writer


def _user_source(situation: object) -> UserTurns | None:
    for name in ("user", "reply"):
        fn = situation_field(situation, name, None)
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    turns = situation_field(situation, "user_turns", None)
    if isinstance(turns, Sequence) and not isinstance(turns, str):
        queue = [str(t) for t in turns if str(t).strip()]

        def scripted(messages: list[dict[str, Any]]) -> str | None:
            spoken = sum(1 for m in messages if m.get("role") == "user") - 1
            return queue[spoken] if 0 <= spoken < len(queue) else None

        return scripted
    return None
