"""The spec's offline quick start, run as written (simulator=False: no model, no key)."""

from __future__ import annotations

from typing import Any

import whileai.simulations as zps

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order by id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]


def my_agent(message: str) -> dict[str, Any]:
    return {
        "steps": [
            {
                "tool": "get_order",
                "arguments": {"order_id": "4412"},
                "result": {"status": "shipped"},
            }
        ],
        "final_text": "Order 4412 shipped yesterday.",
    }


def test_start_here_callable_agent() -> None:
    data = zps.simulate(
        my_agent,
        tools=TOOLS,
        system_prompt="Help customers with orders.",
        simulator=False,
        budget=20,
    )
    assert len(data) == 20
    assert data.stopped_because == "budget"
    assert all(r["final_text"] == "Order 4412 shipped yesterday." for r in data.trajectories)
    assert len({r["prompt"] for r in data.trajectories}) == 20
    assert all(r["scenario_id"].startswith("sc-") and len(r["scenario_id"]) == 13 for r in data)
    assert all("privileged" in r for r in data.trajectories)
    assert not any("privileged" in r for r in data.rows)


def test_start_here_grade_with_a_judge() -> None:
    data = zps.simulate(
        my_agent, tools=TOOLS, system_prompt="Help customers with orders.", simulator=False,
        budget=20,
    )
    scored = data.grade(judge=lambda row: {"reward": int("4412" in row["final_text"])})
    assert len(scored.rows) == 20
    assert all(r["reward"] == 1 for r in scored.rows)
    assert "reward" not in data.trajectories[0]  # the run is untouched
    assert scored.pass_at.pass_at_1 == 1.0


def test_world_variant_fires_faults_through_the_world() -> None:
    WORLD = zps.world(TOOLS)

    def agent(message: str) -> dict[str, Any]:
        result = WORLD.call("get_order", {"order_id": "4412"})
        return {
            "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"}, "result": result}],
            "final_text": "Order 4412 shipped yesterday."
            if result.get("status") == "ok"
            else "The lookup did not go through, so I cannot confirm 4412 yet.",
        }

    data = zps.simulate(agent, tools=TOOLS, system_prompt="Help customers with orders.",
                        simulator=False, budget=40, fault_rate=1.0)
    faulted = [r for r in data.trajectories if r["faults"]]
    assert faulted, "fault_rate=1.0 must schedule faults on the fault cells"
    for row in faulted:
        step = row["steps"][0]
        assert step.get("fault") == row["faults"][0]["kind"]
        assert row["final_text"].startswith("The lookup did not go through") or (
            step["fault"] in ("stale", "malformed")
        )
    # 4412 is not a record of these tasks: without a fault the world says not_found
    clean = [r for r in data.trajectories if not r["faults"]]
    assert clean
    assert all(r["steps"][0]["result"]["status"] == "not_found" for r in clean)


def test_seeded_agent_labels_its_mistakes() -> None:
    data = zps.simulate(
        zps.seeded_agent(TOOLS),
        tools=TOOLS,
        system_prompt="Help customers with orders.",
        simulator=False,
        budget=60,
    )
    rows = data.trajectories
    assert len(rows) == 60
    seeded = [r for r in rows if r["seeded"]]
    assert 0 < len(seeded) < 60
    assert all(len(r["seeded"]) == 1 for r in seeded)
    leaks = [r for r in rows if r["seeded"] == ["privileged_leak"]]
    assert all(r["privileged"]["reference"] in r["final_text"] for r in leaks)
    clean = [r for r in rows if not r["seeded"]]
    assert not any(r["privileged"]["reference"] in r["final_text"] for r in clean)


def test_seeded_agent_style_and_leak_reports() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS,
                        system_prompt="Help customers with orders.", simulator=False, budget=60)
    rows = data.trajectories
    assert zps.style_report(rows)["markers"]["no_hedging"]["hits"] > 0
    assert "privileged" in zps.format_leak_report(zps.leak_report(rows))
