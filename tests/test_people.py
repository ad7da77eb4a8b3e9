"""Offline conversations a person could have had (issue #36): intents fit actions, a simulated
person who answers back, speech without schema nouns, a world that hangs together.

Runs on the retail spec modelled on tau-bench (``tests/fixtures/retail_spec.json``), the
airline and telecom fixtures, and specs generated here.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest

import whileai.simulations as zps
from _specs import load, spec_data
from whileai.errors import SpecError
from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.kinds import WRITES, confirms_writes, fitted, tool_kind

SPECS = ("retail_spec", "airline_spec", "telecom_spec")


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
    retail = load("retail_spec")
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
    retail = load("retail_spec")
    assert fitted(retail, "check_status", ("cancel_pending_order",)) == (
        "check_status", ("get_order_details",))
    assert fitted(retail, "ask_how", ("return_delivered_order_items",)) == (
        "ask_how", ("get_order_details",))
    # reading the person's own account says nothing about a change to it: asked as the task
    assert fitted(retail, "ask_how", ("modify_user_address",)) == (
        "do_task", ("modify_user_address",))
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


@pytest.mark.parametrize("name", ["retail_spec", "airline_spec"])
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
    data = spec_data("retail_spec")
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

    spec = load("retail_spec")
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
    played = [r for r in rows("retail_spec") if r["world_state"]["target_tools"] ==
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


# --- 3. language a person writes ------------------------------------------------------------

LANGUAGE_SPECS = (*SPECS, "bike_rental_spec")


@cache
def asks(name: str) -> tuple[str, ...]:
    return tuple(r["prompt"] for r in rows(name, 3000))


def sentences(text: str) -> set[str]:
    return {s.strip().lower() for s in re.split(r"(?<=[.?!])\s+", text) if s.strip()}


@pytest.mark.parametrize("name", LANGUAGE_SPECS)
def test_asks_are_all_distinct_and_no_sentence_recurs_in_more_than_2pct(name: str) -> None:
    written = asks(name)
    assert len(set(written)) == len(written) == 3000
    counts: dict[str, int] = {}
    for ask in written:
        for sentence in sentences(ask):
            counts[sentence] = counts.get(sentence, 0) + 1
    top = max(counts.items(), key=lambda kv: kv[1])
    assert top[1] <= 0.02 * len(written), top


@pytest.mark.parametrize("name", LANGUAGE_SPECS)
def test_asks_say_no_schema_noun_and_name_what_they_ask_for(name: str) -> None:
    from whileai.simulations.generate.coherence import coherence_report

    spec = load(name)
    played = rows(name, 3000)
    report = coherence_report(spec, played)
    assert report["by_rule"].get("snake_case", 0) == 0, report["examples"]
    assert report["coherent_share"] >= 0.995, report["examples"]
    persons = ("user", "customer", "member", "passenger")
    # "what's your policy on user?": a record's name is never a topic of its own
    assert not [a for a in asks(name) if re.search(
        rf"\b(?:policy on|rules? (?:about|on)|about|the) (?:{'|'.join(persons)})s?[?.]", a)]


@pytest.mark.parametrize("name", LANGUAGE_SPECS)
def test_people_are_performed_not_announced(name: str) -> None:
    announced = re.compile(r"my english|english is my|second language|i'm \d\d\b|"
                           r"i am \d\d years|i'm (?:elderly|old)|simple words", re.IGNORECASE)
    assert not [a for a in asks(name) if announced.search(a)]
    played = rows(name, 3000)
    elderly = [r["prompt"] for r in played if r["scenario_dimensions"]["persona"] == "elderly"]
    assert elderly
    assert not [a for a in elderly if re.search(r"\b(?:Hey hey|Hiya|I'm|can't|don't)\b", a)]


def test_a_non_native_speaker_makes_transfer_errors() -> None:
    from whileai.simulations.generate.voice import spoken_as
    from whileai.simulations.world.values import draws

    text = "Hi, I'd like to cancel the order. I tried this yesterday. Can you help? Thanks."
    changed = [spoken_as(text, "non_native", draws(0, i)) for i in range(50)]
    assert all(c != text for c in changed)
    assert len(set(changed)) > 5
    assert spoken_as(text, "returning", draws(0, 1)) == text


def test_typos_are_a_realistic_mix_at_a_believable_rate() -> None:
    from whileai.simulations.generate.voice import _typo, typed
    from whileai.simulations.world.values import draws

    kinds: dict[str, int] = {}
    for i in range(400):
        word = ("address", "received", "cancel", "there", "don't", "payment")[i % 6]
        got = _typo(word, draws(1, i))
        kind = ("apostrophe" if "'" in word and "'" not in got else
                "omission" if len(got) == len(word) - 1 else
                "doubling" if len(got) == len(word) + 1 else
                "swap" if sorted(got) == sorted(word) else "other")
        kinds[kind] = kinds.get(kind, 0) + 1
    assert {"apostrophe", "omission", "doubling", "swap", "other"} <= set(kinds)
    assert max(kinds.values()) < 0.5 * sum(kinds.values())
    text = ("I would like to change the delivery address on my order #W1234567 because we are "
            "moving house next week and nobody will be there to receive it.")
    for i in range(50):
        out = typed(text, "typos", draws(2, i), ["#W1234567"])
        wrong = sum(a != b for a, b in zip(text.split(), out.split(), strict=False))
        assert 1 <= wrong <= 2
        assert "#W1234567" in out


# --- 4. a world that hangs together ---------------------------------------------------------

@pytest.mark.parametrize("name", ["retail_spec", "airline_spec"])
def test_addresses_agree_and_payment_methods_are_named_as_people_name_them(name: str) -> None:
    from whileai.simulations.world.fakes import PLACES

    places = {(city, state): zip3 for city, state, zip3 in PLACES}
    checked = 0
    for row in rows(name, 3000):
        slots = row["world_state"]["slots"]
        if "city" in slots and "state" in slots:
            checked += 1
            assert (slots["city"], slots["state"]) in places
            if "zip" in slots:
                assert slots["zip"].startswith(places[(slots["city"], slots["state"])])
        pay = [v for k, v in slots.items() if "payment" in k]
        if pay and row["rollout_index"] == 0:  # recited only when the agent asks for it
            assert str(pay[0]) not in row["prompt"]
    assert checked > 0 or name == "airline_spec"


def test_dates_follow_the_policys_today_and_a_trip_runs_forward() -> None:
    from datetime import date

    spec = load("bike_rental_spec")
    assert "Today is 2025-06-10" in spec.policy
    today = date(2025, 6, 10)
    seen = 0
    for row in rows("bike_rental_spec"):
        slots = row["world_state"]["slots"]
        for record in row["world_state"]["records"].values():
            assert date.fromisoformat(record["updated"]) < today
        if "start_date" in slots:
            seen += 1
            start, end = (date.fromisoformat(slots[k]) for k in ("start_date", "end_date"))
            assert today < start <= end
    assert seen
    for row in rows("airline_spec"):  # a trip's flights are in date order
        for value in row["world_state"]["slots"].values():
            if isinstance(value, list) and value and isinstance(value[0], dict) \
                    and "date" in value[0]:
                assert [f["date"] for f in value] == sorted(f["date"] for f in value)


@pytest.mark.parametrize("name", LANGUAGE_SPECS)
def test_replies_agree_with_the_tool_results_and_keep_ids_as_written(name: str) -> None:
    for row in rows(name):
        results = [s["result"] for s in tool_steps(row) if isinstance(s.get("result"), dict)]
        reply = row["final_text"]
        if results and not row["seeded"] and all(r.get("status") != "ok" for r in results):
            assert "Done:" not in reply
            assert "went through" not in reply
        if any(isinstance(r.get("data"), dict) and r["data"].get("results") == [] for r in results):
            assert "found 0" not in reply
        for value in row["world_state"]["slots"].values():
            text = str(value)
            if re.search(r"[A-Z]", text) and re.search(r"\d", text) \
                    and text.lower() in reply.lower():
                assert text in reply  # "Reservation QRA54S", never "qra54s"
        for step in tool_steps(row):
            summary = step["arguments"].get("summary")
            if summary is not None:  # written for the colleague, not a cut of the ask
                assert summary.startswith("The customer")
                assert summary.endswith(".")
