"""What a tool does to the world, and which asks it can answer: read, write, irreversible, compute,
transfer.

A tool's kind is read by the documented rules of ``world/toolkinds.py`` (an explicit
``x-kind`` or ``tool_kinds`` first, then the tool's need, verb and description).

Intents fit kinds (``fitted``): a status check or a how-to question is answered by reading, so a
cell that pairs one with a writing tool is played with a tool that reads the same record (or,
when there is none, asked as the task itself); a change of plan or an undo is asked only of
tools that change something. Every tool keeps the cells that ask for it directly, so every
tool is still reached. An undo is asked only of a change that can be put back (``change``,
``edit``, ``set``, ``move``, ...), never of a cancellation or a report.

>>> from whileai.simulations.agent.spec import agent_spec
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

from collections.abc import Sequence

from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.actions import action_of
from whileai.simulations.world.roles import lexicon, person_entity
from whileai.simulations.world.toolkinds import (
    KINDS,
    WRITES,
    confirms_writes,
    name_kind,
    tool_kind,
)

__all__ = ["KINDS", "WRITES", "confirms_writes", "fitted", "name_kind", "read_tool_for",
           "tool_kind"]

# intents that need a tool of a kind; the rest fit any tool
_NEEDS = {"check_status": ("read",), "ask_how": ("read",), "change_request": WRITES,
          "undo": ("write",)}


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
