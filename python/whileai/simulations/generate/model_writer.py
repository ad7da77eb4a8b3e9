"""The model writer: a chat model writes the human side of each situation.

It has its own prompt and never sees the agent's policy (only the tool names and descriptions,
so it knows the domain). :meth:`ModelWriter.write` drafts the opening ask for a grid cell;
:meth:`ModelWriter.reply` writes the person's next message in a running conversation, or says
the person is done. Output must be a JSON object with a non-empty ``message``; anything else is
retried and counted (``writer_retries``), and after ``max_attempts`` the draw is rejected
(``writer_rejected``): ``write_one`` raises :class:`WriterOutputError`, ``write`` words that
draft with the template instead (``writer_fallbacks``), and a follow-up ends the conversation.
Junk output never becomes a row.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from whileai import _backend
from whileai.errors import BackendError
from whileai.simulations.generate.model_agent import normalise_tools, situation_field
from whileai.simulations.models.client import ChatClient, ModelRole
from whileai.simulations.models.pool import parallel_map
from whileai.simulations.models.reply import json_in

__all__ = ["ModelWriter", "WriterOutputError", "parse_writer_output"]

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
    obj = json_in(text, who="writer")
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


def _dimensions(obj: object) -> dict[str, Any]:
    dims = situation_field(obj, "dimensions", None)
    if callable(dims):
        dims = dims()
    if dims is None:
        cell = situation_field(obj, "cell", None)
        if cell is not None and callable(getattr(cell, "dimensions", None)):
            dims = cell.dimensions()
    if dims is None:
        dims = situation_field(obj, "scenario_dimensions", None)
    if dims is None and isinstance(obj, Mapping):
        dims = {k: v for k, v in obj.items() if isinstance(v, (str, int, float, bool))}
    return dict(dims or {})


def _known_values(draft: object) -> dict[str, Any]:
    """The world's own values the person may name (``slots``), keyed by parameter.

    ``nouns`` only says what a slot is ("order"), so it labels a value and never replaces it:
    the person must name ids the world holds, or the agent's lookups find nothing.

    >>> _known_values({"slots": {"order_id": "O-41553"}, "nouns": {"order_id": "order"}})
    {'order_id (the order)': 'O-41553'}
    """
    slots = situation_field(draft, "slots", None) or {}
    nouns = situation_field(draft, "nouns", None) or {}
    known: dict[str, Any] = {}
    for name, value in dict(slots).items():
        if isinstance(value, (str, int, float)):
            noun = nouns.get(name)
            known[f"{name} (the {noun})" if noun else str(name)] = value
    return known


def _draft_seed(draft: object) -> int:
    cell = situation_field(draft, "cell", None)
    key = f"{getattr(cell, 'key', '')}|v{situation_field(draft, 'visit', 0)}" \
          f"|p{situation_field(draft, 'phrasing', 0)}|c{situation_field(draft, 'candidate', 0)}"
    base = int(situation_field(draft, "seed", 0) or 0)
    return (base + _backend.hash64(key)) % (2**31)


def _template_text(draft: object) -> str:
    """The template writer's wording of the draft, as a plain starting point (or "")."""
    if situation_field(draft, "cell", None) is None:
        return ""
    try:
        from whileai.simulations.generate.writer import render

        return render(draft)  # type: ignore[arg-type]
    except Exception:  # a draft the template cannot word: the model writes from the cell
        return ""


class ModelWriter(ModelRole):
    """Write situations and user turns with a chat model (thread-safe).

    Implements the engine's ``Writer`` protocol: ``name``, ``write(drafts)``,
    ``follow_up(situation, transcript, *, turn)``.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        avg_turns: int = 12,
        max_attempts: int = 3,
        temperature: float | None = 0.9,
        max_tokens: int | None = 400,
        concurrency: int = 8,
    ) -> None:
        self.client = client
        self.name = client.spec.label
        self.tools = normalise_tools(tools)
        self.avg_turns = avg_turns
        self.max_attempts = max(1, max_attempts)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._counts = {"writer_calls": 0, "writer_retries": 0, "writer_rejected": 0,
                        "writer_fallbacks": 0}

    def stats(self) -> dict[str, int]:
        """``writer_calls``, ``writer_retries`` (off-format replies), ``writer_rejected`` (draws
        given up) and ``writer_fallbacks`` (openings worded by the template instead)."""
        with self._lock:
            return dict(self._counts)

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

    def write(self, drafts: Sequence[object]) -> list[str]:
        """One opening message per draft, in order (the engine's ``Writer`` protocol).

        Drafts are written ``concurrency`` at a time. A draft the model keeps answering
        off-format is never used: it gets the template writer's wording instead (counted as
        ``writer_rejected`` and ``writer_fallbacks``); a draft the template cannot word either
        gets ``""``. A spent quota (``ModelQuotaError``, role ``writer``) propagates.
        """
        return parallel_map(self._write_or_fallback, list(drafts), workers=self.concurrency)

    def _write_or_fallback(self, draft: object) -> str:
        try:
            return self.write_one(draft, seed=_draft_seed(draft))
        except WriterOutputError:
            self._count("writer_fallbacks")
            return _template_text(draft)

    def write_one(self, draft: Mapping[str, Any] | object, *, seed: int = 0) -> str:
        """Write the opening message for one draft / grid cell (dimensions, facts, plain ask).

        Raises:
            WriterOutputError: the model answered off-format ``max_attempts`` times.
        """
        dims = _dimensions(draft)
        known = _known_values(draft)
        plain = situation_field(draft, "prompt", None) or _template_text(draft)
        lines = [
            "The assistant can use these tools:", _domain(self.tools), "",
            "Situation (draw the person's side from it: who they are, their mood, what they "
            "want):", json.dumps(dims, ensure_ascii=False, sort_keys=True, default=str),
        ]
        if known:
            lines += ["Facts the person knows and may mention:",
                      json.dumps(known, ensure_ascii=False, sort_keys=True, default=str)]
        if plain:
            lines += ["", f"A plain draft of what they want: {plain}",
                      "Rewrite it the way this person would actually write it."]
        lines += ["", "Write the person's first message."]
        message, _ = self._ask("\n".join(lines), seed=seed, allow_done=False)
        assert message is not None
        return message

    def follow_up(self, situation: object, transcript: Sequence[Mapping[str, Any]], *,
                  turn: int) -> str | None:
        """The person's next message (``turn`` 0 is the first follow-up), or None when done.

        The person speaks at most ``avg_turns // 2`` times, the opening ask included.
        """
        if 1 + turn >= max(1, self.avg_turns // 2):
            return None
        messages = list(transcript)
        if not any(m.get("role") == "user" for m in messages[:1]):
            prompt = situation_field(situation, "prompt", "")
            messages = [{"role": "user", "content": prompt}, *messages]
        seed = int(situation_field(situation, "seed", 0) or 0)
        return self.reply(messages, situation=situation, seed=seed + 7919 * (turn + 1))

    def reply(self, messages: Sequence[Mapping[str, Any]], *, situation: object = None,
              seed: int = 0) -> str | None:
        """The person's next message after the assistant's last reply, or None when done.

        A reply the model keeps writing off-format ends the conversation (counted).
        """
        spoken = sum(1 for m in messages if m.get("role") == "user")
        if spoken >= max(1, self.avg_turns // 2):
            return None
        dims = _dimensions(situation) if situation is not None else {}
        prompt = "\n".join([
            "The assistant can use these tools:", _domain(self.tools), "",
            *(["Situation: " + json.dumps(dims, sort_keys=True, default=str)] if dims else []),
            "Conversation so far:", _transcript(messages), "",
            "Write the person's next message, or say done if their need is met or they would "
            "leave now.",
        ])
        try:
            message, _done = self._ask(prompt, seed=seed, allow_done=True)
        except WriterOutputError:
            return None
        return message
