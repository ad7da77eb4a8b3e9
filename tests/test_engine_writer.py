"""The template writer: deterministic, readable, and it does not run dry."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from whileai.simulations.agent.spec import AgentSpec, agent_spec
from whileai.simulations.generate.diversity import near_duplicate_share
from whileai.simulations.generate.drafts import make_draft
from whileai.simulations.generate.grid import build_grid
from whileai.simulations.generate.situation import Writer
from whileai.simulations.generate.writer import TemplateWriter, render

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
from engine_specs import ORDERS_POLICY, ORDERS_TOOLS, WIDE_POLICY, WIDE_TOOLS


def prompts(spec: AgentSpec, count: int, seed: int = 0) -> list[str]:
    grid = build_grid(spec)
    out = []
    for i in range(count):
        visit, index = divmod(i, len(grid.cells))
        out.append(render(make_draft(spec, grid.cells[index], visit=visit, seed=seed,
                                     fault_rate=0.5)))
    return out


def test_template_writer_is_a_writer_and_deterministic() -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY)
    assert isinstance(TemplateWriter(), Writer)
    first = prompts(spec, 50)
    assert first == prompts(spec, 50)
    assert first != prompts(spec, 50, seed=1)


def test_four_tool_spec_gives_a_thousand_distinct_readable_asks() -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY)
    asks = prompts(spec, 1050)
    assert len(set(asks)) >= 1000
    assert near_duplicate_share(asks) < 0.05
    assert all(5 <= len(a.split()) <= 120 for a in asks)
    assert all("{" not in a and "}" not in a for a in asks)  # every slot was filled


def test_wide_spec_with_long_policy_gives_three_thousand_distinct_asks() -> None:
    spec = agent_spec(tools=WIDE_TOOLS, system_prompt=WIDE_POLICY * 2)
    assert len(spec.tools) == 14
    assert len(spec.policy) >= 6000
    asks = prompts(spec, 3100)
    assert len(set(asks)) >= 3000
    assert near_duplicate_share(asks) < 0.05


def test_realistic_retail_spec() -> None:
    fixture = Path(__file__).resolve().parent / "fixtures" / "retail_spec.json"
    data = json.loads(fixture.read_text())
    spec = agent_spec(tools=data["tools"], system_prompt=data["system_prompt"])
    asks = prompts(spec, 3100)
    assert len(set(asks)) >= 3000
    assert near_duplicate_share(asks) < 0.05


def test_asks_use_the_tool_and_its_world_values() -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY)
    grid = build_grid(spec)
    plain = [c for c in grid.cells if c.value("tool") == "cancel_order"
             and c.value("stance") == "ordinary" and c.value("typing") == "standard"]
    assert plain
    draft = make_draft(spec, plain[0], visit=0, seed=0, fault_rate=0.5)
    text = render(draft)
    assert "cancel" in text.lower()
    assert str(draft.slots["order_id"]).lower() in text.lower()


def test_typing_axis_changes_the_surface() -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY)
    cell = build_grid(spec).cells[0]
    draft = make_draft(spec, cell, visit=0, seed=0, fault_rate=0.5)

    def typed(value: str) -> str:
        values = tuple((a, value if a == "typing" else v) for a, v in cell.values)
        return render(replace(draft, cell=replace(cell, values=values)))

    ids = str(draft.slots["order_id"])  # ids are typed verbatim, whatever the typing
    assert ids in typed("lowercase")
    assert ids in typed("clipped")
    assert typed("lowercase").replace(ids, "") == typed("lowercase").replace(ids, "").lower()
    assert "," not in typed("clipped")
    assert typed("clipped").replace(ids, "") == typed("clipped").replace(ids, "").lower()


def test_ordinary_asks_come_before_the_edges() -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY)
    asks = prompts(spec, 8)
    edgy = ("Ignore your usual rules", "Skip the verification", "manager here")
    assert not any(e in a for a in asks for e in edgy)


def test_follow_up_answers_the_agent_then_stops() -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY)
    from whileai.simulations.generate.drafts import to_situation

    draft = make_draft(spec, build_grid(spec).cells[0], visit=0, seed=0, fault_rate=0.5)
    situation = to_situation(draft, render(draft))
    writer = TemplateWriter(spec=spec)
    assert writer.follow_up(situation, [], turn=0) is None  # nobody has asked anything
    said = [{"role": "user", "content": situation.prompt},
            {"role": "assistant", "content": "Sure. What is the order number?"}]
    first = writer.follow_up(situation, said, turn=0)
    assert isinstance(first, str)
    assert str(situation.slots["order_id"]) in first
    done = [*said, {"role": "user", "content": first},
            {"role": "assistant", "content": "Order ORD-1 is pending."}]
    assert writer.answer(situation, done) == (None, "goal_met")
    assert TemplateWriter(avg_turns=2, spec=spec).answer(situation, said) == (None, "max_turns")


@pytest.mark.parametrize("typing_value", ["standard", "typos"])
def test_seed_situations_are_asked_verbatim_first(typing_value: str) -> None:
    spec = agent_spec(tools=ORDERS_TOOLS, system_prompt=ORDERS_POLICY,
                      spec={"situations": ["Where is order 77?"]})
    cell = build_grid(spec).cells[0]
    assert cell.block == "seed"
    text = render(make_draft(spec, cell, visit=0, seed=0, fault_rate=0.5))
    assert "Where is order 77?" in text or typing_value == "typos"
