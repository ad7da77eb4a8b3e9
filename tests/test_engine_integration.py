"""The engine's seams with the model backends, the judges, traces and the output file."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import ORDER_TOOLS as TOOLS
from chat_server import Answer, completion, serve
from whileai.errors import AuthError, ConfigError, QuotaError
from whileai.simulations.generate.drafts import Draft
from whileai.simulations.generate.writer import TemplateWriter
from whileai.simulations.models.client import ModelQuotaError

POLICY = "Help customers with their orders."
QUIET: dict[str, Any] = {"simulator": False, "progress": False}


pytestmark = pytest.mark.usefixtures("no_model_roles")


class FailingAgent:
    """Answers ``ok`` rollouts, then raises ``error`` from the ``after``-th call on."""

    def __init__(self, error: Exception, after: int) -> None:
        self.error, self.after, self.calls = error, after, 0
        self.stopped = False

    def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
        self.calls += 1
        if self.calls > self.after:
            raise self.error
        return {"steps": [], "final_text": "ok"}

    def stop(self) -> None:
        self.stopped = True


# 1. quota and auth errors


@pytest.mark.parametrize("concurrency", [1, 4])
def test_agent_quota_stops_the_run_keeping_its_rows(concurrency: int) -> None:
    agent = FailingAgent(ModelQuotaError("quota spent on the agent model", role="agent"), 3)
    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, budget=40,
                        advanced={"concurrency": concurrency, "stop_grace": 0.5}, **QUIET)
    assert data.stopped_because == "agent_quota_exceeded"
    assert len(data) == 3
    assert "quota spent" in data.search["quota_error"]
    assert agent.calls < 40
    assert agent.stopped


def test_a_plain_quota_error_falls_back_to_agent_quota_exceeded() -> None:
    agent = FailingAgent(QuotaError("429"), 0)
    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, budget=10,
                        advanced={"concurrency": 1}, **QUIET)
    assert (data.stopped_because, len(data)) == ("agent_quota_exceeded", 0)
    assert agent.calls == 1


def test_auth_error_is_raised_out_of_simulate_at_once() -> None:
    agent = FailingAgent(AuthError("the endpoint refused the key: set OPENAI_API_KEY"), 2)
    with pytest.raises(AuthError, match="OPENAI_API_KEY"):
        zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, budget=50,
                     advanced={"concurrency": 1}, **QUIET)
    assert agent.calls == 3


class QuotaWriter(TemplateWriter):
    """The template writer until its second batch, then a spent quota."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def write(self, drafts: Sequence[Draft]) -> list[str]:
        self.batches += 1
        if self.batches > 1:
            raise ModelQuotaError("writer quota spent", role="writer")
        return list(super().write(drafts))


def test_writer_quota_stops_the_run_naming_the_writer() -> None:
    data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                        system_prompt=POLICY, simulator=QuotaWriter(), progress=False,
                        budget=500, advanced={"concurrency": 1})
    assert data.stopped_because == "writer_quota_exceeded"
    assert 0 < len(data) < 500
    assert "writer quota spent" in data.search["quota_error"]


def test_a_slow_rollout_is_not_waited_on_past_stop_grace() -> None:
    class Slow(FailingAgent):
        def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
            self.calls += 1
            if self.calls == 1:
                raise QuotaError("spent")
            time.sleep(1.0)
            return {"steps": [], "final_text": "late"}

    data = zps.simulate(Slow(QuotaError("x"), 0), tools=TOOLS, system_prompt=POLICY,
                        budget=8, advanced={"concurrency": 4, "stop_grace": 0.0}, **QUIET)
    assert data.stopped_because == "agent_quota_exceeded"
    assert data.search.get("rollouts_abandoned", 0) >= 1  # not waited on, not landed
    assert all(r["final_text"] != "late" for r in data.trajectories)


# 2. data.grade(judge=<model spec>) and 3. llm_grade= / grade=


def _judge_handler(path: str, body: dict[str, Any], i: int) -> Answer:
    return Answer(completion('{"reward": 1, "reason": "fine"}', model="judge"))


def test_grade_with_a_judge_spec_string_grades_in_place() -> None:
    data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                        system_prompt=POLICY, budget=3, **QUIET)
    assert "reward" not in data.rows[0]
    with serve(_judge_handler) as server:
        report = data.grade(judge=f"vllm:judge@{server.url}", rubric="Be right.")
        assert report["graded"] == 3
        assert all(r["reward"] == 1.0 for r in data.trajectories)
        assert all(r["reward"] == 1.0 for r in data.rows)  # the cached view was reset
        spec_report = data.grade(judge=zps.local_model(server.url, model="judge"))
        assert spec_report["graded"] == 3
    scored = data.grade(judge=lambda row: {"reward": 0})  # a callable: graded copies
    assert all(r["reward"] == 0 for r in scored.rows)
    assert all(r["reward"] == 1.0 for r in data.trajectories)


def test_llm_grade_without_a_judge_fails_before_the_run() -> None:
    agent = FailingAgent(RuntimeError("never"), 100)
    with pytest.raises(ConfigError, match="WHILEAI_JUDGE"):
        zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, budget=3, llm_grade=True,
                     **QUIET)
    assert agent.calls == 0


def test_llm_grade_adds_llm_reward(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    with serve(_judge_handler) as server:
        monkeypatch.setenv("WHILEAI_JUDGE", f"vllm:judge@{server.url}")
        data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                            system_prompt=POLICY, budget=3, llm_grade=True, output=str(out),
                            **QUIET)
    assert [r["llm_reward"] for r in data.trajectories] == [1.0, 1.0, 1.0]
    assert "reward" not in data.trajectories[0]
    assert data.search["llm_grade"]["graded"] == 3
    on_disk = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["llm_reward"] for r in on_disk] == [1.0, 1.0, 1.0]


def test_legacy_grade_writes_checklist_rewards_and_warns() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.0), tools=TOOLS, system_prompt=POLICY,
                        budget=6, grade=True, **QUIET)
    assert all(r["reward"] in (0.0, 1.0) for r in data.trajectories)
    assert all("argument_grounding" in r["markers"] for r in data.trajectories)
    assert any("legacy" in w for w in data.search["warnings"])
    with pytest.raises(ConfigError, match="not both"):
        zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, budget=2, grade=True,
                     grader=lambda r: {"reward": 1}, **QUIET)


# 4. writer counters and model fields


class CountingWriter(TemplateWriter):
    def stats(self) -> dict[str, int]:
        return {"writer_calls": 7, "writer_retries": 1, "writer_rejected": 0,
                "writer_fallbacks": 2}


def test_writer_counters_land_in_search() -> None:
    data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                        system_prompt=POLICY, simulator=CountingWriter(), budget=2,
                        progress=False)
    assert (data.search["writer_calls"], data.search["writer_fallbacks"]) == (7, 2)


def test_model_call_counts_are_kept_on_the_row() -> None:
    data = zps.simulate(lambda m: {"steps": [], "final_text": "ok", "invalid_tool_calls": 2,
                                   "model_calls": 3}, tools=TOOLS, budget=1, **QUIET)
    assert (data[0]["invalid_tool_calls"], data[0]["model_calls"]) == (2, 3)


# 5. empty asks


def test_empty_asks_are_skipped_and_counted() -> None:
    played: list[str] = []

    def agent(message: str) -> dict[str, Any]:
        played.append(message)
        return {"steps": [], "final_text": "ok"}

    class AllEmpty(TemplateWriter):
        def write(self, drafts: Sequence[Draft]) -> list[str]:
            texts = super().write(drafts)
            blank = ("", " \n")  # one wording of every slot is empty or blank
            return [blank[i % 2] if d.candidate == 0 else t
                    for i, (d, t) in enumerate(zip(drafts, texts, strict=True))]

    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, simulator=AllEmpty(),
                        budget=10, progress=False)
    assert data.search["empty_asks"] > 0
    assert all(p.strip() for p in played)
    assert len(data) == 10


# 6. zps.local_model(...) as agent= and simulator=


def test_a_model_spec_object_is_accepted_as_agent_and_simulator() -> None:
    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        if "never the assistant" in body["messages"][0]["content"]:
            if "next message" in body["messages"][-1]["content"]:
                return Answer(completion('{"done": true}'))
            return Answer(completion(json.dumps({"message": f"Where is order {4400 + i}?"})))
        return Answer(completion("Let me check that for you.", model="m"))

    with serve(handler) as server:
        spec = zps.local_model(server.url, model="m")
        data = zps.simulate(agent=spec, simulator=spec, tools=TOOLS, system_prompt=POLICY,
                            budget=2, progress=False)
    assert len(data) == 2
    assert data.search["writer_calls"] >= 1


# 7. the world outside a run


def test_world_outside_a_run_faults_from_its_own_rate_and_seed() -> None:
    def calls(world: Any) -> list[dict[str, Any]]:
        return [world.call("get_order", {"order_id": "4412"}) for _ in range(40)]

    first = calls(zps.world(TOOLS, fault_rate=0.5, seed=3))
    assert first == calls(zps.world(TOOLS, fault_rate=0.5, seed=3))
    ok = {"status": "ok", "data": {"order_id": "4412"}}
    faulted = [r for r in first if r != ok]
    assert 5 < len(faulted) < 35
    assert first != calls(zps.world(TOOLS, fault_rate=0.5, seed=4))
    assert all(r == ok for r in calls(zps.world(TOOLS)))  # the default never faults
    assert all(r != ok for r in calls(zps.world(TOOLS, fault_rate=1.0)))


def test_inside_a_run_the_run_plan_wins_over_the_world_rate() -> None:
    world = zps.world(TOOLS, fault_rate=1.0)

    def agent(message: str) -> dict[str, Any]:
        result = world.call("get_order", {"order_id": "4412"})
        return {"steps": [{"tool": "get_order", "arguments": {"order_id": "4412"},
                           "result": result}], "final_text": "done"}

    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, budget=10, fault_rate=0,
                        **QUIET)
    assert not any("fault" in s for r in data.trajectories for s in r["steps"])
    assert world.outside_calls == 0


# 8. the seeded agent only uses ids the person gave


def test_clean_seeded_rows_pass_argument_grounding() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.3), tools=TOOLS, system_prompt=POLICY,
                        budget=100, **QUIET)
    clean = [r for r in data.trajectories if r["seeded"] == []]
    assert len(clean) > 30
    assert [r["prompt"] for r in clean if zps.ungrounded_arguments(r)] == []
    asked = [r for r in clean if not r["steps"] and r["scenario_dimensions"]["tool"] != "unrelated"]
    assert all("Could you tell me" in r["final_text"] for r in asked)


# 9. source-trace copies are refused before they are played


def test_trace_copies_are_refused_before_play_and_the_budget_stays_full(tmp_path: Path) -> None:
    run = {**QUIET, "budget": 12}
    agent = zps.seeded_agent(TOOLS)
    timeout = {"prompt": "where is my order 4412", "steps": [
        {"tool": "get_order", "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}],
        "final_text": "Done!", "reward": 0}
    first = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, traces=[timeout], **run)
    exact, near = first[0]["prompt"], first[-1]["prompt"] + " thanks"
    out = tmp_path / "rows.jsonl"
    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, output=str(out),
                        traces=[timeout, {"prompt": exact}, {"prompt": near}], **run)
    leakage = data.search["traces"]["leakage"]
    assert len(data) == 12
    assert leakage["dropped"] == 0  # the final gate found nothing left to drop
    assert leakage["rejected_before_play"] >= 2
    assert leakage["n_exact"] >= 1
    assert leakage["n_near"] >= 1
    assert exact not in {r["prompt"] for r in data.trajectories}
    assert len(out.read_text().splitlines()) == 12


# 10. turn numbers


def test_seeded_and_callable_steps_carry_turns() -> None:
    seeded = zps.simulate(zps.seeded_agent(TOOLS, rate=0.0), tools=TOOLS,
                          system_prompt=POLICY, budget=20, fault_rate=1.0, **QUIET)
    steps = [s for r in seeded.trajectories for s in r["steps"]]
    assert steps
    assert all("turn" in s for s in steps)
    retried = [r for r in seeded.trajectories if len(r["steps"]) > 1]
    for row in retried:  # a retry after a timeout is a second reply, not a parallel call
        assert [s["turn"] for s in row["steps"]] == list(range(len(row["steps"])))
        calls = [m for m in row["messages"] if m.get("tool_calls")]
        assert len(calls) == len(row["steps"])

    def agent(message: str) -> dict[str, Any]:
        return {"steps": [
            {"role": "assistant", "content": "Looking both up."},
            {"tool": "get_order", "arguments": {"order_id": "1"}, "result": {}},
            {"tool": "get_order", "arguments": {"order_id": "2"}, "result": {},
             "input_tokens": 5},
            {"role": "assistant", "content": "One more."},
        ], "final_text": "done"}

    row = zps.simulate(agent, tools=TOOLS, budget=1, **QUIET)[0]
    assert [s["turn"] for s in row["steps"]] == [0, 0, 1, 2]
    assert [len(m.get("tool_calls") or ()) for m in row["messages"]
            if m["role"] == "assistant"][:2] == [1, 1]
    given = zps.simulate(lambda m: {"steps": [{"tool": "get_order", "turn": 4}],
                                    "final_text": "x"}, tools=TOOLS, budget=1, **QUIET)
    assert given[0]["steps"][0]["turn"] == 4


# 11. group_cut reaches the output file


def test_group_cut_is_stamped_in_the_output_file(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    calls = {"n": 0}

    class Agent:
        def run(self, situation: Any, *, world: Any, seed: int) -> Mapping[str, Any]:
            calls["n"] += 1
            if calls["n"] > 6:
                raise QuotaError("spent")
            return {"steps": [], "final_text": "ok"}

    data = zps.simulate(Agent(), tools=TOOLS, system_prompt=POLICY, repeats=4, budget=40,
                        repeat_policy="fixed", output=str(out),
                        advanced={"concurrency": 1}, **QUIET)
    cut = [r for r in data.trajectories if r.get("group_cut")]
    assert cut
    on_disk = [json.loads(line) for line in out.read_text().splitlines()]
    assert [bool(r.get("group_cut")) for r in on_disk] == [
        bool(r.get("group_cut")) for r in data.trajectories]
