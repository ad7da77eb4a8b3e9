"""The mock world: schema-shaped records, not-found ids, scheduled faults, execute=."""

from __future__ import annotations

from typing import Any

import whileai.simulations as zps
from _tools import GET_ORDER
from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.grid import build_grid
from whileai.simulations.generate.world_state import draw_world
from whileai.simulations.world.rollout import RolloutContext, using_rollout

TOOLS = [
    GET_ORDER,
    {"name": "cancel_order", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string"}, "reason": {"type": "string", "enum": ["late", "dup"]}}}},
]


def context(faults: list[dict[str, Any]], records: dict[str, Any] | None = None,
            index: int = 0) -> RolloutContext:
    return RolloutContext(scenario_id="sc-0000000000", prompt="p", rollout_index=index, seed=0,
                          world_state={"records": records or {"77": {"order_id": "77",
                                                                     "status": "open"}}},
                          faults=faults)


def test_outside_a_run_the_world_answers_ok_and_rejects_unknown_tools() -> None:
    w = zps.world(TOOLS)
    assert w.call("get_order", {"order_id": "4412"}) == {
        "status": "ok", "data": {"order_id": "4412"}}
    bad = w.call("delete_everything", {})
    assert bad["status"] == "error"
    assert "get_order" in bad["message"]


def test_inside_a_rollout_records_answer_and_unknown_ids_are_not_found() -> None:
    w = zps.world(TOOLS)
    with using_rollout(context([])) as ctx:
        assert zps.current_rollout() is ctx
        assert w.call("get_order", {"order_id": "77"})["data"]["status"] == "open"
        assert w.call("get_order", {"order_id": "4412"})["status"] == "not_found"
        changed = w.call("cancel_order", {"order_id": "77", "reason": "late"})
        assert changed["status"] == "ok"
        assert changed["data"]["last_action"] == "cancel_order"
    assert zps.current_rollout() is None


def test_scheduled_faults_fire_on_their_call_then_clear() -> None:
    w = zps.world(TOOLS)
    for kind, check in [
        ("timeout", lambda r: r["error"] == "timeout"),
        ("permission_denied", lambda r: r["error"] == "permission_denied"),
        ("malformed", lambda r: r["malformed"] is True),
        ("stale", lambda r: r["stale"] is True and r["status"] == "ok"),
        ("not_found", lambda r: r["status"] == "not_found"),
    ]:
        with using_rollout(context([{"tool": "get_order", "kind": kind, "call": 0}])) as ctx:
            first = w.call("get_order", {"order_id": "77"})
            second = w.call("get_order", {"order_id": "77"})
            assert check(first), kind
            assert second["status"] == "ok"
            assert ctx.fired == [{"tool": "get_order", "kind": kind, "call": 0, "index": 0}]


def test_already_handled_records_refuse_a_second_change() -> None:
    w = zps.world(TOOLS)
    records = {"9": {"order_id": "9", "status": "already_processed"}}
    with using_rollout(context([], records)):
        assert w.call("cancel_order", {"order_id": "9"})["status"] == "conflict"


def test_task_worlds_follow_the_cell_and_fault_rate() -> None:
    spec = agent_spec(tools=TOOLS, system_prompt="Help.")
    grid = build_grid(spec)
    timeouts = [c for c in grid.cells if c.value("condition") == "timeout"
                and c.value("tool") == "get_order"]
    worlds = [draw_world(spec, timeouts[0], seed=0, unit=u, fault_rate=1.0) for u in range(5)]
    assert all(w.faults == ({"tool": "get_order", "kind": "timeout", "call": 0},)
               for w in worlds)
    assert all(not draw_world(spec, timeouts[0], seed=0, unit=u, fault_rate=0.0).faults
               for u in range(5))
    missing = next(c for c in grid.cells if c.value("state") == "missing")
    gone = draw_world(spec, missing, seed=0, unit=1, fault_rate=0.0)
    assert gone.state["records"] == {}
    dup = next(c for c in grid.cells if c.value("state") == "duplicate"
           and c.value("tool") in ("get_order", "cancel_order")
           and c.value("condition") != "not_found")
    assert len(draw_world(spec, dup, seed=0, unit=1, fault_rate=0.0).state["records"]) == 2
    again = draw_world(spec, dup, seed=0, unit=1, fault_rate=0.0)
    assert again == draw_world(spec, dup, seed=0, unit=1, fault_rate=0.0)


def test_rows_record_world_state_faults_and_privileged() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                        simulator=False, budget=30, fault_rate=1.0, progress=False)
    rows = data.trajectories
    assert all(set(r["privileged"]) >= {"hidden_state", "reference"} for r in rows)
    faulted = [r for r in rows if r["faults"]]
    assert faulted
    for row in faulted:
        if not row["steps"]:  # the ask never gave the id: the seeded agent asked for it
            assert "Could you tell me" in row["final_text"]
            continue
        fired = [s for s in row["steps"] if "fault" in s]
        assert fired
        assert fired[0]["fault"] == row["faults"][0]["kind"]
        assert row["faults"][0]["tool"] in row["privileged"]["hidden_state"]
    assert all(isinstance(r["world_state"]["records"], dict) for r in rows)
    off = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                       simulator=False, budget=30, fault_rate=0, progress=False)
    assert not any(r["faults"] for r in off.trajectories)
    assert not any("fault" in s for r in off.trajectories for s in r["steps"])


def test_execute_replaces_the_mock_world() -> None:
    calls: list[tuple[str, dict[str, Any], str | None]] = []

    def execute(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        ctx = zps.current_rollout()
        calls.append((tool, arguments, ctx.prompt if ctx else None))
        return {"status": "ok", "mine": True}

    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                        simulator=False, budget=12, fault_rate=1.0, execute=execute,
                        progress=False)
    tool_steps = [s for r in data.trajectories for s in r["steps"]]
    assert tool_steps
    assert all(s["result"] == {"status": "ok", "mine": True} for s in tool_steps)
    assert all("fault" not in s for s in tool_steps)  # the SDK's faults do not apply
    assert {c[2] for c in calls} <= {r["prompt"] for r in data.trajectories}


def test_draws_read_the_splitmix_stream_of_their_unit_past_the_first_chunk() -> None:
    from whileai import _backend
    from whileai.simulations.world.values import draws

    stream = draws(3, 2**70 + 4)  # units and seeds are taken modulo 2**64
    got = [stream.unit() if i % 3 else stream.below(1000) for i in range(40)]
    expected = _backend.uniform_floats(3, 4, 40)
    assert got == [u if i % 3 else int(u * 1000) for i, u in enumerate(expected)]
