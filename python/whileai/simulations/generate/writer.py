"""The template writer (``simulator=False``): an ask per draft from phrase banks, no model.

Every choice comes from the splitmix64 stream of the draft (cell, visit, phrasing, candidate),
so the same draft always reads the same, in any process.

>>> from whileai.simulations.spec import agent_spec
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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from whileai import _backend
from whileai.simulations.generate import person, phrases
from whileai.simulations.generate.actions import action_of
from whileai.simulations.generate.asks import TaskWords, hidden_ask, words_for
from whileai.simulations.generate.situation import Draft, Situation
from whileai.simulations.generate.voice import typed
from whileai.simulations.spec import AgentSpec
from whileai.simulations.world.roles import lexicon
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
            spans.extend(literal)
            continue
        words = words_for(spec, tool_name, draft.slots, pick, ambiguous=ambiguous,
                          recite=recite)
        intent = _intent(first_intent if n == 0 else "do_task", words, action.write)
        bank = phrases.ASKS[intent]
        asks.append(bank[pick.below(len(bank))].format(
            action=words.action, thing=words.thing, detail=words.detail))
        spans.extend(words.spans)
    if len(asks) > 1:
        joiner = ("Also, ", "And then ", "After that, ", "On top of that, ")[pick.below(4)]
        second = asks[1] if asks[1].startswith(("I ", "I'")) else asks[1][0].lower() + asks[1][1:]
        return asks[0] + " " + joiner + second, spans
    return asks[0], spans


def _off_scope(pick: Draw) -> str:
    template = phrases.OFF_SCOPE[pick.below(len(phrases.OFF_SCOPE))]
    return template.format(city=CITIES[pick.below(len(CITIES))],
                           amount=str(100 * (pick.below(15) + 2)),
                           thing=phrases.OFF_THINGS[pick.below(len(phrases.OFF_THINGS))])


_POLICY_NOUNS = ("refund", "refunds", "identity", "confirmation", "cancellation", "payment",
                 "gift card", "credit card", "address", "insurance", "fee", "fees", "bags",
                 "baggage", "roaming", "suspension", "certificate", "exchange", "exchanges",
                 "returns", "return", "delivery", "compensation", "verification", "discount",
                 "cabin", "upgrade", "limit", "email", "password", "privacy", "plan", "data")


def _topic(spec: AgentSpec, clause: str, pick: Draw) -> str:
    """A noun the clause is about, from the spec's entities and common policy nouns."""
    low = " " + " ".join(_backend.tokenize(clause)) + " "
    nouns = [*_spec_nouns(spec), *_POLICY_NOUNS]
    found = list(dict.fromkeys(n for n in nouns if f" {n} " in low))
    if not found:
        return ""
    noun = found[pick.below(len(found))]
    return noun + ("s" if pick.below(3) == 0 and not noun.endswith(("s", "data", "baggage"))
                   else "")


def _spec_nouns(spec: AgentSpec) -> tuple[str, ...]:
    lex = lexicon(spec)
    aspects = [action_of(spec, t.name).aspect for t in spec.tools]
    return tuple(dict.fromkeys([*lex.formats, *(a for a in aspects if a and " " not in a)]))


def render(draft: Draft, *, turns: int = 6) -> str:
    """Render one ask for ``draft`` (``turns``: how often the person may speak)."""
    cell = draft.cell
    pick = draws(draft.seed, _backend.hash64(
        f"{cell.key}|v{draft.visit}|p{draft.phrasing}|c{draft.candidate}"))
    core, spans = _core(draft, pick, recite=turns <= 1)
    if cell.seed_text:
        base = cell.seed_text.rsplit("#", 1)[0]
        core = base if draft.visit == 0 and draft.candidate == 0 else base + " " + core
    tone = cell.value("tone") or "neutral"

    def one(bank: Sequence[str]) -> str:
        return bank[pick.below(len(bank))] if bank else ""

    context = [
        one(phrases.HISTORY.get(cell.value("history"), ("",))),
        one(phrases.PERSONA.get(cell.value("persona"), ("",))) if pick.below(3) else "",
        one(phrases.REASONS),
        one(phrases.STATE_HINT.get(cell.value("state"), ("",))),
    ]
    before = [c for i, c in enumerate(context) if c and pick.below(2) == 0 and i < 3]
    after = [c for c in context if c and c not in before]
    stance = one(phrases.STANCE.get(cell.value("stance"), ("",)))
    topic = _topic(draft.spec, cell.clause, pick) if cell.clause else ""
    clause = one(phrases.CLAUSE).format(topic=topic) if topic else \
        one(phrases.CLAUSE_PLAIN) if cell.clause else ""
    parts = [one(phrases.OPENERS.get(tone, ("",))), *before, core, *after, stance, clause,
             one(phrases.CLOSERS.get(tone, ("",)))]
    text = _join(p for p in parts if p)
    typing = cell.value("typing")
    if typing == "lowercase":
        text = text.rstrip(".")
    return typed(text, typing, pick, spans)


def _join(parts: Iterable[str]) -> str:
    """Join sentences; after an opener ending in a comma, the next one starts in lower case."""
    out: list[str] = []
    for part in parts:
        if out and out[-1].endswith(",") and not part.startswith(("I ", "I'")):
            part = part[0].lower() + part[1:]
        out.append(part)
    return " ".join(out)
