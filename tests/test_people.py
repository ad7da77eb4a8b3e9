"""Offline conversations a person could have had (issue #36): intents fit actions, a simulated
person who answers back, speech without schema nouns, a world that hangs together.

Runs on the tau-bench retail spec shipped in ``tests/fixtures/tau_retail.json``, the airline and
telecom fixtures, and specs generated here.
"""

from __future__ import annotations

import json
import re
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
    # the status or how-to part is the first; a second part of a two-part ask is a task
    wrong = [r["prompt"] for r in played if asked_intent(r) in ("check_status", "ask_how")
             and any(tool_kind(spec, s["tool"]) in WRITES for s in tool_steps(r)
                     if s["tool"] == r["world_state"]["target_tools"][0])]
    assert wrong == []
    reached = {s["tool"] for r in played for s in tool_steps(r)}
    assert reached == set(spec.tool_names)


# --- 2. a person who answers back -----------------------------------------------------------

def said(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation's messages after the system prompt."""
    return [m for m in row["messages"] if m["role"] in ("user", "assistant") and m.get("content")]


@pytest.mark.parametrize("name", SPECS)
def test_questions_for_a_detail_the_person_holds_are_answered_with_it(name: str) -> None:
    from whileai.simulations.generate.drafts import to_situation  # noqa: F401
    from whileai.simulations.generate.person import asks_detail
    from whileai.simulations.generate.situation import Situation

    spec = load(name)
    asked = answered = 0
    for row in rows(name):
        ws = row["world_state"]
        situation = Situation(scenario_id=row["scenario_id"], prompt=row["prompt"],
                              cell=zps_cell(row), slots=ws["slots"],
                              tools=tuple(ws["target_tools"]))
        messages = said(row)
        for i, message in enumerate(messages[:-1]):
            role = asks_detail(spec, situation, message["content"]) \
                if message["role"] == "assistant" else None
            value = ws["slots"].get(role.param.name) if role is not None else None
            if role is None or value in (None, "", []) or "(yes/no)" in message["content"]:
                continue
            asked += 1
            values = value if isinstance(value, list) else [value]
            answer = messages[i + 1]
            answered += (answer["role"] == "user" and all(
                str(v).lower() in answer["content"].lower() for v in values)) or (
                role.kind == "address")
    assert asked >= 20, asked
    assert answered >= 0.95 * asked, (answered, asked)


def zps_cell(row: dict[str, Any]) -> Any:
    from whileai.simulations.generate.grid import Cell

    dims = row["scenario_dimensions"]
    return Cell(values=tuple((k, str(v)) for k, v in dims.items() if isinstance(v, str)))


@pytest.mark.parametrize("name", ["tau_retail", "airline_spec"])
def test_every_write_waits_for_a_yes_when_the_policy_asks_for_one(name: str) -> None:
    spec = load(name)
    writes = 0
    for row in rows(name):
        for index, step in enumerate(row["steps"]):
            if "tool" not in step or not confirms_writes(spec, step["tool"]):
                continue
            writes += 1
            before = row["steps"][:index]
            proposals = [i for i, s in enumerate(before) if s.get("role") == "assistant"
                         and "(yes/no)" in s["content"]]
            assert proposals, row["messages"]
            answer = before[proposals[-1] + 1]
            assert answer["role"] == "user"
            assert not answer["content"].lower().startswith(("no", "wait", "hold"))
    assert writes >= 20


@pytest.mark.parametrize("name", SPECS)
def test_conversations_run_several_turns_and_say_why_they_stopped(name: str) -> None:
    from whileai.simulations.generate.person import STOPS

    played = rows(name)
    reasons = {r["stop_reason"] for r in played}
    assert reasons <= set(STOPS)
    assert {"goal_met", "failed"} <= reasons
    if name != "telecom_spec":  # its policy asks for no yes, so nobody is asked to confirm
        assert "declined" in reasons
    turns = [sum(1 for m in r["messages"] if m["role"] == "user") for r in played]
    assert max(turns) >= 3
    assert sum(t > 1 for t in turns) >= len(played) // 5
    # a planted mistake can land in a reply that follows several turns
    assert any(r["seeded"] and t > 1 for r, t in zip(played, turns, strict=True))


def test_avg_turns_shapes_how_long_the_person_talks() -> None:
    data = spec_data("tau_retail")
    short = zps.simulate(zps.seeded_agent(data["tools"], system_prompt=data["system_prompt"]),
                         tools=data["tools"], system_prompt=data["system_prompt"],
                         simulator=False, budget=200, progress=False,
                         advanced={"avg_turns": 2})
    turns = [sum(1 for m in r["messages"] if m["role"] == "user") for r in short.trajectories]
    assert max(turns) == 1
    assert "max_turns" in {r["stop_reason"] for r in short.trajectories}
    capped = zps.simulate(zps.seeded_agent(data["tools"], system_prompt=data["system_prompt"],
                                           max_turns=1),
                          tools=data["tools"], system_prompt=data["system_prompt"],
                          simulator=False, budget=50, progress=False)
    assert all(not any(s.get("role") == "user" for s in r["steps"])
               for r in capped.trajectories)


def test_a_mistaken_person_corrects_a_wrong_id() -> None:
    from whileai.simulations.generate.grid import Cell
    from whileai.simulations.generate.person import reply
    from whileai.simulations.generate.situation import Situation

    spec = load("tau_retail")
    situation = Situation(scenario_id="sc-x", prompt="Cancel order #W1234568 please.",
                          cell=Cell(values=(("stance", "mistaken"),)),
                          slots={"order_id": "#W1234567", "reason": "no longer needed"},
                          tools=("cancel_pending_order",))
    text, why = reply(spec, situation, [
        {"role": "user", "content": situation.prompt},
        {"role": "assistant", "content": "I couldn't find order #W1234568. Could you "
                                         "double-check the order number?"}], turns=6)
    assert text is not None
    assert "#W1234567" in text
    assert why == ""


# --- 5. gold answers the world knows (#39 item 7), examples written without quotes (item 15) ----

MATH_TOOLS = [{"type": "function", "function": {
    "name": "calculate", "description": "Calculate the result of a mathematical expression.",
    "parameters": {"type": "object", "properties": {"expression": {
        "type": "string", "description": "The expression, such as '2 + 2'."}},
        "required": ["expression"]}}}]
MATH_POLICY = "You help people with sums. Use the calculator and give the number."


def test_the_verifier_example_gives_real_rewards_and_the_grpo_step_keeps_rows() -> None:
    from whileai.simulations.verify import MathEqual
    from whileai.simulations.world.arith import evaluate

    data = zps.simulate(zps.seeded_agent(MATH_TOOLS, system_prompt=MATH_POLICY),
                        tools=MATH_TOOLS, system_prompt=MATH_POLICY, mode="rl", situations=30,
                        repeats=8, simulator=False, progress=False)
    sums = [r for r in data.trajectories if r["world_state"]["target_tools"] == ["calculate"]]
    assert sums
    for row in sums:  # the gold is the calculator's true result, not a sentence about the cell
        assert row["privileged"]["answer"] == evaluate(row["world_state"]["slots"]["expression"])
    scored = data.grade(judge=MathEqual())
    rewards = [r["reward"] for r in scored.trajectories if r["judge_status"] == "ok"]
    assert len(rewards) == len(sums)
    assert {0.0, 1.0} <= set(rewards)
    _, report = zps.optimize(scored, mode="rl")
    assert report["rows_out"] > 0


def test_a_lookup_carries_the_records_true_status_as_its_answer() -> None:
    played = [r for r in rows("tau_retail") if r["world_state"]["target_tools"] ==
              ["get_order_details"] and r["privileged"].get("answer")]
    assert played
    for row in played:
        order = row["world_state"]["slots"]["order_id"]
        assert row["privileged"]["answer"] == row["world_state"]["records"][order]["status"]


def test_an_example_id_without_quotes_sets_the_id_format() -> None:
    tools = [{"name": "get_loan", "description": "Look up a loan.", "parameters": {
        "type": "object", "properties": {"loan_id": {"type": "string",
                                                     "description": "The loan id, like L-12345"}},
        "required": ["loan_id"]}}]
    data = zps.simulate(zps.seeded_agent(tools), tools=tools, system_prompt="Help.",
                        simulator=False, budget=20, progress=False)
    ids = [r["world_state"]["slots"]["loan_id"] for r in data.trajectories
           if "loan_id" in r["world_state"]["slots"]]
    assert ids
    assert all(re.fullmatch(r"L-\d{5}", i) for i in ids), ids
