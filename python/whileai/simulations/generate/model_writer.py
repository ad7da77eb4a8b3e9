"""The model writer: a chat model writes the human side of each situation.

It has its own prompt and never sees the agent's policy (only the tool names and descriptions,
so it knows the domain). :meth:`ModelWriter.write` drafts the opening ask for a grid cell;
:meth:`ModelWriter.reply` writes the person's next message in a running conversation, or says
the person is done. Output must be a JSON object with a non-empty ``message``; anything else is
retried and counted (``writer_retries``), and after ``max_attempts`` the draw is rejected
(``writer_rejected``): an opening raises :class:`WriterOutputError` so no row is made from it,
a follow-up ends the conversation.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.errors import BackendError
from whileai.simulations.generate.backends.client import ChatClient
from whileai.simulations.generate.backends.reply import strip_reasoning
from whileai.simulations.generate.model_agent import normalise_tools, situation_field

__all__ = ["ModelWriter", "WriterOutputError", "parse_writer_output"]

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

WRITER_SYSTEM = (
    "You play the customer or user who writes to an assistant. You are never the assistant: "
    "do not answer questions, do not call tools, do not describe policies. Write what this "
    "person would type, in their own voice, with the concrete details (ids, names, amounts) "
    "the situation needs. Answer with one JSON object only: "
    '{"message": "<what the person writes>", "done": false}. When the person has nothing '
    'more to say, answer {"message": "", "done": true}.'
)


class WriterOutputError(BackendError):
    """The writer kept answering off-format; the situation is skipped and counted."""


def parse_writer_output(text: str, *, allow_done: bool) -> tuple[str | None, bool]:
    """Return ``(message, done)`` from a writer reply, or raise ValueError when off-format.

    >>> parse_writer_output('{"message": "Where is order 4412?"}', allow_done=False)
    ('Where is order 4412?', False)
    """
    text = strip_reasoning(text).strip()
    match = _JSON_OBJECT.search(text)
    if match is None:
        raise ValueError("no JSON object in the writer's reply")
    try:
        obj = json.loads(match.group(0))
    except ValueError as exc:
        raise ValueError(f"writer reply is not valid JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise ValueError("writer reply is not a JSON object")
    done = obj.get("done") is True
    message = obj.get("message")
    if done and allow_done:
        return None, True
    if not isinstance(message, str) or not message.strip():
        raise ValueError("writer reply has no message")
    message = message.strip()
    if "<tool_call>" in message or message.startswith("{"):
        raise ValueError("writer reply looks like a tool call, not a person's message")
    return message, False


def _domain(tools: list[dict[str, Any]]) -> str:
    lines = []
    for tool in tools:
        fn = tool["function"]
        lines.append(f"- {fn.get('name', '?')}: {str(fn.get('description', '')).strip()[:200]}")
    return "\n".join(lines) or "- (no tools)"


def _transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            lines.append(f"PERSON: {m.get('content') or ''}")
        elif role == "assistant" and m.get("content"):
            lines.append(f"ASSISTANT: {m.get('content')}")
    return "\n".join(lines)


class ModelWriter:
    """Write situations and user turns with a chat model (thread-safe)."""

    def __init__(
        self,
        client: ChatClient,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        avg_turns: int = 12,
        max_attempts: int = 3,
        temperature: float | None = 0.9,
        max_tokens: int | None = 400,
    ) -> None:
        self.client = client
        self.tools = normalise_tools(tools)
        self.avg_turns = avg_turns
        self.max_attempts = max(1, max_attempts)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._counts = {"writer_calls": 0, "writer_retries": 0, "writer_rejected": 0}

    @property
    def name(self) -> str:
        """The writer model's name."""
        return self.client.spec.label

    def stats(self) -> dict[str, int]:
        """``writer_calls``, ``writer_retries`` (off-format replies) and ``writer_rejected``."""
        with self._lock:
            return dict(self._counts)

    def close(self) -> None:
        """Close the HTTP sessions."""
        self.client.close()

    def stop(self) -> None:
        """Wake every call waiting to retry."""
        self.client.stop()

    def _count(self, key: str) -> None:
        with self._lock:
            self._counts[key] += 1

    def _ask(self, prompt: str, *, seed: int, allow_done: bool) -> tuple[str | None, bool]:
        messages = [{"role": "system", "content": WRITER_SYSTEM},
                    {"role": "user", "content": prompt}]
        last = ""
        for attempt in range(self.max_attempts):
            self._count("writer_calls")
            reply = self.client.chat(messages, max_tokens=self.max_tokens,
                                     temperature=self.temperature,
                                     extra={"seed": seed + attempt})
            try:
                return parse_writer_output(reply.content, allow_done=allow_done)
            except ValueError as exc:
                last = str(exc)
                self._count("writer_retries")
        self._count("writer_rejected")
        raise WriterOutputError(
            f"writer model {self.name} at {self.client.url('/chat/completions')} answered "
            f"off-format {self.max_attempts} times ({last}); the draw was skipped."
        )

    def write(self, cell: Mapping[str, Any] | object, *, seed: int = 0) -> str:
        """Write the opening message for a grid cell (its dimensions and any draft ask).

        Raises:
            WriterOutputError: the model answered off-format ``max_attempts`` times.
        """
        dims = situation_field(cell, "dimensions", None)
        if dims is None:
            dims = situation_field(cell, "scenario_dimensions", None)
        if dims is None and isinstance(cell, Mapping):
            dims = {k: v for k, v in cell.items() if isinstance(v, (str, int, float, bool))}
        draft = situation_field(cell, "prompt", None)
        lines = [
            "The assistant can use these tools:", _domain(self.tools), "",
            "Situation (draw the person's side from it):",
            json.dumps(dims or {}, ensure_ascii=False, sort_keys=True, default=str),
        ]
        if draft:
            lines += ["", f"A plain draft of what they want: {draft}",
                      "Rewrite it the way this person would actually write it."]
        lines += ["", "Write the person's first message."]
        message, _ = self._ask("\n".join(lines), seed=seed, allow_done=False)
        assert message is not None
        return message

    def reply(self, messages: Sequence[Mapping[str, Any]], *, situation: object = None,
              seed: int = 0) -> str | None:
        """The person's next message after the assistant's last reply, or None when done.

        A reply the model keeps writing off-format ends the conversation (counted).
        """
        spoken = sum(1 for m in messages if m.get("role") == "user")
        if spoken >= max(1, self.avg_turns // 2):
            return None
        dims = situation_field(situation, "dimensions", None) if situation is not None else None
        prompt = "\n".join([
            "The assistant can use these tools:", _domain(self.tools), "",
            *(["Situation: " + json.dumps(dims, sort_keys=True, default=str)] if dims else []),
            "Conversation so far:", _transcript(messages), "",
            "Write the person's next message, or say done if their need is met or they would "
            "leave now.",
        ])
        try:
            message, _done = self._ask(prompt, seed=seed + 1000 * spoken, allow_done=True)
        except WriterOutputError:
            return None
        return message

    def user_for(self, situation: object = None, *, seed: int = 0) -> Callable[
            [list[dict[str, Any]]], str | None]:
        """A ``user(messages)`` callable for :meth:`ModelAgent.run`."""

        def user(messages: list[dict[str, Any]]) -> str | None:
            return self.reply(messages, situation=situation, seed=seed)

        return user
