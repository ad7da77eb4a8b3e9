"""Reading an ask back into tool arguments: what the seeded agent does instead of peeking.

Ids are found by their entity's format (the lexicon's, so every format the writer uses) and
told apart by the noun before them ("item 1008292230", "product 6086499569"), lists included;
amounts, dates, quantities with their unit, enum values, yes/no options, names, addresses,
airport codes, record lists and arithmetic are read by role. What the ask does not say is left
out, and the first required identifier it lacks is returned so the agent can ask for it.

>>> from whileai.simulations.agent.spec import agent_spec
>>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string", "description": "such as '#W0000000'"}},
...     "required": ["order_id"]}}])
>>> read_call(spec, "get_order", "where is order #W1234567?")
({'order_id': '#W1234567'}, None)
>>> read_call(spec, "get_order", "where is my order?")
({}, 'order_id')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.actions import action_of
from whileai.simulations.world.roles import Lexicon, Role, describe, lexicon

__all__ = ["read_call", "read_turns"]

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_MONEY = re.compile(r"\$(\d+(?:\.\d{1,2})?)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\b\d{3}-\d{3}-\d{4}\b")
_NAME = re.compile(r"(?i:name is|i'?m|i am)\s+([A-Z][a-z]+)\s+([A-Z][a-z]+)")
_ZIP = re.compile(r"(?i:zip(?: code)?)\s+(\d{5})")
_NUMBER = re.compile(r"\$?(\d+(?:\.\d+)?)")
_GLUE = re.compile(r"^(?:\s*(?:,|and|or|&)\s*|\s+)$")
_REQUIRED_KINDS = ("id", "ids", "email", "phone", "name")
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class _Match:
    start: int
    value: str
    entities: tuple[str, ...]
    label: str | None


def _letters(word: str) -> str:
    return "".join(sorted(word))


def _label(before: str, entities: Sequence[str]) -> str | None:
    """The entity a noun just before an id names (typos with swapped letters still count)."""
    words = _WORD.findall(before.lower())[-4:]
    if not words:
        return None
    bases = [w[:-1] if w.endswith("s") else w for w in words]
    plain = {*words, *bases}
    scrambled = {_letters(b) for b in plain if len(b) >= 5}  # same letters: same length
    for entity in sorted(entities, key=len, reverse=True):
        head = entity.split()[-1]
        if head in plain or (len(head) >= 5 and _letters(head) in scrambled):
            return entity
    return None


def _id_matches(lex: Lexicon, prompt: str, wanted: set[str]) -> list[_Match]:
    """Ids of the ``wanted`` entities (and of look-alike entities, to tell them apart)."""
    patterns = {lex.formats[e].pattern for e in wanted if e in lex.formats}
    if not patterns:
        return []
    owners_of: dict[str, list[str]] = {}
    for entity, fmt in lex.formats.items():
        if fmt.pattern in patterns:
            owners_of.setdefault(fmt.pattern, []).append(entity)
    found: dict[int, tuple[str, list[str]]] = {}
    for owners in owners_of.values():
        for m in lex.formats[owners[0]].regex().finditer(prompt):
            value, before = found.get(m.start(), ("", []))
            if len(m.group(0)) >= len(value):
                found[m.start()] = (m.group(0), [*before, *owners])
    out: list[_Match] = []
    previous_end, previous_label = 0, None
    nouns = list(lex.formats)
    for start in sorted(found):
        value, owners = found[start]
        gap = prompt[previous_end:start]
        if out and _GLUE.match(gap):
            label = previous_label
        else:
            label = _label(prompt[max(previous_end, start - 40):start], nouns)
        out.append(_Match(start, value, tuple(owners), label))
        previous_end, previous_label = start + len(value), label
    return out


def _ids_for(roles: Sequence[Role], matches: Sequence[_Match]) -> dict[str, Any]:
    """Assign the ids found to the id parameters, entity by entity, in schema order."""
    out: dict[str, Any] = {}
    by_entity: dict[str, list[Role]] = {}
    for role in roles:
        if role.kind in ("id", "ids"):
            by_entity.setdefault(role.entity, []).append(role)
    for entity, group in by_entity.items():
        values = list(dict.fromkeys(
            m.value for m in matches
            if entity in m.entities and (m.label in (None, entity) or m.label not in m.entities)))
        scalars = [r for r in group if r.kind == "id"]
        lists = [r for r in group if r.kind == "ids"]
        for role in scalars:
            if values:
                value = values.pop(0)
                out[role.param.name] = int(value) if role.param.type == "integer" \
                    and value.isdigit() else value
        for i, role in enumerate(lists):
            left = len(lists) - i
            share = -(-len(values) // left) if left > 1 else len(values)
            if share:
                out[role.param.name], values = values[:share], values[share:]
    return out


def _enum(role: Role, low: str) -> str | None:
    best: tuple[int, str] | None = None
    for value in role.param.enum:
        words = describe(value).lower()
        if re.search(rf"\b{re.escape(words)}\b", low) and (best is None or len(words) > best[0]):
            best = (len(words), value)
    return best[1] if best else None


def _quantity(role: Role, prompt: str) -> int | None:
    unit = (role.unit or role.words).lower()
    stem = unit[:-1] if unit.endswith("s") else unit
    m = re.search(rf"(\d+) {re.escape(stem)}s?\b", prompt, re.IGNORECASE)
    return int(m.group(1)) if m else None


def _expression(prompt: str) -> str | None:
    numbers = _NUMBER.findall(prompt.replace(",", ""))
    if len(numbers) < 2:
        return None
    low = prompt.lower()
    if any(w in low for w in ("times", " each", "of them", "how much do")):
        op = "*"
    elif any(w in low for w in ("left", "difference", "spent", "back as a refund", "minus")):
        op = "-"
    else:
        op = "+"
    return f"{numbers[0]} {op} {numbers[1]}"


def _summary(prompt: str) -> str:
    sentences = [s.strip() for s in re.split(r"(?<=[.?!])\s+", prompt) if s.strip()]
    best = max(sentences, key=len) if sentences else prompt
    return best[:200]


def _records(role: Role, lex: Lexicon, prompt: str) -> list[dict[str, Any]] | None:
    m = re.search(rf"{re.escape(role.words)}: ([^()]+)\)", prompt, re.IGNORECASE)
    if m is None:
        return None
    out = []
    for chunk in m.group(1).split("; "):
        record: dict[str, Any] = {}
        names = re.match(r"([A-Z][a-z]+) ([A-Z][a-z]+)", chunk)
        name_fields = [f for f in role.fields if f.kind == "name"]
        if names and name_fields:
            parts = [names.group(1), names.group(2)]
            for f, part in zip(name_fields, parts if len(name_fields) > 1 else
                               [" ".join(parts)], strict=False):
                record[f.param.name] = part
        dates = _DATE.findall(chunk)
        money = _MONEY.findall(chunk)
        for f in role.fields:
            if f.kind == "id" and f.id_format is not None:
                found = f.id_format.regex().search(chunk)
                if found:
                    record[f.param.name] = found.group(0)
            elif f.kind == "date" and dates:
                record[f.param.name] = dates.pop(0)
            elif f.kind == "money" and money:
                record[f.param.name] = float(money.pop(0))
        out.append(record)
    return out


def read_call(spec: AgentSpec, tool: str, prompt: str) -> tuple[dict[str, Any], str | None]:
    """The arguments of ``tool`` the ask gives, and the first required identifier it lacks."""
    lex = lexicon(spec)
    roles = lex.tool_roles(tool)
    wanted = {r.entity for r in roles if r.kind in ("id", "ids")}
    args = _ids_for(roles, _id_matches(lex, prompt, wanted)) if wanted else {}
    low = prompt.lower()
    kinds = {r.kind for r in roles}
    dates = [d for d in _DATE.finditer(prompt)
             if not prompt[max(0, d.start() - 6):d.start()].lower().endswith("born ")] \
        if "date" in kinds else []
    money = _MONEY.findall(prompt) if "money" in kinds else []
    hidden = action_of(spec, tool).hidden
    address = [r for r in roles if r.kind == "address"]
    for role in roles:
        name, kind = role.param.name, role.kind
        value: Any = None
        if kind == "attribute":
            value = _enum(role, low)
        elif kind == "flag":
            value = _flag(role, low)
        elif kind == "quantity":
            value = _quantity(role, prompt)
        elif kind == "money" and money:
            value = float(money.pop(0)) if role.param.type == "number" else money.pop(0)
        elif kind == "date":
            if "birth" in name or "dob" in name:
                born = re.search(r"born (\d{4}-\d{2}-\d{2})", prompt)
                value = born.group(1) if born else None
            elif dates:
                value = dates.pop(0).group(0)
        elif kind == "email":
            found = _EMAIL.search(prompt)
            value = found.group(0) if found else None
        elif kind == "phone":
            found = _PHONE.search(prompt)
            value = found.group(0) if found else None
        elif kind == "name":
            found = _NAME.search(prompt)
            if found:
                value = found.group(1) if "first" in name else found.group(2) \
                    if "last" in name else f"{found.group(1)} {found.group(2)}"
        elif kind == "address" and role is address[0]:
            args.update(_address(address, prompt))
        elif kind == "place":
            origin = name.startswith(("origin", "from", "depart"))
            found = re.search(r"\bfrom\s+([A-Z]{3})\b" if origin else r"\bto\s+([A-Z]{3})\b",
                              prompt)
            value = found.group(1) if found else None
        elif kind == "expression":
            value = _expression(prompt)
        elif kind == "records":
            value = _records(role, lex, prompt)
        elif kind == "text":
            if hidden:
                value = _summary(prompt)
            else:
                found = re.search(r"because (?:it was )?([^.?!()]+)", prompt)
                value = found.group(1).strip() if found else None
        if value is not None:
            args[name] = value
    missing = next((r.param.name for r in roles if r.param.required
                    and r.kind in _REQUIRED_KINDS and r.param.name not in args), None)
    return {r.param.name: args[r.param.name] for r in roles if r.param.name in args}, missing


def read_turns(spec: AgentSpec, tool: str, texts: Sequence[str],
               answering: Sequence[str] = (),
               cache: dict[tuple[str, str], dict[str, Any]] | None = None,
               ) -> tuple[dict[str, Any], str | None]:
    """``read_call`` over a person's messages in order: a later message's value wins (a
    correction), an answer to a question for one detail (``answering[n]``, the parameter asked
    for just before ``texts[n]``) fills just that detail, and a required date or option with
    fixed choices counts as missing too, so the agent asks for it. ``cache`` keeps each message's
    reading for the next call of one conversation.

    >>> from whileai.simulations.agent.spec import agent_spec
    >>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
    ...     "properties": {"order_id": {"type": "string", "description": "such as '#W0000000'"}},
    ...     "required": ["order_id"]}}])
    >>> read_turns(spec, "get_order", ["where is my order?", "It's #W1234567."],
    ...            ["", "order_id"])
    ({'order_id': '#W1234567'}, None)
    """
    args: dict[str, Any] = {}
    lex = lexicon(spec)
    roles = lex.tool_roles(tool)
    for n, text in enumerate(texts):
        if cache is None:
            found, _ = read_call(spec, tool, text)
        else:
            found = cache.get((tool, text)) or {}
            if (tool, text) not in cache:
                found = cache[(tool, text)] = read_call(spec, tool, text)[0]
        asked = answering[n] if n < len(answering) else ""
        role = lex.role(tool, asked) if asked else None
        if role is None or role.param.name not in {r.param.name for r in roles}:
            args.update(found)
            continue
        args.update({k: v for k, v in found.items() if k not in args})
        value = _answer(role, text, found)
        if value is not None:
            args[role.param.name] = value
    missing = next((r.param.name for r in roles if r.param.required and r.param.name not in args
                    and (r.kind in _REQUIRED_KINDS or r.kind == "date"
                         or (r.kind == "attribute" and r.param.enum))), None)
    return {r.param.name: args[r.param.name] for r in roles if r.param.name in args}, missing


def _answer(role: Role, text: str, found: dict[str, Any]) -> Any:
    """The value a short answer gives for the one field it was asked for."""
    if role.kind in ("id", "ids") and role.id_format is not None:
        values = [m.group(0) for m in role.id_format.regex().finditer(text)]
        if not values:
            return found.get(role.param.name)
        if role.kind == "ids":
            return values
        return int(values[0]) if role.param.type == "integer" and values[0].isdigit() \
            else values[0]
    if role.kind == "name":
        return _bare_name([role], text).get(role.param.name, found.get(role.param.name))
    if role.kind == "date":
        dates = _DATE.findall(text)
        return dates[0] if dates else None
    return found.get(role.param.name)


_BARE = re.compile(r"\b([A-Z][a-z]+) ([A-Z][a-z]+)\b")
_NOT_NAMES = frozenset(("Sure", "Yes", "It", "The", "Right", "Let", "Oh", "Ah", "Here", "That",
                        "My", "For", "Hi", "Hello", "Okay", "Ok", "Thanks", "Name", "First",
                        "Last", "Of", "Well", "So", "Yep", "Fine"))


def _bare_name(roles: Sequence[Role], text: str) -> dict[str, str]:
    pair = next((m for m in _BARE.finditer(text) if m.group(1) not in _NOT_NAMES), None)
    if pair is not None:
        first, last = pair.group(1), pair.group(2)
    else:
        single = next((w for w in re.findall(r"\b[A-Z][a-z]+\b", text)
                       if w not in _NOT_NAMES), None)
        if single is None:
            return {}
        first = last = single
    out = {}
    for role in roles:
        name = role.param.name.lower()
        out[role.param.name] = first if "first" in name else last if "last" in name \
            else f"{first} {last}" if pair is not None else first
    return out


def _flag(role: Role, low: str) -> Any:
    noun = "insurance" if "insurance" in role.param.name.lower() else role.words
    said = False if f"without {noun}" in low else True if f"with {noun}" in low else None
    if said is None or not role.param.enum:
        return said
    wanted = ("yes", "true") if said else ("no", "false")
    return next((e for e in role.param.enum if e.lower() in wanted), None)


def _address(roles: Sequence[Role], prompt: str) -> dict[str, str]:
    if len(roles) == 1 and "zip" in roles[0].param.name.lower():
        found = _ZIP.search(prompt)
        return {roles[0].param.name: found.group(1)} if found else {}
    start = re.search(r"\b\d+ [A-Z][a-z]+ (?:Street|Avenue|Road|Lane|Drive|View)\b", prompt)
    if start is None:
        return {}
    tail = re.split(r"[?()!]|\.\s", prompt[start.start():])[0]
    parts = [p.strip().rstrip(".") for p in tail.split(",")]
    out = {}
    for role, part in zip(roles, parts, strict=False):
        low = role.param.name.lower()
        if "zip" in low or "postal" in low:
            code = re.match(r"\d{5}", part)
            part = code.group(0) if code else ""
        elif "state" in low or "country" in low:
            part = part.split(" ")[0]
        if part:
            out[role.param.name] = part
    return out
