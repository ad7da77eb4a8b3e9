"""The template writer (``simulator=False``): an ask per draft from phrase banks, no model.

Every choice comes from the splitmix64 stream of the draft (cell, visit, phrasing, candidate),
so the same draft always reads the same, in any process.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.generate.grid import build_grid
>>> from whileai.simulations.generate.drafts import make_draft
>>> spec = agent_spec(tools=[{"name": "cancel_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}])
>>> draft = make_draft(spec, build_grid(spec).cells[0], visit=0, seed=0, fault_rate=0.5)
>>> text = TemplateWriter().write([draft])[0]
>>> "cancel" in text and "order" in text
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from whileai import _backend
from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate import filler, person, phrases
from whileai.simulations.generate.actions import action_of
from whileai.simulations.generate.asks import TaskWords, hidden_ask, words_for
from whileai.simulations.generate.situation import Draft, Situation
from whileai.simulations.generate.voice import spoken_as, typed
from whileai.simulations.world.values import CITIES, Draw, draws

__all__ = ["TemplateWriter", "render"]



class TemplateWriter:
    """Writes asks from phrase banks and plays the person's later turns by rule
    (``generate/person.py``); deterministic per draft and transcript; never calls a model.

    The person speaks at most ``avg_turns // 2`` times (the first ask included); with room
    for more than one message, the first ask leaves out what a person would give when asked.
    """

    name = "template"

    def __init__(self, *, avg_turns: int = 12, spec: AgentSpec | None = None) -> None:
        self.turns = max(1, avg_turns // 2)
        self.spec = spec

    def write(self, drafts: Sequence[Draft]) -> list[str]:
        """Return one ask per draft."""
        return [render(d, turns=self.turns) for d in drafts]

    def answer(self, situation: Situation, transcript: Sequence[Mapping[str, Any]], *,
               spec: AgentSpec | None = None) -> tuple[str | None, str]:
        """The person's next message (None: done) and why they stopped (``person.STOPS``)."""
        return person.reply(spec or self.spec, situation, transcript, turns=self.turns)

    def follow_up(
        self, situation: Situation, transcript: Sequence[Mapping[str, Any]], *, turn: int
    ) -> str | None:
        """The person's answer to the agent's last message, or None when they are done."""
        return self.answer(situation, transcript)[0]


_FITS = {  # intents that need a record, or a write, to make sense; others read as do_task
    "check_status": ("record",),
    "undo": ("record", "write"),
    "change_request": ("record", "write"),
    "complain": ("record",),
}


def _intent(intent: str, words: TaskWords, write: bool) -> str:
    needs = _FITS.get(intent, ())
    if ("record" in needs and not words.entity_named) or ("write" in needs and not write):
        return "do_task"
    return intent if intent in phrases.ASKS else "do_task"


def _core(draft: Draft, pick: Draw, *, recite: bool) -> tuple[str, list[str]]:
    """The task part of the ask (one clause per target tool) and the literals it carries."""
    spec, cell = draft.spec, draft.cell
    if not draft.tools:
        return _off_scope(pick), []
    asks: list[str] = []
    spans: list[str] = []
    ambiguous = cell.value("stance") == "ambiguous"
    asked_as = draft.world_state.get("asked_as") or {}
    first_intent = str(asked_as.get("intent") or cell.value("intent"))
    for n, tool_name in enumerate(asked_as.get("tools") or draft.tools):
        action = action_of(spec, tool_name)
        if action.hidden:
            text, literal = hidden_ask(spec, tool_name, draft.slots, pick)
            asks.append(text)
            spans.extend((*literal, text))  # a need is worded once, and never mistyped
            continue
        words = words_for(spec, tool_name, draft.slots, pick, ambiguous=ambiguous,
                          recite=recite)
        if n > 0:  # the record of the first clause is not named twice
            words = _same_record(words, action.entity, spans)
        intent = _intent(first_intent if n == 0 else "do_task", words, action.write)
        bank = phrases.ASKS[intent]
        if not action.write:  # "I tried to check it" says nothing: a read is asked plainly
            bank = tuple(b for b in bank if "{action}" not in b) or bank
        asks.append(bank[pick.below(len(bank))].format(
            action=words.action, thing=words.thing, detail=words.detail))
        spans.extend((*words.spans, words.thing, words.action))  # what the ask is about
    if len(asks) > 1:
        joiner = ("Also, ", "And then ", "After that, ", "On top of that, ")[pick.below(4)]
        second = asks[1] if asks[1].startswith(("I ", "I'")) else asks[1][0].lower() + asks[1][1:]
        return asks[0] + " " + joiner + second, spans
    return asks[0], spans


def _same_record(words: TaskWords, entity: str, said: Sequence[str]) -> TaskWords:
    """``words`` with a record the ask already named referred back to ("it", "the same
    order") instead of repeating its id."""
    if not entity:
        return words
    for value in said:
        match = re.search(rf"(?:my |the )?{re.escape(entity)}(?: number)? {re.escape(value)}",
                          words.thing)
        if value and match:
            back = "it" if match.group(0) == words.thing else f"the same {entity}"
            return replace(words, thing=words.thing.replace(match.group(0), back))
    return words


def _off_scope(pick: Draw) -> str:
    template = phrases.OFF_SCOPE[pick.below(len(phrases.OFF_SCOPE))]
    return template.format(city=CITIES[pick.below(len(CITIES))],
                           amount=str(100 * (pick.below(15) + 2)),
                           thing=phrases.OFF_THINGS[pick.below(len(phrases.OFF_THINGS))])


# the things a policy rule is about, as a person names them when they bring the rule up
_TOPICS = {"refund": "refunds", "identity": "identity checks", "confirmation": "confirmations",
           "cancellation": "cancellations", "cancel": "cancellations", "payment": "payments",
           "gift card": "gift cards", "credit card": "card payments", "address": "address changes",
           "insurance": "insurance", "fee": "fees", "fees": "fees", "bags": "bags",
           "baggage": "baggage", "roaming": "roaming", "suspension": "suspensions",
           "certificate": "certificates", "exchange": "exchanges", "return": "returns",
           "delivery": "delivery", "compensation": "compensation",
           "authenticate": "identity checks",
           "verification": "verification", "discount": "discounts", "cabin": "cabin changes",
           "upgrade": "upgrades", "email": "email changes", "password": "passwords",
           "privacy": "privacy", "plan": "plan changes", "data": "data limits",
           "limit": "limits", "transfer": "transfers", "human": "talking to a person"}


def _topic(clause: str, pick: Draw) -> str:
    """What a policy clause is about, in a person's words ("" when it names nothing known)."""
    low = " " + " ".join(_backend.tokenize(clause)) + " "
    found = list(dict.fromkeys(t for n, t in _TOPICS.items() if f" {n} " in low
                               or f" {n}s " in low or f" {n}ed " in low))
    return found[pick.below(len(found))] if found else ""


def render(draft: Draft, *, turns: int = 6) -> str:
    """Render one ask for ``draft`` (``turns``: how often the person may speak)."""
    cell = draft.cell
    pick = draws(draft.seed, _backend.hash64(
        f"{cell.key}|v{draft.visit}|p{draft.phrasing}|c{draft.candidate}"))
    core, spans = _core(draft, pick, recite=turns <= 1)
    if cell.seed_text:
        base = cell.seed_text.rsplit("#", 1)[0]
        core = base if draft.visit == 0 and draft.candidate == 0 else base + " " + core
    tone, persona = cell.value("tone") or "neutral", cell.value("persona")
    stance, typing = cell.value("stance"), cell.value("typing")
    hurried = stance == "hurried" or persona == "busy_professional" or typing == "clipped"
    about_record = bool(draft.nouns) and bool(draft.tools)
    changes = any(action_of(draft.spec, t).write and not action_of(draft.spec, t).hidden
                  for t in draft.tools)
    grievance = cell.value("history") in ("prior_failure", "prior_partial_action") or \
        cell.value("intent") in ("complain", "undo")
    topic = _topic(cell.clause, pick) if cell.clause else ""
    stance_text = filler.stance_line(stance, pick, named=any(c.isdigit() for c in core))
    if not draft.tools:  # an ask outside the agent's scope has no record, rule or history
        stance_text = stance_text if stance in ("off_topic", "hurried") else ""
    clause = filler.clause_line(topic, pick) if cell.clause and draft.tools else ""
    extras = bool(stance_text) + bool(clause)  # the cell's own sentences come first
    room = max(0, (2 if persona == "elderly" else 1) - max(0, extras - 1))
    lines = [] if hurried or not room or not draft.tools else filler.context(
        cell.value("history"), cell.value("state"), persona, about_record=about_record,
        pick=pick, room=room, changes=changes)
    before = [ln for ln in lines if filler.leads(ln) and pick.below(2) == 0]
    after = [ln for ln in lines if ln not in before]
    parts = [
        filler.opener(tone, persona, pick, grievance=grievance) if not hurried
        and not cell.seed_text and pick.below(5) < 3 else "",
        *before, core, *after, stance_text,
        clause,
        filler.closer(tone, persona, hurried, pick, grievance=grievance)
        if pick.below(2) == 0 and len(lines) + extras < 3 else "",
    ]
    text = spoken_as(_join(p for p in parts if p), persona, pick)
    if typing == "lowercase":
        text = text.rstrip(".")
    return typed(text, typing, pick, spans)


def _join(parts: Iterable[str]) -> str:
    """Join sentences; after an opener ending in a comma, a dash or a colon, the next one
    starts in lower case."""
    out: list[str] = []
    for part in parts:
        if out and out[-1].endswith((",", "-", ":", " so")) and not part.startswith(("I ", "I'")):
            part = part[0].lower() + part[1:]
        out.append(part)
    return " ".join(out)
