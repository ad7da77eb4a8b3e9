"""From a grid cell to a draft (world values, faults, teacher-only block) and to a situation.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.generate.grid import build_grid
>>> spec = agent_spec(tools=[{"name": "get_order"}])
>>> d = make_draft(spec, build_grid(spec).cells[0], visit=0, seed=0, fault_rate=0.5)
>>> to_situation(d, "where is my order?").scenario_id.startswith("sc-")
True
"""

from __future__ import annotations

from dataclasses import replace

from whileai import _backend
from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.grid import Cell, scenario_id
from whileai.simulations.generate.privileged import gold_answer, hidden_state_for, reference_for
from whileai.simulations.generate.situation import Draft, Situation
from whileai.simulations.generate.world_state import draw_world

__all__ = ["make_draft", "to_situation", "with_candidate"]


def make_draft(
    spec: AgentSpec,
    cell: Cell,
    *,
    visit: int,
    seed: int,
    fault_rate: float,
    phrasing: int = 0,
    candidate: int = 0,
) -> Draft:
    """The draft of one task: the same world for every phrasing and candidate of a visit."""
    unit = _backend.hash64(f"{cell.key}|v{visit}")
    world = draw_world(spec, cell, seed=seed, unit=unit, fault_rate=fault_rate)
    tools = tuple(world.state["target_tools"])
    return Draft(
        spec=spec,
        cell=cell,
        visit=visit,
        phrasing=phrasing,
        candidate=candidate,
        seed=seed,
        slots=world.slots,
        nouns=world.nouns,
        tools=tools,
        hidden_state=hidden_state_for(cell, world.slots, world.nouns, world.faults),
        reference=reference_for(cell, tools, world.faults),
        world_state=world.state,
        faults=world.faults,
        answer=gold_answer(spec, tools, world.slots, world.state["records"]),
    )


def with_candidate(draft: Draft, candidate: int, phrasing: int | None = None) -> Draft:
    """The same task worded another way (another candidate or phrasing)."""
    return replace(draft, candidate=candidate,
                   phrasing=draft.phrasing if phrasing is None else phrasing)


def to_situation(draft: Draft, prompt: str) -> Situation:
    """Attach the written ask to its draft."""
    return Situation(
        scenario_id=scenario_id(draft.cell, draft.visit, draft.phrasing),
        prompt=prompt,
        cell=draft.cell,
        visit=draft.visit,
        phrasing=draft.phrasing,
        seed=draft.seed,
        world_state=draft.world_state,
        faults=draft.faults,
        hidden_state=draft.hidden_state,
        reference=draft.reference,
        principle=draft.cell.clause,
        slots=draft.slots,
        tools=draft.tools,
        answer=draft.answer,
    )
