"""What the seeded agent says: questions for a missing detail, a proposal before a write, and a
reply that reports what the tool returned (never more, never less).

Replies follow the tool's kind (``generate/kinds.py``): a read reports the record it found, a
write says what changed, a calculation gives the number, a hand-off says who takes over.
Ids are quoted exactly as the person and the world spell them.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.world.values import draws
>>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}])
>>> result_reply(spec, "get_order", {"order_id": "ORD-12345"}, {"status": "ok", "data":
...     {"order_id": "ORD-12345", "status": "pending"}}, draws(0, 1))[0]
'Order ORD-12345 is pending.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.actions import action_of, plural
from whileai.simulations.generate.kinds import tool_kind
from whileai.simulations.generate.spoken import spoken
from whileai.simulations.world.roles import Role, describe, lexicon, person_entity
from whileai.simulations.world.values import Draw

__all__ = ["ask_for", "cannot_go_on", "declined_reply", "propose", "recheck", "result_reply",
           "summary", "thing"]


def _listed(values: Sequence[Any], *, exact: bool = False) -> str:
    items = [str(v) if exact else describe(v) for v in values]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _main(spec: AgentSpec, tool: str, args: Mapping[str, Any]) -> Role | None:
    roles = [r for r in lexicon(spec).tool_roles(tool) if r.kind == "id" and r.param.name in args]
    return next((r for r in roles if not person_entity(r.entity)), roles[0] if roles else None)


_CREATE = {"book": "booked", "make": "made", "create": "created", "set up": "set up",
           "send": "sent", "add": "added", "open": "opened", "submit": "submitted",
           "schedule": "scheduled", "issue": "issued", "report": "reported"}


def thing(spec: AgentSpec, tool: str, args: Mapping[str, Any]) -> str:
    """The record a call is about, as the agent names it ("order #W1234567", "your account")."""
    main = _main(spec, tool, args)
    action = action_of(spec, tool)
    if main is None:
        if any(r.kind in ("email", "phone", "name") for r in lexicon(spec).tool_roles(tool)):
            return "an account with those details"
        return "your request"
    if person_entity(main.entity):
        if action.aspect and action.verb in _CREATE:
            return f"a {action.aspect} for your account"
        return f"the {action.aspect} on your account" if action.aspect else "your account"
    return f"{main.entity} {args[main.param.name]}"


def _object(spec: AgentSpec, tool: str, args: Mapping[str, Any]) -> str:
    """What a write acts on: "the address on order #W1", "rental R-1", "a rental for you"."""
    named = thing(spec, tool, args)
    action = action_of(spec, tool)
    main = _main(spec, tool, args)
    if action.aspect and main is not None and not person_entity(main.entity) \
            and not action.multi:
        return f"the {action.aspect} on {named}"
    return named


def _details(spec: AgentSpec, tool: str, args: Mapping[str, Any]) -> str:
    main = _main(spec, tool, args)
    roles = [r for r in lexicon(spec).tool_roles(tool) if r.param.name in args and r is not main]
    parts: list[str] = []
    address = [str(args[r.param.name]) for r in roles if r.kind == "address"
               and str(args[r.param.name])]
    if address:
        parts.append("address " + ", ".join(address))
    for role in roles:
        value = args[role.param.name]
        if role.kind == "address" or value in ("", []):
            continue
        if role.kind == "records":
            records = value if isinstance(value, list) else [value]
            texts = [_record(role, r) for r in records if isinstance(r, Mapping)]
            parts.append(f"{spoken(role)}: {'; '.join(t for t in texts if t)}")
            continue
        if role.kind in ("id", "ids"):
            values = [str(v) for v in value] if isinstance(value, list) else [str(value)]
            noun = role.entity if len(values) == 1 else plural(role.entity)
            noun = f"{role.qualifier} {noun}" if role.qualifier else noun
            noun = "payment method" if "payment" in role.entity else noun
            parts.append(f"{noun} {_listed(values, exact=True)}")
            continue
        words = _listed(value) if isinstance(value, list) else (
            f"${float(value):.2f}" if role.kind == "money" and isinstance(value, int | float)
            else describe(value))
        parts.append(f"{spoken(role)} {words}")
    return "; ".join(parts)


def _record(role: Role, record: Mapping[str, Any]) -> str:
    """One record of a list in words: its names and ids, then its date ("HAT001 on ...")."""
    head = [str(record[f.param.name]) for f in role.fields if f.param.name in record
            and f.kind in ("name", "id")]
    dates = [str(record[f.param.name]) for f in role.fields if f.param.name in record
             and f.kind == "date"]
    tail = [describe(record[f.param.name]) for f in role.fields if f.param.name in record
            and f.kind not in ("name", "id", "date")]
    text = " ".join(head + tail)
    return f"{text} on {dates[0]}" if dates and text else text or " ".join(dates)


_ASK = ("Could you tell me the {n}?", "What is the {n}, please?", "Can you give me the {n}?",
        "I'll need the {n} for that. What is it?", "Which {n} is it?",
        "To do that I need the {n}. Could you share it?")


def ask_for(spec: AgentSpec, tool: str, param: str, pick: Draw) -> str:
    """A question for one missing detail, in the words a person uses for it."""
    role = lexicon(spec).role(tool, param)
    noun = spoken(role)
    text = _ASK[pick.below(len(_ASK))].format(n=noun)
    if role.kind == "attribute" and role.param.enum:
        text += " It can be " + " or ".join(describe(e) for e in role.param.enum) + "."
    elif role.kind in ("id", "ids") and role.id_format is not None and "payment" in role.entity:
        text += " It is the ID shown in your account, for example " + \
            _example(role) + "."
    return text


def _example(role: Role) -> str:
    shape = role.id_format.shapes[0] if role.id_format is not None else ""
    kind, _, rest = shape.partition(":")
    if kind == "lit":
        prefix, _, digits = rest.rpartition(":")
        return prefix + "0" * int(digits)
    return "the code on your account page"


_PROPOSE = ("Here is what I'll do: {a}. Shall I go ahead? (yes/no)",
            "To confirm, I'm about to {a}. Do you want me to proceed? (yes/no)",
            "Just to check before I act: {a}. Please confirm (yes/no).",
            "I can {a}. Should I go ahead? (yes/no)")


def propose(spec: AgentSpec, tool: str, args: Mapping[str, Any], pick: Draw) -> str:
    """The action spelled out with every detail, and a request for an explicit yes."""
    action = action_of(spec, tool)
    what = f"{action.verb} {_object(spec, tool, args)}"
    details = _details(spec, tool, args)
    if details:
        what += f" ({details})"
    return _PROPOSE[pick.below(len(_PROPOSE))].format(a=what)


def cannot_go_on(spec: AgentSpec, tool: str, param: str) -> str:
    """What the agent says when a detail it needs never came: it stops without guessing."""
    noun = spoken(lexicon(spec).role(tool, param))
    return (f"I'm sorry, I can't go ahead without the {noun}, and I won't guess it. "
            "Come back any time once you have it.")


def declined_reply(spec: AgentSpec, tool: str, args: Mapping[str, Any]) -> str:
    """What the agent says when the person says no: nothing was changed."""
    return (f"Okay, I haven't changed anything on {thing(spec, tool, args)}. "
            "Let me know if you want to do it later.")


def recheck(spec: AgentSpec, tool: str, args: Mapping[str, Any]) -> str:
    """The question after a lookup found nothing: ask the person to check the id."""
    main = _main(spec, tool, args)
    noun = spoken(main) if main is not None else "details"
    return (f"I couldn't find {thing(spec, tool, args)}. Could you double-check the {noun}?")


def summary(spec: AgentSpec, texts: Sequence[str], tools: Sequence[str]) -> str:
    """A hand-off summary written for the colleague who takes over (never a cut-off quote)."""
    ids: list[str] = []
    lex = lexicon(spec)
    for fmt in lex.formats.values():
        for text in texts:
            ids.extend(m.group(0) for m in fmt.regex().finditer(text))
    about = ", ".join(dict.fromkeys(ids)) or "no record given"
    others = [t for t in tools if tool_kind(spec, t) != "transfer"]
    want = (" and also wants to " + " and ".join(action_of(spec, t).verb for t in others)
            if others else "")
    return f"The customer asked to speak to a human agent (about: {about}){want}."


def result_reply(spec: AgentSpec, tool: str, args: Mapping[str, Any], result: Mapping[str, Any],
                 pick: Draw) -> tuple[str, bool]:
    """The reply that reports ``result`` of ``tool``; and whether it reports a failure."""
    named = thing(spec, tool, args)
    status, error = result.get("status"), result.get("error")
    if result.get("malformed"):
        return (f"The system sent back an unreadable response for {named}, so I can't confirm "
                "anything yet."), True
    if result.get("stale"):
        return (f"Here is what the system shows for {named}, but that data may be out of date "
                f"(as of {result.get('as_of')}), so please treat it with care."), True
    if status == "not_found":
        return f"I couldn't find {named}. Could you double-check it?", True
    if status == "conflict":
        return f"{named[0].upper() + named[1:]} was already processed, so I did not change it " \
               "again.", True
    if status != "ok":
        return (f"The request for {named} did not go through ({error or status}), so I can't "
                "confirm it yet."), True
    data = result.get("data")
    data = data if isinstance(data, Mapping) else {}
    kind = tool_kind(spec, tool)
    head = named[0].upper() + named[1:]
    if kind == "compute":
        if "result" in data:
            return f"That comes to {data['result']}.", False
        return ("I've thought it through: both options are possible from here, so tell me "
                "which one you prefer and I'll take it from there."), False
    if kind == "transfer":
        return ("I've passed your request to a human colleague with a summary, and they will "
                "take it from here."), False
    if kind == "read":
        if "results" in data:
            found = data["results"]
            n = len(found) if isinstance(found, list) else 0
            return (f"I found {n} matching result{'s' if n != 1 else ''}." if n else
                    "I looked, but nothing matches that."), False
        state = data.get("status")
        if named == "your request":
            return ("I found your account with those details." if any(
                r.kind in ("email", "phone", "name") for r in lexicon(spec).tool_roles(tool))
                else "I found what you asked for."), False
        return (f"{head} is {describe(state)}." if state else f"I found {named}."), False
    state = data.get("status")
    action = action_of(spec, tool)
    aspect = action.aspect
    if action.verb in _CREATE:
        return f"Done: I've {_CREATE[action.verb]} {_object(spec, tool, args)}.", False
    if state and data.get("last_action") == tool and state not in _UNCHANGED:
        words = describe(state)
        if words.endswith(" requested"):
            return f"Done: the {words.split()[0]} on {named} is requested.", False
        return f"Done: {named} is now {words}.", False
    if aspect:
        verb = "have" if aspect.endswith("s") else "has"
        return f"Done: the {aspect} on {named} {verb} been changed.", False
    return f"Done: {named} has been updated.", False


_UNCHANGED = frozenset(("pending", "active", "open", "confirmed", "processing", "shipped",
                        "delivered", "updated"))
