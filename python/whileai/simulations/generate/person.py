"""The simulated person, offline: a hidden goal and rules for answering the agent back.

The goal is the task's world values (``situation.slots``: the ids, details and options the
person holds) and the outcome they want: the action done, or (for one goal in eight, drawn per
task) a change of mind when asked to confirm. ``reply`` reads the agent's last message and
answers by rule, in the person's own style:

- the agent names an id the person knows is wrong (a "mistaken" person typed it wrong): a
  correction with the right one;
- the agent asks for a yes before acting: yes (an "adversarial" person grumbles about the
  check first), or no when the goal is to leave things as they are;
- the agent asks for a detail (its words name the field, ``spoken.cues``): that detail, from
  the goal; a detail the person never had: they say so;
- the agent refuses: an "adversarial" person pushes back once, then leaves;
- anything else (a result, a failure): the conversation is over.

The person speaks at most ``turns`` times (the first ask included); ``avg_turns // 2`` in a run.
Each answer comes with why the person stopped when they did (``STOPS``).

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.generate.grid import Cell
>>> from whileai.simulations.generate.situation import Situation
>>> spec = agent_spec(tools=[{"name": "cancel_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}])
>>> s = Situation(scenario_id="sc-1", prompt="Cancel my order please.", slots={"order_id":
...     "ORD-12345"}, tools=("cancel_order",), cell=Cell(values=(("typing", "standard"),)))
>>> text, why = reply(spec, s, [{"role": "user", "content": s.prompt}, {"role": "assistant",
...     "content": "Sure. What is the order number?"}], turns=6)
>>> "ORD-12345" in text, why
(True, '')
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from whileai import _backend
from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.situation import Situation
from whileai.simulations.generate.spoken import cues, spoken
from whileai.simulations.generate.voice import typed
from whileai.simulations.world.roles import Role, describe, lexicon
from whileai.simulations.world.values import Draw, draws

__all__ = ["STOPS", "asks_confirmation", "asks_detail", "declines", "reply", "said_no"]

STOPS = ("goal_met", "declined", "refused", "failed", "unanswered", "max_turns")

_CONFIRM = re.compile(r"\b(?:shall i|should i (?:go ahead|proceed)|do you want me to|"
                      r"can i go ahead|would you like me to|okay to proceed|ok to proceed|"
                      r"(?:please )?confirm|go ahead with this)\b[^?]*\?|\(yes/no\)",
                      re.IGNORECASE)
_QUESTION = re.compile(r"\?")
_REFUSED = re.compile(r"\b(?:can't|cannot|can not|won't|not able to|unable to|not allowed)\b",
                      re.IGNORECASE)
_FAILED = re.compile(r"\b(?:didn't go through|did not go through|couldn't|could not|"
                     r"out of date|unreadable|not authori[sz]ed|failed)\b", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:no\b|nope|actually no|wait|don't|do not|leave it|hold on|stop)",
                 re.IGNORECASE)


def said_no(text: str) -> bool:
    """Whether a person's message declines what was proposed.

    >>> said_no("No, leave it as it is."), said_no("Yes please")
    (True, False)
    """
    return bool(_NO.search(text))


def asks_confirmation(text: str) -> bool:
    """Whether an agent message asks for a yes before acting."""
    return bool(_CONFIRM.search(text))


def _roles(spec: AgentSpec | None, situation: Situation) -> list[Role]:
    if spec is None:
        return []
    lex = lexicon(spec)
    seen: dict[str, Role] = {}
    for tool in situation.tools:
        for role in lex.tool_roles(tool):
            seen.setdefault(role.param.name, role)
    return list(seen.values())


def asks_detail(spec: AgentSpec | None, situation: Situation, text: str) -> Role | None:
    """The field an agent question asks for (its words name it), or None."""
    if not _QUESTION.search(text):
        return None
    low = text.lower()
    best: tuple[int, int, Role] | None = None
    for role in _roles(spec, situation):
        for cue in cues(role):
            at = low.find(cue)
            if at >= 0 and (best is None or (len(cue), -at) > (best[0], -best[1])):
                best = (len(cue), at, role)
    return best[2] if best is not None else None


def declines(situation: Situation) -> bool:
    """Whether this person's goal is to change their mind when asked to confirm (1 in 8)."""
    return _backend.hash64(f"{situation.scenario_id}|goal") % 8 == 0 and \
        situation.cell.value("stance") not in ("adversarial", "hurried")


def _value_words(role: Role, value: Any, slots: Mapping[str, Any],
                 roles: Sequence[Role]) -> tuple[str, list[str]]:
    if role.kind == "address":
        parts = [str(slots[r.param.name]) for r in roles
                 if r.kind == "address" and str(slots.get(r.param.name, ""))]
        text = ", ".join(parts)
        return text, [text]
    if isinstance(value, list):
        items = [str(v) if role.kind == "ids" else describe(v) for v in value]
        text = ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)
        return text, items
    if role.kind == "money":
        text = f"${float(value):.2f}" if isinstance(value, int | float) else str(value)
        return text, [text]
    text = str(value) if role.kind == "id" else describe(value)
    return text, [text]


_SUPPLY = ("It's {v}.", "Sure, it's {v}.", "{v}", "Oh, sorry: {v}.", "Here you go: {v}.",
           "Yes, it's {v}.", "That would be {v}.", "It should be {v}.", "Right, {v}.",
           "Let me check... {v}.", "{v}, I think.", "Ah yes, {v}.")
_SUPPLY_NAMED = ("My {n} is {v}.", "The {n} is {v}.", "{N}: {v}.", "For the {n}, {v}.")
_YES = ("Yes, please go ahead.", "Yes, that's right.", "Yes please.", "Yep, go ahead.",
        "Correct, please do it.", "Yes, that's all correct.", "That's right, go ahead.",
        "Sounds good, yes.", "Yes. Please proceed.", "Okay, yes.", "Yes, do it.",
        "All correct, yes please.")
_YES_GRUDGING = ("Yes, obviously. Why do you even need to ask?",
                 "Yes. I already told you, just do it.", "Fine, yes. This is a lot of steps.",
                 "Yes! Stop checking and do it.")
_NO_THANKS = ("No, actually, leave it as it is for now.", "No, wait. Don't do that yet.",
              "Actually no, I've changed my mind.", "No, please don't. I'll think about it.",
              "Hold on, no. Leave it for now, thanks.")
_PUSHBACK = ("That's not good enough. Can't you make an exception?",
             "Come on, just do it this once.", "I really need this done today. Please?",
             "Other people told me this was possible.")
_CORRECT = ("Wait, that's not right. It's {v}.", "Sorry, my mistake, it's {v}.",
            "No, the right one is {v}. I mistyped it.", "Oops, I meant {v}.",
            "Hmm, I think I gave you the wrong one. It's {v}.")
_UNKNOWN = ("I don't have that to hand, sorry.", "I'm not sure, I don't have it with me.",
            "No idea, sorry. Is it needed?")


def _wrong_id(spec: AgentSpec | None, situation: Situation, text: str,
              roles: Sequence[Role]) -> tuple[str, list[str]] | None:
    """An id the agent names that differs from the one the person means (a typo of theirs)."""
    if spec is None:
        return None
    slots = situation.slots
    for role in roles:
        if role.kind != "id" or role.id_format is None or role.param.name not in slots:
            continue
        true = str(slots[role.param.name])
        held = {str(v) for r in roles if r.entity == role.entity and r.param.name in slots
                for v in (slots[r.param.name] if isinstance(slots[r.param.name], list)
                          else [slots[r.param.name]])}
        for m in role.id_format.regex().finditer(text):
            if m.group(0) not in held and _near(m.group(0), true):
                return true, [true]
    return None


def _near(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) <= 2


def reply(spec: AgentSpec | None, situation: Situation,
          transcript: Sequence[Mapping[str, Any]], *, turns: int) -> tuple[str | None, str]:
    """The person's next message (None: they are done) and, when done, why (``STOPS``)."""
    said = [m for m in transcript if m.get("role") == "user"]
    agent = [m for m in transcript if m.get("role") == "assistant" and m.get("content")]
    last = str(agent[-1]["content"]) if agent else ""
    if not last:
        return None, "goal_met"
    roles = _roles(spec, situation)
    pick = draws(situation.seed, _backend.hash64(
        f"{situation.scenario_id}|person|{len(said)}|{last}"))
    stance = situation.cell.value("stance")
    text: str | None = None
    spans: list[str] = []
    wrong = _wrong_id(spec, situation, last, roles)
    detail = asks_detail(spec, situation, last)
    if wrong is not None and (_QUESTION.search(last) or _FAILED.search(last)):
        text, spans = _one(_CORRECT, pick).format(v=wrong[0]), wrong[1]
    elif asks_confirmation(last):
        if declines(situation):
            text = _one(_NO_THANKS, pick)
        else:
            text = _one(_YES_GRUDGING if stance == "adversarial" else _YES, pick)
    elif detail is not None:
        value = situation.slots.get(detail.param.name)
        if value is None or value == "" or value == []:
            text = _one(_UNKNOWN, pick)
        else:
            words, spans = _value_words(detail, value, situation.slots, roles)
            if pick.below(3) == 0:
                noun = spoken(detail)
                text = _one(_SUPPLY_NAMED, pick).format(n=noun, N=noun.capitalize(), v=words)
            else:
                text = _one(_SUPPLY, pick).format(v=words)
    elif _REFUSED.search(last) and stance == "adversarial" and not any(
            _REFUSED.search(str(m.get("content") or "")) for m in agent[:-1]):
        text = _one(_PUSHBACK, pick)
    if text is None:
        return None, _why_done(last, transcript)
    if len(said) >= turns:
        return None, "max_turns"
    return typed(text, situation.cell.value("typing"), pick, spans), ""


def _why_done(last: str, transcript: Sequence[Mapping[str, Any]]) -> str:
    users = [str(m.get("content") or "") for m in transcript if m.get("role") == "user"]
    if len(users) > 1 and said_no(users[-1]):
        return "declined"
    if _FAILED.search(last):
        return "failed"
    if _REFUSED.search(last):
        return "refused"
    if _QUESTION.search(last) and not last.rstrip().endswith(("help with?", "else?")):
        return "unanswered"
    return "goal_met"


def _one(bank: Sequence[str], pick: Draw) -> str:
    return bank[pick.below(len(bank))]
