"""What a tool does to the world, and which asks it can answer: read, write, irreversible, compute,
transfer.

A tool's kind is read by documented rules, first match wins:

1. an explicit kind: ``"x-kind"`` (or ``"kind"``) on the tool dict, or ``tool_kinds`` in the
   spec (``{"cancel_order": "irreversible"}``);
2. a hand-off to a person (``transfer_to_human_agents``, ``escalate``) is ``transfer``; a
   scratchpad or a calculator (``think``, ``calculate``, an ``expression`` parameter) is
   ``compute``;
3. the verb of the name (or, without one, of the description): a looking verb (``get``, ``find``,
   ``list``, ``search``, ...) is ``read``; a verb whose effect cannot be taken back (``cancel``,
   ``delete``, ``remove``, ``refund``, ``return``, ``send``, ``pay``, ``close``, ``book``,
   ``issue``, ``submit``, ...) is ``irreversible``; any other verb is ``write``;
4. a description saying "cannot be undone" (or "irreversible", "permanent") makes a write
   ``irreversible``.

Intents fit kinds (``fitted``): a status check or a how-to question is answered by reading, so a
cell that pairs one with a writing tool is played with a tool that reads the same record (or,
when there is none, asked as the task itself); a change of plan or an undo is asked only of
tools that change something. Every tool keeps the cells that ask for it directly, so every
tool is still reached. An undo is asked only of a change that can be put back (``change``,
``edit``, ``set``, ``move``, ...), never of a cancellation or a report.

>>> from whileai.simulations.spec import agent_spec
>>> spec = agent_spec(tools=[
...     {"name": "get_order", "parameters": {"type": "object",
...      "properties": {"order_id": {"type": "string"}}}},
...     {"name": "cancel_order", "parameters": {"type": "object",
...      "properties": {"order_id": {"type": "string"}}}}])
>>> tool_kind(spec, "get_order"), tool_kind(spec, "cancel_order")
('read', 'irreversible')
>>> fitted(spec, "check_status", ("cancel_order",))
('check_status', ('get_order',))
>>> fitted(spec, "change_request", ("get_order",))
('do_task', ('get_order',))
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whileai.simulations.generate.actions import action_of, hidden_kind
from whileai.simulations.spec import AgentSpec, ToolSpec
from whileai.simulations.world.roles import lexicon, person_entity

__all__ = ["KINDS", "WRITES", "confirms_writes", "fitted", "name_kind", "read_tool_for",
           "tool_kind"]

KINDS = ("read", "write", "irreversible", "compute", "transfer")
WRITES = ("write", "irreversible")

_READ = frozenset(("get", "lookup", "look", "find", "list", "search", "check", "fetch", "show",
                   "view", "track", "read", "query", "retrieve", "count", "describe", "verify",
                   "validate", "preview", "quote", "estimate", "browse", "inspect", "locate"))
_FINAL = frozenset(("cancel", "delete", "remove", "refund", "return", "send", "pay", "close",
                    "book", "issue", "submit", "purchase", "buy", "order", "terminate",
                    "revoke", "charge", "wire", "approve", "reject", "place",
                    "exchange", "publish", "post", "deactivate", "destroy", "purge"))
_FINAL_WORDS = re.compile(r"cannot be (?:undone|reversed)|irreversib|permanent", re.IGNORECASE)
_CONFIRM = re.compile(
    r"\b(?:explicit(?:ly)?\s+(?:user\s+)?confirm\w*|confirm\w*\s+(?:with|from)\s+the"
    r"\s+(?:user|customer)|(?:ask|obtain|get)\w*\s+(?:for\s+)?(?:an?\s+)?"
    r"(?:explicit\s+)?(?:user\s+)?confirmation|\(yes/no\)|\(yes\))", re.IGNORECASE)
# intents that need a tool of a kind; the rest fit any tool
_NEEDS = {"check_status": ("read",), "ask_how": ("read",), "change_request": WRITES,
          "undo": ("write",)}


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", name) if w]


def _derived(tool: ToolSpec) -> str:
    if tool.kind:
        return tool.kind
    hidden = hidden_kind(tool)
    if hidden == "handoff":
        return "transfer"
    if hidden in ("think", "calculate"):
        return "compute"
    words = _words(tool.name)
    verb = next((w for w in words if w in _READ or w in _FINAL or w in _VERBISH), "")
    if not verb and tool.description:
        verb = tool.description.split(" ")[0].lower().rstrip("s.")
        verb = verb if verb in _READ or verb in _FINAL or verb in _VERBISH else ""
    if verb in _READ:
        return "read"
    if verb in _FINAL or _FINAL_WORDS.search(tool.description):
        return "irreversible"
    return "write"


_VERBISH = frozenset(("update", "modify", "change", "edit", "set", "create", "add", "make",
                      "reset", "open", "schedule", "reschedule", "apply", "assign", "resume",
                      "enable", "disable", "refuel", "transfer", "move", "upgrade", "renew",
                      "suspend", "block", "unblock", "register", "toggle", "rename", "save",
                      "attach", "report", "extend"))

_CACHE: dict[tuple[int, str], tuple[AgentSpec, str]] = {}


def name_kind(name: str) -> str:
    """The kind of a tool known only by its name (rules 2 and 3), for rows without their spec.

    >>> name_kind("get_order"), name_kind("update_address"), name_kind("calculate")
    ('read', 'write', 'compute')
    """
    return _derived(ToolSpec(name=name))


def tool_kind(spec: AgentSpec, tool: str) -> str:
    """The kind of ``tool`` in ``spec`` (see the module rules); an unknown tool reads."""
    hit = _CACHE.get((id(spec), tool))
    if hit is not None and hit[0] is spec:
        return hit[1]
    found = next((t for t in spec.tools if t.name == tool), None)
    kind = _derived(found) if found is not None else "read"
    if len(_CACHE) >= 1024:
        _CACHE.clear()
    _CACHE[(id(spec), tool)] = (spec, kind)
    return kind


def confirms_writes(spec: AgentSpec, tool: str) -> bool:
    """Whether the policy (or the tool's description) asks for a yes before this write.

    >>> from whileai.simulations.spec import agent_spec
    >>> spec = agent_spec(tools=[{"name": "cancel_order"}],
    ...     system_prompt="Before cancelling, obtain explicit user confirmation (yes).")
    >>> confirms_writes(spec, "cancel_order")
    True
    """
    if tool_kind(spec, tool) not in WRITES:
        return False
    key = (id(spec), "confirm|" + tool)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1] == "yes"
    found = next((t for t in spec.tools if t.name == tool), None)
    text = spec.policy + " " + (found.description if found is not None else "")
    said = bool(_CONFIRM.search(text))
    _CACHE[key] = (spec, "yes" if said else "no")
    return said


def read_tool_for(spec: AgentSpec, tool: str) -> str:
    """A reading tool that looks at the record ``tool`` acts on (``""`` when there is none).

    The record is the entity of ``tool``'s first id that is not the person's own account; a
    reader taking only that id wins over one taking more.
    """
    lex = lexicon(spec)
    ids = [r for r in lex.tool_roles(tool) if r.kind == "id"]
    things = [r.entity for r in ids if not person_entity(r.entity)]
    if not things:  # reading a person's account says nothing about what was asked
        return ""
    entity = things[0]
    best: tuple[int, str] | None = None
    for other in spec.tools:
        if other.name == tool or tool_kind(spec, other.name) != "read":
            continue
        roles = lex.tool_roles(other.name)
        if any(r.kind == "id" and r.entity == entity for r in roles):
            extra = sum(1 for r in roles if r.param.required) - 1
            if best is None or extra < best[0]:
                best = (extra, other.name)
    return best[1] if best is not None else ""


def fitted(spec: AgentSpec, intent: str, tools: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The intent a cell is asked with and the tools that serve it (see the module rules)."""
    tools = tuple(tools)
    if not tools:
        return intent, tools
    kind = tool_kind(spec, tools[0])
    needs = _NEEDS.get(intent)
    if intent == "undo" and action_of(spec, tools[0]).verb not in _REVERTIBLE:
        return "do_task", tools
    if needs is None or kind in needs:
        return intent, tools
    if needs == ("read",) and kind in WRITES:
        reader = read_tool_for(spec, tools[0])
        if reader:
            return intent, (reader, *tools[1:])
    return "do_task", tools


# verbs whose effect a person can ask to have put back (an undo is asked only of these)
_REVERTIBLE = frozenset(("change", "edit", "set", "move", "turn on", "turn off", "reschedule",
                         "update", "assign"))
