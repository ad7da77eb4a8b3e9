"""The verifiable tool-discipline reward, in TRL's reward-function shape.

A reply earns 1.0 when the agent looked the order up (a tool call came before the reply) and
the reply says what it found without hedging, apologising, flattering or padding. Everything is
read from the completion itself, so the same function scores simulated rows (for selection) and
the policy's completions (during training).
"""

from __future__ import annotations

import re
from typing import Any

# Each pattern is one habit the reward refuses to pay for.
HABITS = {
    "hedging": re.compile(r"\b(i think|not entirely sure|might be wrong|possibly|perhaps)\b"),
    "apology": re.compile(r"\b(so sorry|i apologi[sz]e|my apologies)\b"),
    "sycophancy": re.compile(r"\b(great question|excellent question|you are absolutely right)\b"),
    "padding": re.compile(r"\b(don't hesitate|have a wonderful|we truly value)\b"),
}


def _messages(completion: Any) -> list[dict[str, Any]]:
    """A completion as chat messages (TRL passes a list of messages or a plain string)."""
    if isinstance(completion, str):
        return [{"role": "assistant", "content": completion}]
    return list(completion)


def discipline(completion: Any) -> tuple[float, list[str]]:
    """``(reward, broken habits)`` for one completion (a list of chat messages or a string)."""
    messages = _messages(completion)
    called = any(m.get("tool_calls") for m in messages if m.get("role") == "assistant")
    final = next((m.get("content") or "" for m in reversed(messages)
                  if m.get("role") == "assistant" and m.get("content")), "")
    broken = [name for name, pattern in HABITS.items() if pattern.search(final.lower())]
    if not called:
        broken.insert(0, "no_lookup")
    return (0.0 if broken else 1.0), broken


def tool_discipline(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """TRL's signature: one reward per completion."""
    return [discipline(c)[0] for c in completions]


def judge(row: dict[str, Any]) -> dict[str, Any]:
    """The same reward as a whileai judge (row -> verdict), for ``run_judge``."""
    reward, broken = discipline(row["messages"][1:] if "messages" in row else row["final_text"])
    return {"reward": reward, "reason": ", ".join(broken) or "looked up, plain reply"}
