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

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from whileai import _backend
from whileai.simulations.generate import phrases
from whileai.simulations.generate.situation import Draft, Situation
from whileai.simulations.spec import AgentSpec, ToolSpec
from whileai.simulations.world.values import CITIES, WORDS, Draw, draws, is_id_param

__all__ = ["TemplateWriter", "render"]

_FOLLOW_UPS = (
    "Okay, and what happens next?",
    "Can you double-check that for me?",
    "Is there anything else you need from me?",
    "So is it done now?",
)
_FUNCTION_WORDS = frozenset((
    "with", "before", "after", "that", "this", "from", "have", "must", "should", "only", "when",
    "then", "them", "they", "their", "your", "will", "been", "were", "into", "than", "also",
    "each", "such", "does", "which", "what", "about", "other", "there", "these", "those",
    "where", "while", "would", "could", "shall", "being", "very", "more", "most", "some", "any",
    "every", "upon",
))
_ARTICLES = re.compile(r"\b(the|a|an|please|just|really|so|that)\b\s*", re.IGNORECASE)


class TemplateWriter:
    """Writes asks from phrase banks; deterministic per draft; never calls a model."""

    name = "template"

    def write(self, drafts: Sequence[Draft]) -> list[str]:
        """Return one ask per draft."""
        return [render(d) for d in drafts]

    def follow_up(
        self, situation: Situation, transcript: Sequence[Mapping[str, Any]], *, turn: int
    ) -> str | None:
        """One short follow-up on the first turn, then nothing."""
        if turn > 0:
            return None
        stream = draws(situation.seed, _backend.hash64(situation.scenario_id + "|followup"))
        return _FOLLOW_UPS[stream.below(len(_FOLLOW_UPS))]


@functools.lru_cache(maxsize=1024)
def _verb(tool: ToolSpec) -> tuple[str, tuple[str, ...]]:
    """The verb phrase of a tool's ask and the rest of its name (cached per tool)."""
    words = [w for w in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", tool.name) if w]
    lowered = tuple(w.lower() for w in words)
    for i, w in enumerate(lowered):
        if w in phrases.VERBS:
            return phrases.VERBS[w], lowered[:i] + lowered[i + 1 :]
    first = tool.description.split(" ")[0].lower() if tool.description else ""
    if first.rstrip("s") in phrases.VERBS:
        return phrases.VERBS[first.rstrip("s")], lowered
    return "sort out", lowered


def free_names(tool: ToolSpec, draft: Draft) -> list[str]:
    """Parameters with a plain string value (the ask's subject when the tool takes no id)."""
    return [p.name for p in tool.params if isinstance(draft.slots.get(p.name), str)]


def _words(name: str) -> str:
    return name.replace("_", " ").strip()


def _task_words(spec: AgentSpec, draft: Draft, tool_name: str, pick: Draw) -> dict[str, str]:
    tool = next((t for t in spec.tools if t.name == tool_name), ToolSpec(name=tool_name))
    action, rest = _verb(tool)
    ambiguous = draft.cell.value("stance") == "ambiguous"
    ids = [p.name for p in tool.params if p.name in draft.nouns]
    if ids:
        noun, value = draft.nouns[ids[0]], draft.slots[ids[0]]
        forms = ("{n} {v}", "my {n} {v}", "{n} number {v}", "the {n} {v}", "{n} {v}",
                 "the {n} with id {v}")
        thing = "my " + noun if ambiguous else forms[pick.below(len(forms))].format(n=noun, v=value)
    else:
        free = free_names(tool, draft)
        if free and not ambiguous:
            thing = str(draft.slots[free[0]])
        else:
            thing = ("my " if pick.below(2) else "the ") + (" ".join(rest) or "request")
    used = "" if ids or not free_names(tool, draft) else free_names(tool, draft)[0]
    others = [p for p in tool.params
              if p.name in draft.slots and not is_id_param(p.name) and p.name != used]
    detail = ""
    for p in others[: pick.below(3)]:
        value = draft.slots[p.name]
        if isinstance(value, list | dict | bool):
            continue
        name = p.name.lower()
        if "address" in name or "street" in name:
            detail += f" to {value}"
        elif "email" in name:
            detail += f" (my email is {value})"
        elif "reason" in name:
            detail += f" (reason: {value})"
        else:
            detail += f" with {_words(p.name)} {value}"
    return {"action": action, "thing": thing, "detail": detail}


def _core(draft: Draft, pick: Draw) -> str:
    spec, cell = draft.spec, draft.cell
    if not draft.tools:
        template = phrases.OFF_SCOPE[pick.below(len(phrases.OFF_SCOPE))]
        return template.format(word=WORDS[pick.below(len(WORDS))],
                               city=CITIES[pick.below(len(CITIES))],
                               amount=str(100 * (pick.below(15) + 2)))
    asks = []
    for n, tool_name in enumerate(draft.tools):
        intent = cell.value("intent") if n == 0 else "do_task"
        bank = phrases.ASKS.get(intent, phrases.ASKS["do_task"])
        text = bank[pick.below(len(bank))].format(**_task_words(spec, draft, tool_name, pick))
        asks.append(text)
    if len(asks) > 1:
        joiner = ("Also, ", "And then ", "After that, ", "On top of that, ")[pick.below(4)]
        return asks[0] + " " + joiner + asks[1][0].lower() + asks[1][1:]
    return asks[0]


def _topic(clause: str, pick: Draw) -> str:
    words = [w for w in _backend.tokenize(clause)
             if len(w) > 3 and not w.isdigit() and w not in _FUNCTION_WORDS]
    if not words:
        return "this rule"
    start = pick.below(max(1, len(words) - 1))
    return " ".join(words[start : start + 2])


def _typing(text: str, typing: str, pick: Draw) -> str:
    if typing == "lowercase":
        return text.lower().rstrip(".")
    if typing == "typos":
        out = []
        for word in text.split(" "):
            if len(word) >= 5 and word.isalpha() and pick.below(4) == 0:
                i = 1 + pick.below(len(word) - 3)
                word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
            out.append(word)
        return " ".join(out)
    if typing == "clipped":
        clipped = _ARTICLES.sub("", text)
        clipped = re.sub(r"[,.!]", "", clipped)
        return re.sub(r"\s+", " ", clipped).strip().lower()
    return text


def render(draft: Draft) -> str:
    """Render one ask for ``draft``."""
    cell = draft.cell
    pick = draws(draft.seed, _backend.hash64(
        f"{cell.key}|v{draft.visit}|p{draft.phrasing}|c{draft.candidate}"))
    core = _core(draft, pick)
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
    clause = one(phrases.CLAUSE).format(topic=_topic(cell.clause, pick)) if cell.clause else ""
    parts = [one(phrases.OPENERS.get(tone, ("",))), *before, core, *after, stance, clause,
             one(phrases.CLOSERS.get(tone, ("",)))]
    return _typing(_join(p for p in parts if p), cell.value("typing"), pick)


def _join(parts: Iterable[str]) -> str:
    """Join sentences; after an opener ending in a comma, the next one starts in lower case."""
    out: list[str] = []
    for part in parts:
        if out and out[-1].endswith(",") and not part.startswith(("I ", "I'")):
            part = part[0].lower() + part[1:]
        out.append(part)
    return " ".join(out)
