"""The task clause of an ask: a tool's action, its object with its id, and every other value.

``words_for`` turns a tool and the draft's values into ``{action}`` (a verb phrase), ``{thing}``
(the record, with its id, or the collection) and ``{detail}`` (the other values, each worded by
its role: "to 12 Elm Street, Apt 4, Austin, TX, 78701, USA", "in business", "for $120.00",
"with 2 GB"), plus the literal values it used (``spans``), which typing never mangles, so an
agent can read them back. Hidden tools get whole asks that need them (``hidden_ask``).

>>> from whileai.simulations.agent.spec import agent_spec
>>> spec = agent_spec(tools=[{"name": "cancel_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string", "description": "such as 'O-1234'"}}}}])
>>> w = words_for(spec, "cancel_order", {"order_id": "O-5521"}, draws(0, 1), ambiguous=False)
>>> w.action, w.thing
('cancel', 'order O-5521')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.actions import Action, action_of, plural
from whileai.simulations.generate.spoken import payment_words
from whileai.simulations.world.fakes import id_value
from whileai.simulations.world.roles import Role, describe, lexicon, person_entity
from whileai.simulations.world.values import Draw, draws

__all__ = ["TaskWords", "draws", "hidden_ask", "words_for"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskWords:
    """The pieces a template fills, and the literal values the ask carries."""

    action: str
    thing: str
    detail: str
    spans: tuple[str, ...] = ()
    entity_named: bool = True  # the object has a record (status/undo templates fit)


def _money(value: Any) -> str:
    try:
        return f"${float(value):.2f}"
    except (TypeError, ValueError):
        return str(value)


def _join(items: Sequence[str]) -> str:
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _count(n: int, unit: str) -> str:
    if n == 1 and unit.endswith("s") and not unit.endswith("ss"):
        unit = unit[:-1]
    return f"{n} {unit}"


def _record_words(role: Role, record: Mapping[str, Any]) -> str:
    names = " ".join(str(record[f.param.name]) for f in role.fields
                     if f.kind == "name" and f.param.name in record)
    parts: list[str] = []
    for f in role.fields:
        value = record.get(f.param.name)
        if value is None or f.kind == "name":
            continue
        low = f.param.name.lower()
        if f.kind == "date":
            parts.append(f"born {value}" if "birth" in low or "dob" in low else f"on {value}")
        elif f.kind == "money":
            parts.insert(0, _money(value) + " on")
        else:
            parts.append(describe(value) if f.kind != "id" else str(value))
    text = " ".join(parts)
    return f"{names}, {text}" if names and text else names or text


def _detail(role: Role, value: Any, action: Action, pick: Draw) -> tuple[str, list[str]]:
    """One parameter's value in words (leading space), and the literal strings it carries."""
    kind, name = role.kind, role.param.name.lower()
    if kind == "id":
        text = str(value)
        if person_entity(role.entity):
            forms = (" (my {e} id is {v})", " ({e} id {v})", " (account {v})")
            return forms[pick.below(len(forms))].format(e=role.entity, v=text), [text]
        if "payment" in role.entity or "card" in role.entity:
            forms = (" using {v}", " with my {v}", " (paying with {v})")
            return forms[pick.below(len(forms))].format(v=text), [text]
        return f" for {role.entity} {text}", [text]
    if kind == "ids":
        values = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        noun = plural(role.entity) if len(values) > 1 else role.entity
        prep = " to " if action.verb in ("change", "edit", "set") else " for "
        if role.qualifier:
            return f"{prep}{role.qualifier} {noun} {_join(values)}", values
        return f" ({noun} {_join(values)})", values
    if kind == "attribute":
        text = describe(value)
        if any(w in name for w in ("cabin", "class", "tier", "seat")):
            return f" in {text}", [text]
        if "reason" in name:
            forms = (" (reason: {v})", " (the reason: {v})", " (the reason being {v})")
            form = forms[pick.below(len(forms))] if " " in text else " (reason: {v})"
            return form.format(v=text), [text]
        return f" ({text})", [text]
    if kind == "flag":
        yes = str(value).lower() in ("yes", "true")
        noun = "insurance" if "insurance" in name else role.words
        return (f" with {noun}" if yes else f" without {noun}"), [noun]
    if kind == "quantity":
        unit = role.unit or role.words
        text = _count(int(value) if isinstance(value, int | float) else 1, unit)
        return f" ({text})" if not action.write else f" with {text}", [text]
    if kind == "money":
        text = _money(value)
        return f" for {text}", [text]
    if kind == "date":
        text = str(value)
        if "birth" in name or "dob" in name:
            return f" (born {text})", [text]
        if any(w in name for w in ("end", "until", "return", "check_out", "last")):
            return f" until {text}", [text]
        if any(w in name for w in ("start", "from", "check_in", "first")):
            return f" from {text}", [text]
        return f" on {text}", [text]
    if kind == "email":
        return f" (my email is {value})", [str(value)]
    if kind == "phone":
        return f" (my number is {value})", [str(value)]
    if kind == "name":
        return f" (my name is {value})", [str(value)]
    if kind == "place":
        text = str(value)
        if name.startswith(("origin", "from", "depart")):
            return f" from {text}", [text]
        if name.startswith(("destination", "to", "arriv")):
            return f" to {text}", [text]
        return f" ({role.words} {text})", [text]
    if kind == "records":
        records = value if isinstance(value, list) else [value]
        texts = [_record_words(role, r) for r in records if isinstance(r, Mapping)]
        return f" ({role.words}: {'; '.join(texts)})", texts
    if kind == "text":
        text = str(value)
        return f" because {text}", [text]
    return f" ({role.words} {value})", [str(value)]


def _address(roles: Sequence[Role], slots: Mapping[str, Any]) -> tuple[str, list[str]]:
    parts = [str(slots[r.param.name]) for r in roles if str(slots.get(r.param.name, ""))]
    text = ", ".join(parts)
    if len(parts) == 1 and "zip" in roles[0].param.name.lower():
        return f" (zip {text})", [text]
    return f" to {text}", [text]


def _names(roles: Sequence[Role], slots: Mapping[str, Any],
           zip_role: Role | None) -> tuple[str, list[str]]:
    text = " ".join(str(slots[r.param.name]) for r in roles if r.param.name in slots)
    if zip_role is not None:
        code = str(slots[zip_role.param.name])
        return f" (I'm {text}, zip code {code})", [f"I'm {text}, zip code {code}"]
    return f" (my name is {text})", [f"my name is {text}"]


def words_for(
    spec: AgentSpec, tool: str, slots: Mapping[str, Any], pick: Draw, *, ambiguous: bool,
    recite: bool = True,
) -> TaskWords:
    """The action, object and details of one tool's part of an ask.

    With ``recite=False`` the person talks as people do when they can be asked again: a payment
    method is "my gift card" (its id is given when the agent asks for it), and a required
    reason is left out half the time.
    """
    action = action_of(spec, tool)
    roles = [r for r in lexicon(spec).tool_roles(tool) if r.param.name in slots]
    main = next((r for r in roles if r.kind == "id" and r.entity == action.entity
                 and r.param.name != action.target), None)
    spans: list[str] = []
    verb = action.verb
    person = person_entity(action.entity)
    if main is not None and not person:
        value = str(slots[main.param.name])
        if ambiguous:
            base = f"my {main.entity}"
        else:
            forms = ("{e} {v}", "my {e} {v}", "{e} {v}", "the {e} {v}", "{e} number {v}")
            base = forms[pick.below(len(forms))].format(e=main.entity, v=value)
            spans.append(value)
        thing = base
        if action.aspect:
            if action.multi:
                lists = [r for r in roles if r.kind == "ids" and not r.qualifier]
                items = slots[lists[0].param.name] if lists else []
                items = items if isinstance(items, list) else [items]
                noun = plural(lists[0].entity) if len(items) > 1 else lists[0].entity
                prep = " from " if verb in ("return", "exchange", "remove", "delete") else " on "
                thing = f"{noun} {_join(items)}{prep}{base}"
                spans.extend(str(i) for i in items)
            else:
                prep = " on " if action.write else (" of ", " for ")[pick.below(2)]
                thing = f"the {action.aspect}{prep}{base}"
    elif action.listing:
        thing = action.aspect if verb.startswith("search") else \
            ("all the ", "all your ", "the ")[pick.below(3)] + action.aspect
    elif person or action.entity:
        noun = "account" if person or not action.entity else action.entity
        if action.aspect and action.write and verb in ("book", "send", "set up", "make",
                                                        "open", "create", "add", "submit"):
            thing = f"a {action.aspect}"
        elif action.aspect and action.write:
            thing = f"the {action.aspect} on my {noun}"
        elif action.aspect and not action.write and roles and all(
                r.kind in ("email", "phone", "name", "address", "date") for r in roles):
            thing = f"my {noun}"
        elif action.aspect:
            thing = f"my {action.aspect}"
        else:
            thing = f"my {noun}"
    else:
        thing = f"my {action.aspect}" if action.aspect else "my request"
    detail = ""
    used = {main.param.name} if main is not None and not person else set()
    own = next((r for r in roles if r.kind == "id" and person_entity(r.entity)), None)
    if own is not None and person and not ambiguous:  # "my account (user id X)"
        text, literal = _detail(own, slots[own.param.name], action, pick)
        thing += text
        spans.extend(literal)
        used.add(own.param.name)
    if action.multi:
        used |= {r.param.name for r in roles if r.kind == "ids" and not r.qualifier}
    address = [r for r in roles if r.kind == "address"]
    names = [r for r in roles if r.kind == "name"]
    lone_zip = address[0] if len(address) == 1 and len(names) > 1 else None
    done_address = done_names = False
    last_kind = ""
    for role in roles:
        name = role.param.name
        if name in used:
            continue
        value = slots[name]
        if ambiguous and role.kind in ("id", "ids"):
            continue
        if role.kind == "address":
            if done_address or lone_zip is not None:
                continue
            text, literal = _address(address, slots)
            done_address = True
        elif role.kind == "name" and len(names) > 1:
            if done_names:
                continue
            text, literal = _names(names, slots, lone_zip)
            done_names = True
        elif role.kind == "id" and name == action.target:
            text, literal = f" to {role.entity} {value}", [str(value)]
        elif not recite and role.kind == "id" and ("payment" in role.entity
                                                   or "card" in role.entity):
            paying = (" with {v}", " using {v}", " (paying with {v})", " and use {v}")
            text, literal = paying[pick.below(len(paying))].format(v=payment_words(value)), []
        elif not recite and role.kind == "attribute" and role.param.required and \
                "reason" in name and pick.below(2) == 0:
            continue
        else:
            text, literal = _detail(role, value, action, pick)
            if role.kind == "quantity" and last_kind == "quantity" and text.startswith(" with "):
                text = " and " + text[len(" with "):]
        last_kind = role.kind
        detail += text
        spans.extend(literal)
    return TaskWords(action=verb, thing=thing, detail=detail, spans=tuple(spans),
                     entity_named=(main is not None and not person) or (
                         person and not action.aspect and any(r.kind == "id" for r in roles)))


def hidden_ask(spec: AgentSpec, tool: str, slots: Mapping[str, Any], pick: Draw) -> tuple[
        str, tuple[str, ...]]:
    """A whole ask that needs a hidden tool (think, calculate, a human), and its literals."""
    kind = action_of(spec, tool).hidden
    if kind == "calculate":
        return _calculation(str(slots.get("expression", "12.50 + 30.25")), pick)
    if kind == "handoff":
        thing, spans = _some_record(spec, pick)
        bank: tuple[str, ...] = (
            "I'd like to talk to a real person about {t}, please.",
            "Can you put me through to a human about {t}?",
            "I don't want a bot for this: is there a person I can speak to about {t}?",
            "Please connect me with a human agent, {t} is too complicated to do over chat.",
            "Get me someone from your team about {t}.",
            "Could a person from support take over my case about {t}?",
            "I need to speak to a human about {t}.",
            "Is there a real person who can look at {t}?",
            "Can I talk to someone from your staff about {t}?",
            "I'd rather deal with a person for {t}, can you transfer me?",
            "Please hand {t} over to a human.",
            "Could you pass me to a human agent? It's about {t}.",
        )
        return bank[pick.below(len(bank))].format(t=thing), spans
    writes = [a for a in (action_of(spec, t.name) for t in spec.tools)
              if a.write and not a.hidden and a.entity and not person_entity(a.entity)]
    if len(writes) >= 2:
        first = writes[pick.below(len(writes))]
        same = [a for a in writes if a.entity == first.entity and a.tool != first.tool]
        second = same[pick.below(len(same))] if same else writes[(writes.index(first) + 1)
                                                                  % len(writes)]
        thing, spans = _some_record(spec, pick, first.entity)
        one = first.verb + (f" the {first.aspect} on" if first.aspect else "")
        two = second.verb + (f" the {second.aspect} on" if second.aspect else "")
        bank = (
            "I can't decide whether to {a} {t} or to {b} it instead: can you think it "
            "through with me before doing anything?",
            "Before you touch anything, would it be better to {a} {t} or {b} it?",
            "Help me weigh it up: should I {a} {t}, or {b} it?",
            "What are the pros and cons if I {a} {t} instead of trying to {b} it?",
            "I'm torn between having you {a} {t} and having you {b} it, what do you think?",
            "Think it through with me first: {a} {t}, or {b} it?",
            "Would you {a} {t} in my position, or {b} it?",
            "Can you reason out whether to {a} {t} or {b} it before acting?",
        )
        return bank[pick.below(len(bank))].format(a=one, b=two, t=thing), spans
    thing, spans = _some_record(spec, pick)
    bank = ("Think it through before acting: what are my options for {t}?",
            "Can you reason out what's possible with {t} before you do anything?",
            "What could I do about {t}? Think it over before changing anything.",
            "Weigh up my options for {t} first, please.")
    return bank[pick.below(len(bank))].format(t=thing), spans


def _some_record(spec: AgentSpec, pick: Draw, entity: str = "") -> tuple[str, tuple[str, ...]]:
    lex = lexicon(spec)
    entities = [e for e in lex.formats if not person_entity(e) and "payment" not in e]
    if entity not in lex.formats:
        if not entities:
            return "my account", ()
        entity = entities[pick.below(len(entities))]
    value = id_value(lex.formats[entity], pick)
    return f"my {entity} {value}", (value,)


def _calculation(expression: str, pick: Draw) -> tuple[str, tuple[str, ...]]:
    parts = expression.split(" ")
    if len(parts) != 3:
        return f"Can you work out {expression} for me?", (expression,)
    a, op, b = parts
    banks = {
        "+": ("If I pay ${a} now and another ${b} later, what's the total?",
              "What would the total be for two things at ${a} and ${b}?",
              "Quick sum please: ${a} plus ${b}, how much is that altogether?",
              "How much is ${a} and ${b} together?", "Can you add up ${a} and ${b} for me?",
              "I owe ${a} and then ${b} more, what's that in total?"),
        "*": ("I need {b} of them at ${a} each, what would that cost in total?",
              "What's ${a} times {b}?", "If each one is ${a}, how much do {b} cost together?",
              "How much would {b} at ${a} each come to?",
              "{b} tickets at ${a} each, what's the total?",
              "Can you work out the cost of {b} items at ${a} each?"),
        "-": ("I had ${a} of credit and spent ${b}, how much is left?",
              "What's the difference between ${a} and ${b}?",
              "I paid ${a} and get ${b} back as a refund, what did it really cost me?",
              "If I take ${b} off ${a}, what's left?",
              "How much is ${a} minus ${b}?",
              "My balance was ${a} and I spent ${b}, what do I have left?"),
    }
    bank = banks.get(op, ("Can you work out {a} " + op + " {b}?",))
    return bank[pick.below(len(bank))].format(a=a, b=b), (a, b)
