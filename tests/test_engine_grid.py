"""The coverage grid: pairwise covering, stable scenario ids, clause blocks, overrides."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from _tools import order_tools
from whileai.errors import ConfigError
from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.grid import (
    AXES,
    build_grid,
    pairwise_cover,
    scenario_id,
)

TOOLS = order_tools("get_order", "cancel_order", "refund_order")
POLICY = ("- Verify the email before any change.\n- Never refund more than the order total.\n"
          "- Confirm every cancellation with the customer.")


def test_pairwise_cover_covers_every_pair() -> None:
    axes = [("a", ("1", "2", "3")), ("b", ("x", "y")), ("c", ("p", "q", "r", "s")),
            ("d", ("u", "v"))]
    rows = pairwise_cover(axes)
    for (i, (_, vi)), (j, (_, vj)) in itertools.combinations(enumerate(axes), 2):
        seen = {(r[i], r[j]) for r in rows}
        assert seen == set(itertools.product(vi, vj))
    assert len(rows) < 3 * 2 * 4 * 2  # far fewer than the full product
    assert pairwise_cover(axes) == rows  # deterministic


def test_grid_covers_all_axis_pairs_outside_clauses() -> None:
    grid = build_grid(agent_spec(tools=TOOLS, system_prompt=POLICY))
    axes = dict(grid.axes)
    names = [a for a in AXES if a != "clause"]
    for a, b in itertools.combinations(names, 2):
        seen = {(c.value(a), c.value(b)) for c in grid.cells}
        assert seen >= set(itertools.product(axes[a], axes[b])), (a, b)


def test_ordinary_asks_come_first() -> None:
    grid = build_grid(agent_spec(tools=TOOLS, system_prompt=POLICY))
    levels = [c.edge_level for c in grid.cells]
    assert levels == sorted(levels)
    first = grid.cells[0]
    assert (first.value("condition"), first.value("stance"), first.value("typing")) == (
        "success", "ordinary", "standard")


def test_scenario_id_format_and_stability_across_processes() -> None:
    grid = build_grid(agent_spec(tools=TOOLS, system_prompt=POLICY))
    ids = [scenario_id(c, 0) for c in grid.cells]
    assert all(i.startswith("sc-") and len(i) == 13 for i in ids)
    assert len(set(ids)) == len(ids)
    assert scenario_id(grid.cells[0], 1) != ids[0]
    assert scenario_id(grid.cells[0], 0, phrasing=1) != ids[0]
    code = (
        "from whileai.simulations.generate.grid import build_grid, scenario_id\n"
        "from whileai.simulations.agent.spec import agent_spec\n"
        f"g = build_grid(agent_spec(tools={TOOLS!r}, system_prompt={POLICY!r}))\n"
        "print(','.join(scenario_id(c, 0) for c in g.cells))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "123", "WHILEAI_PURE": "1"})
    assert out.stdout.strip().split(",") == ids


def test_editing_one_clause_changes_only_that_clause_tasks() -> None:
    before = build_grid(agent_spec(tools=TOOLS, system_prompt=POLICY))
    edited = POLICY.replace("Never refund more than the order total.",
                            "Never refund more than what was paid.")
    after = build_grid(agent_spec(tools=TOOLS, system_prompt=edited))
    old = {scenario_id(c, 0): c for c in before.cells}
    new = {scenario_id(c, 0): c for c in after.cells}
    gone = [c for k, c in old.items() if k not in new]
    added = [c for k, c in new.items() if k not in old]
    assert gone
    assert all("order total" in c.clause for c in gone)
    assert all("what was paid" in c.clause for c in added)
    assert len(old) - len(gone) == len(new) - len(added)


def test_dimensions_override_replaces_axis_values() -> None:
    spec = agent_spec(tools=TOOLS, system_prompt=POLICY)
    grid = build_grid(spec, {"condition": ["timeout", "success"], "tool": ["cancel_order"]})
    assert dict(grid.axes)["condition"] == ("timeout", "success")
    assert {c.value("tool") for c in grid.cells} == {"cancel_order"}
    assert {c.value("condition") for c in grid.cells} <= {"timeout", "success"}
    with pytest.raises(ConfigError, match="unknown axis 'colour'"):
        build_grid(spec, {"colour": ["red"]})
    with pytest.raises(ConfigError, match="is empty"):
        build_grid(spec, {"tone": []})


def test_policy_only_agent_still_gets_a_grid() -> None:
    grid = build_grid(agent_spec(system_prompt="Answer questions about our opening hours."))
    assert len(grid) > 0
    assert {c.value("tool") for c in grid.cells} == {"unrelated"}
