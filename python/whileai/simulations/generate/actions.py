"""What a person asks a tool to do: a verb phrase and its object, read from names and descriptions.

``modify_pending_order_address`` reads as *change* the *address* on an *order* (a write on one
record); ``return_delivered_order_items`` as *return* *items* from an *order* (a write on a list);
``list_all_product_types`` as *list* all the *product types* (a read with no record). Tools a
person never names (a scratchpad ``think``, ``calculate``, a transfer to a human) are marked
``hidden``: asks reach them through a need ("what would the total be...", "can I talk to a
person?"), never by the tool's name.

>>> from whileai.simulations.agent.spec import agent_spec
>>> spec = agent_spec(tools=[{"name": "cancel_pending_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}])
>>> a = action_of(spec, "cancel_pending_order")
>>> a.verb, a.entity, a.write, a.hidden
('cancel', 'order', True, '')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from whileai.simulations.agent.spec import AgentSpec, ToolSpec
from whileai.simulations.world.roles import lexicon, person_entity
from whileai.simulations.world.toolkinds import hidden_kind

__all__ = ["HIDDEN", "Action", "action_of", "hidden_kind", "plural"]

HIDDEN = ("think", "calculate", "handoff")
# tool-name verb -> the verb a person uses, and whether it only reads
VERBS: dict[str, tuple[str, bool]] = {
    "get": ("check", True), "lookup": ("look up", True), "look": ("look up", True),
    "find": ("find", True), "list": ("list", True), "search": ("search for", True),
    "check": ("check", True), "fetch": ("pull up", True), "show": ("show me", True),
    "view": ("check", True), "track": ("track", True), "read": ("read", True),
    "query": ("look up", True), "retrieve": ("pull up", True),
    "cancel": ("cancel", False), "update": ("change", False), "modify": ("change", False),
    "change": ("change", False), "edit": ("edit", False), "set": ("set", False),
    "create": ("set up", False), "add": ("add", False), "book": ("book", False),
    "make": ("make", False), "delete": ("delete", False), "remove": ("remove", False),
    "refund": ("refund", False), "return": ("return", False), "exchange": ("exchange", False),
    "send": ("send", False), "reset": ("reset", False), "close": ("close", False),
    "open": ("open", False), "schedule": ("schedule", False), "reschedule": ("move", False),
    "pay": ("pay", False), "issue": ("issue", False), "apply": ("apply", False),
    "submit": ("submit", False), "approve": ("approve", False), "assign": ("assign", False),
    "suspend": ("suspend", False), "resume": ("resume", False), "enable": ("turn on", False),
    "disable": ("turn off", False), "refuel": ("top up", False),
    "transfer": ("transfer", False), "move": ("move", False), "upgrade": ("upgrade", False),
    "renew": ("renew", False), "block": ("block", False), "unblock": ("unblock", False),
    "report": ("report", False), "extend": ("extend", False),
}
_STATUS_WORDS = frozenset(("pending", "delivered", "all", "by", "for", "of", "the", "a", "to",
                           "details", "detail", "info", "information", "id", "ids", "new",
                           "existing", "current"))
_ASPECT_WORDS = {"baggages": "bags", "baggage": "bags", "onestop": "one-stop"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """One tool as a person's request: verb, object entity, aspect, read/write, list or not."""

    tool: str
    verb: str  # base form: "change", "look up"
    entity: str = ""  # the record acted on ("order"), "" for none
    aspect: str = ""  # the part of it ("address", "items"), "" for the record itself
    write: bool = False
    multi: bool = False  # acts on a list of items
    hidden: str = ""  # "think", "calculate", "handoff": reached through a need
    listing: bool = False  # reads a collection ("all the product types")
    target: str = ""  # an id parameter that names what the object becomes ("to plan P1")


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", name) if w]


def plural(noun: str) -> str:
    """A noun phrase's plural (``item`` -> ``items``, ``baggage`` stays)."""
    if not noun or noun.endswith("s") or noun.endswith("baggage") or noun.endswith("data"):
        return noun
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


_CACHE: dict[tuple[int, str], tuple[AgentSpec, Action]] = {}


def action_of(spec: AgentSpec, tool: str) -> Action:
    """The action ``tool`` of ``spec`` stands for (built once per spec and tool)."""
    hit = _CACHE.get((id(spec), tool))
    if hit is not None and hit[0] is spec:
        return hit[1]
    found = next((t for t in spec.tools if t.name == tool), ToolSpec(name=tool))
    action = _derive(spec, found)
    if len(_CACHE) >= 512:
        _CACHE.clear()
    _CACHE[(id(spec), tool)] = (spec, action)
    return action


def _derive(spec: AgentSpec, tool: ToolSpec) -> Action:
    words = _words(tool.name)
    hidden = hidden_kind(tool)
    verb, read, rest = "", True, words
    for i, w in enumerate(words):
        if w in VERBS:
            verb, read = VERBS[w]
            rest = words[:i] + words[i + 1 :]
            break
    if not verb:
        first = (tool.description.split(" ")[0].lower().rstrip("s.") if tool.description
                 else "")
        verb, read = VERBS.get(first, ("sort out", False))
    roles = lexicon(spec).tool_roles(tool.name)
    ids = [r for r in roles if r.kind == "id"]
    lists = [r for r in roles if r.kind == "ids" and not r.qualifier]
    named = [r for r in ids if r.entity and set(r.entity.split()) <= set(rest)]
    things = [r for r in ids if not person_entity(r.entity)]
    target = ""
    if named:
        main = named[0]
        earlier = [r for r in things if roles.index(r) < roles.index(main) and r is not main]
        if earlier and not read:  # change_plan(line_id, plan_id): the line becomes plan P1
            target, main = main.param.name, earlier[0]
    elif things:
        main = things[-1] if read else things[0]
    elif ids:
        main = ids[0]
    else:
        main = None
    entity = main.entity if main is not None else ""
    if not entity and any(w in _PERSONS for w in rest) and any(
            r.kind in ("email", "phone", "name") for r in roles):
        entity = next(w for w in rest if w in _PERSONS)
    covered = set(entity.split())
    if target:
        covered |= set(lexicon(spec).role(tool.name, target).entity.split())
    aspect_words = [_ASPECT_WORDS.get(w, w) for w in rest
                    if w not in _STATUS_WORDS and w not in covered]
    aspect = plural(lists[0].entity) if lists else " ".join(aspect_words)
    listing = read and not ids and not lists and not entity
    if listing and aspect:
        aspect = plural(aspect)
    if target:
        aspect = lexicon(spec).role(tool.name, target).entity
    return Action(tool=tool.name, verb=verb, entity=entity, aspect=aspect, write=not read,
                  multi=bool(lists), hidden=hidden, listing=listing, target=target)


_PERSONS = frozenset(("user", "customer", "account", "member", "client", "profile"))
