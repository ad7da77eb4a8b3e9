"""Offline conversations a person could have had (issue #36): intents fit actions, a simulated
person who answers back, speech without schema nouns, a world that hangs together.

Runs on the tau-bench retail spec shipped in ``tests/fixtures/tau_retail.json``, the airline and
telecom fixtures, and specs generated here.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.errors import SpecError
from whileai.simulations.generate.kinds import WRITES, confirms_writes, fitted, tool_kind
from whileai.simulations.spec import AgentSpec, agent_spec

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPECS = ("tau_retail", "airline_spec", "telecom_spec")


def spec_data(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def load(name: str) -> AgentSpec:
    data = spec_data(name)
    return agent_spec(tools=data["tools"], system_prompt=data["system_prompt"])


@cache
def rows(name: str, budget: int = 600) -> tuple[dict[str, Any], ...]:
    data = spec_data(name)
    run = zps.simulate(zps.seeded_agent(data["tools"], system_prompt=data["system_prompt"]),
                       tools=data["tools"], system_prompt=data["system_prompt"],
                       simulator=False, budget=budget, progress=False)
    return tuple(run.trajectories)


def tool_steps(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in row["steps"] if "tool" in s]


def asked_intent(row: dict[str, Any]) -> str:
    asked = row["world_state"].get("asked_as") or {}
    return str(asked.get("intent") or row["scenario_dimensions"]["intent"])


# --- 1. intent fits action --------------------------------------------------------------------

def test_tool_kinds_are_read_from_names_and_descriptions() -> None:
    retail = load("tau_retail")
    kinds = {t.name: tool_kind(retail, t.name) for t in retail.tools}
    assert kinds["get_order_details"] == kinds["list_all_product_types"] == "read"
    assert kinds["find_user_id_by_email"] == "read"
    assert kinds["modify_pending_order_address"] == "write"
    assert kinds["cancel_pending_order"] == kinds["return_delivered_order_items"] == "irreversible"
    assert kinds["calculate"] == kinds["think"] == "compute"
    assert kinds["transfer_to_human_agents"] == "transfer"
    telecom = load("telecom_spec")
    assert tool_kind(telecom, "suspend_line") == "write"  # resume_line takes it back
    assert tool_kind(telecom, "send_payment_request") == "irreversible"


def test_a_tool_kind_can_be_overridden_on_the_tool_or_in_the_spec() -> None:
    tools = [{"name": "sync_profile", "x-kind": "read"}, {"name": "archive_note"}]
    spec = agent_spec(tools=tools)
    assert tool_kind(spec, "sync_profile") == "read"
    assert tool_kind(spec, "archive_note") == "write"
    spec = agent_spec(spec={"tools": tools, "tool_kinds": {"archive_note": "irreversible"}})
    assert tool_kind(spec, "archive_note") == "irreversible"
    with pytest.raises(SpecError, match="not one of read, write"):
        agent_spec(tools=[{"name": "x", "x-kind": "dangerous"}])
    with pytest.raises(SpecError, match="unknown tools"):
        agent_spec(spec={"tools": tools, "tool_kinds": {"nope": "read"}})


def test_status_and_how_to_asks_are_played_with_a_reading_tool() -> None:
    retail = load("tau_retail")
    assert fitted(retail, "check_status", ("cancel_pending_order",)) == (
        "check_status", ("get_order_details",))
    assert fitted(retail, "ask_how", ("modify_user_address",)) == (
        "ask_how", ("get_user_details",))
    assert fitted(retail, "change_request", ("get_order_details",))[0] == "do_task"
    assert fitted(retail, "undo", ("cancel_pending_order",))[0] == "do_task"  # cannot be undone
    assert confirms_writes(retail, "cancel_pending_order")
    assert not confirms_writes(retail, "get_order_details")


@pytest.mark.parametrize("name", SPECS)
def test_no_status_or_how_to_ask_is_played_with_a_write_and_every_tool_is_reached(
        name: str) -> None:
    spec = load(name)
    played = rows(name)
    wrong = [r["prompt"] for r in played if asked_intent(r) in ("check_status", "ask_how")
             and any(tool_kind(spec, s["tool"]) in WRITES for s in tool_steps(r))]
    assert wrong == []
    reached = {s["tool"] for r in played for s in tool_steps(r)}
    assert reached == set(spec.tool_names)
