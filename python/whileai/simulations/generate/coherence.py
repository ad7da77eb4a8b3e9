"""A rule-based coherence check for asks: would a person have written this to this agent?

``coherence_problems(spec, ask, tools)`` lists what is wrong with one ask, by rule (no model):

- ``target``: the ask names each target tool's action or entity in words drawn from the tool's
  name or description (hidden tools instead need their cue: numbers and an arithmetic word for
  a calculator, a person for a hand-off, weighing options for a scratchpad);
- ``enum_object``: no enum value (or an email) stands as the direct object of a verb ("check
  the blue", "find maria@example.com");
- ``snake_case``: no snake_case token other than an id of a known format, and no run of three
  tool-name words pasted in a row ("pending order address");
- ``id_format``: every id given as an entity ("order #W1234567") has that entity's format;
- ``grammar``: no doubled determiners ("the all"), no "work out it", no unfilled ``{slot}``.

Multi-part asks pass ``target`` only if every part is named. ``coherence_report`` counts them
over many asks.

>>> from whileai.simulations.agent.spec import agent_spec
>>> spec = agent_spec(tools=[{"name": "get_order_details", "description": "Get an order.",
...     "parameters": {"type": "object", "properties": {"order_id": {"type": "string",
...     "description": "such as '#W0000000'"}}}}])
>>> coherence_problems(spec, "Where is my order #W1234567?", ["get_order_details"])
[]
>>> coherence_problems(spec, "check the user with id #W1234567 via get_order_details",
...                    ["get_order_details"])
['snake_case: get_order_details']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.actions import VERBS, action_of
from whileai.simulations.world.roles import describe, lexicon

__all__ = ["coherence_problems", "coherence_report"]

_STOP = frozenset(("the", "a", "an", "of", "to", "and", "or", "for", "in", "on", "by", "with",
                   "is", "be", "are", "it", "this", "that", "if", "can", "will", "not", "all",
                   "get", "use", "tool", "function", "agent", "user", "only", "should", "any",
                   "has", "have", "its", "their", "from", "which", "such", "been", "into"))
_SNAKE = re.compile(r"(?<![\w@.])[a-z0-9]+(?:_[a-z0-9]+)+(?![\w@])")
_PARTICLE = re.compile(r"\b(?:work|look|pull|sort|set|figure) (?:out|up) (?:it|them)\b")
_DOUBLE = re.compile(r"\b(the|my|a|an) (the|my|a|an|all)\b", re.IGNORECASE)
_VERBS = ("see", "check", "change", "cancel", "find", "get", "update", "modify", "return",
          "exchange", "list", "book", "remove", "delete", "add", "track", "edit", "view", "redo",
          "undo", "fix", "reverse", "look up", "pull up", "sort out", "search for")
_PERSON_NOUNS = frozenset(("user", "customer", "account", "member", "client", "profile"))
_NATURAL_STARTS = frozenset(("all", "my", "the", "new"))
_CUES = {
    "calculate": ("total", "plus", "times", "sum", "difference", "left", "cost", "each",
                  "altogether", "minus", "work out", "how much", "add up"),
    "handoff": ("person", "human", "someone", "real agent", "representative", "manager"),
    "think": ("think", "weigh", "reason", "decide", "options", "pros and cons", "better to",
              "in my position", "torn between"),
}


def _letters(word: str) -> str:
    return "".join(sorted(word))


def _vocabulary(spec: AgentSpec, tool: str) -> set[str]:
    found = next((t for t in spec.tools if t.name == tool), None)
    action = action_of(spec, tool)
    person = "account profile" if action.entity in _PERSON_NOUNS else ""
    text = " ".join([tool.replace("_", " "), found.description if found else "",
                     action.verb, action.aspect, action.entity, person])
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def _names(words: set[str], ask_words: Sequence[str]) -> bool:
    keys = {w.rstrip("s") for w in words}
    scrambled = {_letters(w) for w in words if len(w) >= 5}
    return any(w.rstrip("s") in keys or (len(w) >= 5 and _letters(w) in scrambled)
               for w in ask_words)


def _target_problems(spec: AgentSpec, low: str, ask_words: Sequence[str],
                     tools: Sequence[str]) -> list[str]:
    out = []
    for tool in tools:
        hidden = action_of(spec, tool).hidden
        if hidden:
            cues = _CUES[hidden]
            scrambled = {_letters(c) for c in cues if " " not in c and len(c) >= 5}
            ok = any(c in low for c in cues) or any(_letters(w) in scrambled for w in ask_words)
            if hidden == "calculate":
                ok = ok and len(re.findall(r"\d+(?:\.\d+)?", low)) >= 2
            if not ok:
                out.append(f"target: no cue for {tool}")
        elif not _names(_vocabulary(spec, tool), ask_words):
            out.append(f"target: {tool} not named")
    return out


def coherence_problems(spec: AgentSpec, ask: str, tools: str | Sequence[str]) -> list[str]:
    """What is incoherent in ``ask`` as a request for ``tools`` (``[]`` when nothing is).

    Args:
        spec: the agent spec (its tools, their schemas and id formats).
        ask: the person's message.
        tools: the target tool names (a grid cell's ``tool`` value also works:
            ``"unrelated"`` has none; ``"multi_tool"`` without names checks no target).

    Returns:
        One string per problem, ``"rule: detail"``.
    """
    names = [tools] if isinstance(tools, str) else list(tools)
    names = [t for t in names if t in spec.tool_names]
    low = ask.lower()
    ask_words = re.findall(r"[a-z]+", low)
    problems = _target_problems(spec, low, ask_words, names)
    lex = lexicon(spec)
    formats = {e: f.regex() for e, f in lex.formats.items()}
    for value in {e for r in lex.roles.values() if r.kind == "attribute" for e in r.param.enum}:
        words = describe(value).lower()
        if len(words) < 3 or words in ("yes", "no", "true", "false", "other"):
            continue
        verbs = "|".join(re.escape(v) for v in _VERBS)
        if re.search(rf"\b(?:{verbs})\s+(?:the\s+|my\s+|a\s+|an\s+)?{re.escape(words)}\b"
                     rf"(?!\s+(?:class|cabin|one|option|version))", low):
            problems.append(f"enum_object: {words}")
    for token in _SNAKE.findall(ask):
        if not any(p.fullmatch(token) for p in formats.values()):
            problems.append(f"snake_case: {token}")
    flat = " ".join(ask_words)
    for tool in spec.tools:
        parts = [w.lower() for w in tool.name.split("_") if w]
        for i in range(len(parts) - 2):
            if parts[i] in _NATURAL_STARTS or parts[i] in VERBS:
                continue  # "send payment request", "all product types": plain English
            if f" {' '.join(parts[i : i + 3])} " in f" {flat} ":
                problems.append(f"snake_case: fragment of {tool.name}")
                break
    for entity, pattern in formats.items():
        noun = re.escape(entity)
        for m in re.finditer(rf"\b{noun}s?(?: with id| id| number| #)?(?: is)?[:\s]+([#\w-]+)",
                             ask, re.IGNORECASE):
            token = m.group(1).rstrip(".,?!")
            if re.search(r"\d", token) and not pattern.fullmatch(token) and not any(
                    p.fullmatch(token) for e, p in formats.items() if e != entity
                    and e.endswith(entity)):
                problems.append(f"id_format: {token} given as {entity}")
    verbs = "|".join(re.escape(v) for v in _VERBS)
    email = re.search(rf"\b(?:{verbs})\s+[\w.+-]+@[\w.-]+", low)
    if email:
        problems.append(f"enum_object: {email.group(0)}")
    if _PARTICLE.search(low):
        problems.append(f"grammar: {_PARTICLE.search(low).group(0)}")  # type: ignore[union-attr]
    if _DOUBLE.search(ask):
        problems.append(f"grammar: {_DOUBLE.search(ask).group(0)}")  # type: ignore[union-attr]
    if "{" in ask or "}" in ask:
        problems.append("grammar: unfilled slot")
    return problems


def coherence_report(spec: AgentSpec, rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Coherent share and problem counts by rule over rows (``prompt`` + target tools).

    A row's targets are the tools its ask is about: ``world_state["asked_as"]["tools"]`` when
    a reading tool plays a status question about a write, else ``world_state["target_tools"]``
    (else its ``scenario_dimensions`` tool).

    >>> from whileai.simulations.agent.spec import agent_spec
    >>> spec = agent_spec(tools=[{"name": "get_order"}])
    >>> coherence_report(spec, [{"prompt": "where is my order?", "world_state":
    ...     {"target_tools": ["get_order"]}}])["coherent_share"]
    1.0
    """
    total = bad = 0
    rules: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for row in rows:
        state = row.get("world_state") or {}
        tools = (state.get("asked_as") or {}).get("tools") or state.get("target_tools")
        if tools is None:
            tools = [(row.get("scenario_dimensions") or {}).get("tool", "")]
        problems = coherence_problems(spec, str(row.get("prompt") or ""), tools)
        total += 1
        if problems:
            bad += 1
            rules.update(p.split(":")[0] for p in problems)
            if len(examples) < 10:
                examples.append({"prompt": row.get("prompt"), "problems": problems})
    return {"asks": total, "coherent": total - bad,
            "coherent_share": round((total - bad) / total, 4) if total else None,
            "by_rule": dict(sorted(rules.items())), "examples": examples}
