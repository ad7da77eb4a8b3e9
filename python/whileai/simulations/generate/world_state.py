"""A task's world: the records the mock world holds, the values the ask mentions, the fault plan.

All of it is a pure function of the agent spec, the grid cell and a seed, so re-running a task
rebuilds the same world.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.generate.grid import build_grid
>>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}])
>>> w = draw_world(spec, build_grid(spec).cells[0], seed=0, unit=1, fault_rate=0.5)
>>> sorted(w.state) == ["records", "slots", "state", "target_tools"]
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from whileai.simulations.agent.spec import AgentSpec, ToolSpec
from whileai.simulations.generate.grid import Cell
from whileai.simulations.generate.kinds import WRITES, fitted, tool_kind
from whileai.simulations.world.fakes import AIRPORTS, PLACES, policy_today, role_value
from whileai.simulations.world.mock import FAULT_KINDS
from whileai.simulations.world.roles import Role, lexicon
from whileai.simulations.world.values import draws, is_id_param

__all__ = ["FAULT_KINDS", "TaskWorld", "draw_world", "target_tools"]

_RECORD_STATUS = ("active", "pending", "processing", "shipped", "open", "confirmed")


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskWorld:
    """What the world holds for one task (``state``), the values the ask uses, and the faults."""

    state: dict[str, Any]
    slots: dict[str, Any]
    faults: tuple[dict[str, Any], ...]
    nouns: dict[str, str]


def target_tools(spec: AgentSpec, cell: Cell) -> tuple[ToolSpec, ...]:
    """The tools a cell is about: its tool, two tools for ``multi_tool``, none for ``unrelated``."""
    by_name = {t.name: t for t in spec.tools}
    tool = cell.value("tool")
    if tool in by_name:
        return (by_name[tool],)
    if tool == "multi_tool" and len(spec.tools) > 1:
        return _pair(spec, len(cell.key) % len(spec.tools))
    return ()


def _pair(spec: AgentSpec, first: int) -> tuple[ToolSpec, ToolSpec]:
    """Two tools one person would ask about together: the next tool sharing an entity, and
    never two changes to one record (cancel it, then exchange it); a look comes before a
    change."""
    lex = lexicon(spec)
    tools = spec.tools

    def entities(t: ToolSpec) -> set[str]:
        return {r.entity for r in lex.tool_roles(t.name) if r.kind in ("id", "ids")}

    def writes(t: ToolSpec) -> bool:
        return tool_kind(spec, t.name) in WRITES

    head = tools[first]
    partner: ToolSpec | None = None
    for step in range(1, len(tools)):
        other = tools[(first + step) % len(tools)]
        if entities(head) & entities(other) and not (writes(head) and writes(other)):
            partner = other
            break
    if partner is None:
        partner = next((t for t in tools if t is not head and not writes(t)),
                       tools[(first + 1) % len(tools)])
    if writes(head) and not writes(partner):
        return partner, head
    return head, partner


def draw_world(
    spec: AgentSpec, cell: Cell, *, seed: int, unit: int, fault_rate: float
) -> TaskWorld:
    """Draw the records, the ask's values and the fault plan of one task."""
    draw = draws(seed, unit)
    about = target_tools(spec, cell)
    intent, played = fitted(spec, cell.value("intent"), [t.name for t in about])
    by_name = {t.name: t for t in spec.tools}
    tools = tuple(by_name[name] for name in played)
    slots: dict[str, Any] = {}
    nouns: dict[str, str] = {}
    records: dict[str, dict[str, Any]] = {}
    state = cell.value("state") or "exists"
    lex = lexicon(spec)
    places: set[Any] = set()
    count = 1 + draw.below(2)  # items in each list of this task (old and new items pair up)
    place = draw.below(len(PLACES))  # every address part of this task names one city
    today = policy_today(spec.policy)
    status = _status_for(tools)
    for tool in dict.fromkeys((*about, *tools)):  # the words' tools first, then the played
        for role in lex.tool_roles(tool.name):
            param = role.param
            if param.name not in slots:
                value = role_value(role, draw, count=count, place=place, today=today)
                if role.kind == "place":  # origin and destination differ
                    while value in places:
                        value = AIRPORTS[(AIRPORTS.index(value) + 1) % len(AIRPORTS)] \
                            if value in AIRPORTS else value + "X"
                    places.add(value)
                slots[param.name] = value
            if (role.kind == "id" or is_id_param(param.name)) and isinstance(
                    slots[param.name], str | int):
                key = str(slots[param.name])
                nouns[param.name] = role.entity or role.kind
                record: dict[str, Any] = {
                    param.name: slots[param.name],
                    "kind": nouns[param.name],
                    "status": status or _RECORD_STATUS[draw.below(len(_RECORD_STATUS))],
                    "updated": (today - timedelta(days=1 + draw.below(60))).isoformat(),
                }
                if state == "already_handled":
                    record["status"] = "already_processed"
                elif state == "partially_done":
                    record["status"] = "partially_completed"
                if state != "missing" and cell.value("condition") != "not_found":
                    records[key] = record
                if state == "duplicate":
                    twin = f"{key}-2"
                    records[twin] = {**record, param.name: twin, "duplicate_of": key}
    _in_order(slots, [r for t in dict.fromkeys((*about, *tools)) for r in lex.tool_roles(t.name)])
    faults: list[dict[str, Any]] = []
    condition = cell.value("condition")
    # A fault needs a tool call to fire on: asks no tool covers get none.
    if tools and condition in FAULT_KINDS and draw.unit() < fault_rate:
        faults.append({"tool": tools[0].name, "kind": condition, "call": 0})
    world: dict[str, Any] = {"records": records, "state": state,
                             "target_tools": [t.name for t in tools], "slots": dict(slots)}
    if intent != cell.value("intent") or about != tools:
        world["asked_as"] = {"intent": intent, "tools": [t.name for t in about]}
    return TaskWorld(
        state=world,
        slots=slots,
        faults=tuple(faults),
        nouns=nouns,
    )


def _status_for(tools: Sequence[ToolSpec]) -> str:
    """The status a tool's name says its record is in ("cancel_pending_order": pending)."""
    for tool in tools:
        for word in ("pending", "delivered", "active", "open", "suspended"):
            if word in tool.name.lower().split("_"):
                return word
    return ""


def _in_order(slots: dict[str, Any], roles: Sequence[Role]) -> None:
    """Dates of one task in the order the schema gives them (a return after its departure),
    record lists included (a trip's flights in date order); birth dates stay as drawn."""
    dated = list(dict.fromkeys(r.param.name for r in roles if r.kind == "date"
                               and not any(w in r.param.name.lower() for w in ("birth", "dob"))
                               and isinstance(slots.get(r.param.name), str)))
    ordered = sorted(slots[n] for n in dated)
    for n in range(1, len(ordered)):  # one trip or booking: days apart, not months
        first, later = date.fromisoformat(ordered[0]), date.fromisoformat(ordered[n])
        if (later - first).days > 21:
            ordered[n] = (first + timedelta(days=2 + later.toordinal() % 12)).isoformat()
    slots.update(zip(dated, sorted(ordered), strict=True))
    for role in roles:
        value = slots.get(role.param.name)
        fields = [f.param.name for f in role.fields if f.kind == "date"
                  and not any(w in f.param.name.lower() for w in ("birth", "dob"))]
        if role.kind == "records" and isinstance(value, list) and fields:
            key = fields[0]
            value.sort(key=lambda rec: str(rec.get(key, "")))
