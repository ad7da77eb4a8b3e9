"""What a tool does to the world: read, write, irreversible, compute or transfer.

A tool's kind is read by documented rules, first match wins:

1. an explicit kind: ``"x-kind"`` on the tool dict, or ``tool_kinds`` in the spec
   (``{"cancel_order": "irreversible"}``);
2. a hand-off to a person (``transfer_to_human_agents``, ``escalate``) is ``transfer``; a
   scratchpad or a calculator (``think``, ``calculate``, an ``expression`` parameter) is
   ``compute``;
3. the verb of the name (or, without one, of the description): a looking verb (``get``, ``find``,
   ``list``, ``search``, ...) is ``read``; a verb whose effect cannot be taken back (``cancel``,
   ``delete``, ``remove``, ``refund``, ``return``, ``send``, ``pay``, ``close``, ``book``,
   ``issue``, ``submit``, ...) is ``irreversible``; any other verb is ``write``;
4. a description saying "cannot be undone" (or "irreversible", "permanent") makes a write
   ``irreversible``.

Which asks each kind can answer is ``generate/kinds.py``.

>>> from whileai.simulations.agent.spec import agent_spec
>>> spec = agent_spec(tools=[{"name": "get_order"}, {"name": "cancel_order"}])
>>> tool_kind(spec, "get_order"), tool_kind(spec, "cancel_order")
('read', 'irreversible')
"""

from __future__ import annotations

import re

from whileai.simulations.agent.spec import AgentSpec, ToolSpec

__all__ = ["KINDS", "WRITES", "confirms_writes", "hidden_kind", "name_kind", "tool_kind"]

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
    r"(?:explicit\s+)?(?:user\s+)?confirmation|(?:ask|obtain|get|wait)\w*\s+(?:for\s+)?"
    r"(?:an?\s+)?explicit\s+(?:yes|approval|consent)|\(yes/no\)|\(yes\))", re.IGNORECASE)

def hidden_kind(tool: ToolSpec) -> str:
    """The need a tool answers when a person never names it: think, calculate, handoff, or ""."""
    words, desc = _words(tool.name), tool.description.lower()
    if "think" in words or desc.startswith("use the tool to think"):
        return "think"
    if words[:1] in (["calculate"], ["compute"], ["calc"]) or any(
            p.name == "expression" for p in tool.params):
        return "calculate"
    if ("transfer" in words or "escalate" in words or "handoff" in words) and (
            "human" in words or "agent" in words or "agents" in words or "human" in desc):
        return "handoff"
    return ""


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

    >>> from whileai.simulations.agent.spec import agent_spec
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
