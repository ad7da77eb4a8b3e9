"""simulate(): knobs, aliases, bad input, modes, output, tasks, grader, stop reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import ORDER_TOOLS as TOOLS
from whileai.errors import AgentFailedWarning, ConfigError, SpecError
from whileai.simulations.play.config import resolve_config

POLICY = "- Verify the customer's email before any change.\n- Never cancel a shipped order."
QUIET = {"simulator": False, "progress": False}


def echo(message: str) -> dict[str, Any]:
    return {"steps": [], "final_text": f"ok: {message[:20]}"}


def test_unknown_keywords_list_the_valid_ones() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword.*\['budgett'\].*valid keywords"):
        zps.simulate(echo, tools=TOOLS, budgett=3)
    with pytest.raises(TypeError, match=r"advanced got unexpected key.*concurrency"):
        zps.simulate(echo, tools=TOOLS, advanced={"threads": 2})


def test_aliases_resolve() -> None:
    cfg = resolve_config({"phrasings": 3, "repeats": 4, "unique": False, "risk": 0.2,
                          "policy": "x"})
    assert (cfg.phrasings, cfg.repeats, cfg.unique, cfg.fault_rate) == (3, 4, False, 0.2)
    assert resolve_config({"n": 2}).phrasings == 2
    with pytest.raises(ConfigError, match="disagree"):
        resolve_config({"repeats": 2, "rollouts_per_request": 3})


@pytest.mark.parametrize(("knobs", "error", "match"), [
    ({"budget": 0}, ConfigError, "budget must be at least 1, got 0"),
    ({"budget": 2.5}, ConfigError, "budget must be an int"),
    ({"fault_rate": 1.5}, ConfigError, "fault_rate must be a number between 0 and 1"),
    ({"mode": "train"}, ConfigError, "mode must be one of explore, sft, rl, adaptive"),
    ({"until": "forever"}, ConfigError, "until must be one of"),
    ({"repeat_policy": "sometimes"}, ConfigError, "repeat_policy must be one of"),
    ({"reproducible": True, "time_budget": 5}, ConfigError, "needs the clock off"),
    ({"time_budget": -1}, ConfigError, "time_budget must be seconds"),
])
def test_bad_knobs_fail_before_any_rollout(knobs: dict[str, Any], error: type[Exception],
                                           match: str) -> None:
    calls: list[str] = []

    def agent(message: str) -> dict[str, Any]:
        calls.append(message)
        return echo(message)

    with pytest.raises(error, match=match):
        zps.simulate(agent, tools=TOOLS, **QUIET, **knobs)
    assert calls == []


def test_bad_specs_are_spec_errors() -> None:
    with pytest.raises(SpecError, match="no tools and no system prompt"):
        zps.simulate(echo, **QUIET)
    with pytest.raises(SpecError, match="has no name"):
        zps.simulate(echo, tools=[{"parameters": {}}], **QUIET)
    with pytest.raises(SpecError, match="must be a JSON-schema object"):
        zps.simulate(echo, tools=[{"name": "t", "parameters": "order_id"}], **QUIET)


def test_a_policy_that_is_one_huge_line_runs() -> None:
    huge = " ".join(f"Rule {i} says the agent must check item {i}." for i in range(400))
    data = zps.simulate(echo, tools=TOOLS, system_prompt=huge.replace(". ", "; "), budget=10,
                        **QUIET)
    assert len(data) == 10
    assert data.search["grid_cells"] > 10


def test_an_agent_returning_a_string_is_counted_and_called_off() -> None:
    with pytest.warns(AgentFailedWarning, match="failed all 16 rollouts"):
        data = zps.simulate(lambda m: "done", tools=TOOLS, budget=3, **QUIET)
    assert len(data) == 0
    assert data.stopped_because == "agent_failed"
    assert data.search["agent_errors"] == 16  # max(16, 2 * budget)
    assert "agent returned str" in data.search["first_agent_error"]


def test_a_raising_agent_is_called_off_after_twice_the_budget() -> None:
    def broken(message: str) -> dict[str, Any]:
        raise RuntimeError("endpoint down")

    with pytest.warns(AgentFailedWarning, match="endpoint down"):
        data = zps.simulate(broken, tools=TOOLS, budget=20, **QUIET)
    assert data.stopped_because == "agent_failed"
    assert data.search["agent_errors"] == 40
    assert data.search["first_agent_error"] == "RuntimeError: endpoint down"


@pytest.mark.parametrize("repeats", [1, 4])
def test_one_ask_the_agent_always_fails_cannot_hold_the_run(repeats: int) -> None:
    asked: list[str] = []

    def breaks_on_the_first_ask(message: str) -> dict[str, Any]:
        asked.append(message)
        if message == asked[0]:
            raise RuntimeError("this ask breaks me")
        return {"steps": [], "final_text": "ok"}

    data = zps.simulate(breaks_on_the_first_ask, tools=TOOLS, budget=8, repeats=repeats, **QUIET)
    assert data.stopped_because == "budget"
    assert len(data) == 8
    assert asked.count(asked[0]) == 3 * repeats  # each rollout of that ask tried three times
    assert data.search["rollouts_given_up"] == repeats
    assert data.search["agent_errors"] == 3 * repeats
    assert asked[0] not in {row["prompt"] for row in data.trajectories}


def test_a_flaky_agent_loses_rollouts_but_fills_the_budget() -> None:
    count = {"n": 0}

    def flaky(message: str) -> dict[str, Any]:
        count["n"] += 1
        if count["n"] % 3 == 0:
            return {"final_text": 42}  # wrong shape
        return echo(message)

    data = zps.simulate(flaky, tools=TOOLS, budget=12, advanced={"concurrency": 1}, **QUIET)
    assert len(data) == 12
    assert data.stopped_because == "budget"
    assert data.search["agent_errors"] == 5
    assert "final_text" in data.search["first_agent_error"]


def test_clean_run_reports_no_error_keys() -> None:
    data = zps.simulate(echo, tools=TOOLS, budget=5, **QUIET)
    assert "agent_errors" not in data.search
    assert "groups" not in data.search
    assert data.search["rows"] == 5


def test_no_agent_and_no_model_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("WHILEAI_AGENT", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match="no agent"):
        zps.simulate(tools=TOOLS, **QUIET)


def test_simulator_none_falls_back_to_templates_with_a_warning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WHILEAI_SIMULATOR", raising=False)
    data = zps.simulate(echo, tools=TOOLS, budget=3, progress=False)
    assert len(data) == 3
    assert any("template writer" in w for w in data.search["warnings"])


def test_object_agents_are_called_with_the_situation_and_world() -> None:
    seen: list[Any] = []

    class Mine:
        def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
            seen.append((situation.scenario_id, seed))
            result = world.call("get_order", {"order_id": "1"})
            return {"steps": [{"tool": "get_order", "arguments": {"order_id": "1"},
                               "result": result}], "final_text": "checked"}

    data = zps.simulate(Mine(), tools=TOOLS, budget=4, **QUIET)
    assert [s for s, _ in seen] == [r["scenario_id"] for r in data.trajectories]
    assert all(isinstance(seed, int) for _, seed in seen)


def test_sft_mode_asks_each_situation_several_ways() -> None:
    data = zps.simulate(echo, tools=TOOLS, mode="sft", budget=12, **QUIET)
    arms = [r["scenario_dimensions"]["arm"] for r in data.trajectories]
    assert arms[:3] == ["explore", "phrasing", "phrasing"]
    first = data.trajectories[:3]
    assert len({r["prompt"] for r in first}) == 3
    assert len({r["scenario_id"] for r in first}) == 3
    assert len({json.dumps(r["world_state"], sort_keys=True) for r in first}) == 1
    assert data.rollouts_per_request == 1


def test_situations_cap_and_saturation_stop_the_run() -> None:
    data = zps.simulate(echo, tools=TOOLS, situations=5, budget=50, **QUIET)
    assert len(data) == 5
    assert data.stopped_because == "situations_exhausted"
    few = zps.simulate(echo, tools=[TOOLS[0]], system_prompt="Help.", until="saturation",
                       budget=100000, **QUIET)
    assert few.stopped_because == "saturation"
    assert len(few) == 5 * few.search["grid_cells"] - few.search["duplicates_skipped"]


def test_time_budget_stops_the_run() -> None:
    import time

    def slow(message: str) -> dict[str, Any]:
        time.sleep(0.02)
        return echo(message)

    data = zps.simulate(slow, tools=TOOLS, budget=100000, time_budget=0.3,
                        advanced={"concurrency": 4, "stop_grace": 1}, **QUIET)
    assert data.stopped_because == "time_budget"
    assert 0 < len(data) < 100000


def test_output_is_appended_scrubbed_and_matches_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt=POLICY,
                        budget=15, output=path, **QUIET)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 15
    assert lines == json.loads(json.dumps(list(data.rows)))
    assert not any("privileged" in json.dumps(line) for line in lines)
    saved = data.save(tmp_path / "saved.jsonl")
    assert saved.read_text() == path.read_text()


def test_grader_runs_beside_the_rollouts() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt=POLICY, budget=10,
                        grader=lambda row: {"reward": int(not row["seeded"])}, **QUIET)
    assert all(r["judge_status"] == "ok" for r in data.trajectories)
    assert all(r["reward"] == (0 if r["seeded"] else 1) for r in data.trajectories)


def test_an_in_process_grader_keeps_rollouts_on_the_calling_thread() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, budget=6,
                        grader=zps.task_checklist, **QUIET)
    assert data.search["rollout_threads"] == 1
    assert all(r["judge_status"] == "ok" for r in data.trajectories)
    lam = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, budget=6,
                       grader=lambda row: {"reward": 1}, **QUIET)
    assert lam.search["rollout_threads"] == 32  # an unmarked grader may wait on a model


def test_tasks_rerun_on_their_own_ids_faults_and_worlds(tmp_path: Path) -> None:
    first = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt=POLICY,
                         mode="rl", repeats=3, repeat_policy="fixed", budget=18,
                         output=tmp_path / "a.jsonl", **QUIET)
    again = zps.simulate(zps.seeded_agent(TOOLS, seed=9), tools=TOOLS, system_prompt=POLICY,
                         tasks=first, budget=100, **QUIET)
    assert again.stopped_because == "tasks_done"
    assert again.rollouts_per_request == 3  # k inherited
    assert len(again) == 18

    def tasks(rows: Any) -> dict[str, Any]:
        return {r["scenario_id"]: (r["prompt"], r["faults"], r["world_state"]) for r in rows}

    assert tasks(again.trajectories) == tasks(first.trajectories)
    from_file = zps.simulate(echo, tools=TOOLS, tasks=tmp_path / "a.jsonl", repeats=1,
                             budget=100, **QUIET)
    assert len(from_file) == 6
    assert {r["scenario_id"] for r in from_file} == {r["scenario_id"] for r in first}


def test_traces_aim_the_grid() -> None:
    traces = [{"prompt": "where is my order 4412",
               "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"},
                          "result": {"error": "timeout"}}],
               "final_text": "Your order shipped yesterday.", "reward": 0}]
    data = zps.simulate(echo, tools=TOOLS, system_prompt=POLICY, traces=traces, budget=6,
                        **QUIET)
    assert len(data) == 6
    aimed = zps.dimensions_from_traces(traces, TOOLS, POLICY)
    first = data.trajectories[0]["scenario_dimensions"]
    for axis in ("tool", "condition"):
        if axis in aimed:
            assert first[axis] in aimed[axis]


def test_dimensions_keyword_aims_the_grid() -> None:
    data = zps.simulate(echo, tools=TOOLS, dimensions={"condition": ["timeout"]}, budget=6,
                        **QUIET)
    assert {r["scenario_dimensions"]["condition"] for r in data.trajectories} == {"timeout"}


def test_logprobs_with_a_callable_is_reported() -> None:
    data = zps.simulate(echo, tools=TOOLS, budget=2, logprobs=True, **QUIET)
    assert any("logprobs" in w for w in data.search["warnings"])


def test_trace_asks_never_come_back_as_generated_asks() -> None:
    probe = zps.simulate(echo, tools=TOOLS, system_prompt=POLICY, budget=4, **QUIET)
    source = probe.trajectories[0]["prompt"]  # an ask the writer is known to produce
    traces = [{"prompt": source, "steps": [], "final_text": "x", "reward": 0}]
    data = zps.simulate(echo, tools=TOOLS, system_prompt=POLICY, traces=traces, budget=30,
                        **QUIET)
    leaks = zps.leakage_report(data.trajectories, traces)  # exact, or hash cosine >= 0.9
    assert leaks["n_rows"] == len(data.trajectories) > 0
    assert leaks["n_leaky"] == 0
    assert "trace_copies_skipped" in data.search


def test_a_source_that_rejects_everything_runs_dry_and_says_so() -> None:
    from whileai.simulations.agent.spec import agent_spec
    from whileai.simulations.generate.grid import build_grid
    from whileai.simulations.generate.writer import TemplateWriter
    from whileai.simulations.play.source import SituationSource
    spec = agent_spec(tools=TOOLS, system_prompt=POLICY)
    source = SituationSource(spec, build_grid(spec), TemplateWriter(), resolve_config({}),
                             reject=lambda text: True)
    assert source.next() is None
    assert source.exhausted == "situations_exhausted"
    assert source.stats["trace_copies_skipped"] > 0


def test_an_agent_object_that_carries_tools_and_prompt_needs_no_more() -> None:
    class Carrier:
        tools = TOOLS
        system_prompt = POLICY

        def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
            return {"steps": [], "final_text": "ok"}

    data = zps.simulate(Carrier(), budget=3, **QUIET)
    assert len(data) == 3
    assert data.trajectories[0]["messages"][0]["content"] == POLICY
    assert {r["scenario_dimensions"]["tool"] for r in data.trajectories} <= {
        "get_order", "cancel_order", "unrelated", "multi_tool"}


def test_progress_line_on_a_tty_and_nothing_for_a_short_job_off_one() -> None:
    import io

    from whileai.rows.progress import Progress
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = Progress("simulate", 10, enabled=True, stream=stream)
        bar.update(4)
        bar.finish(10)
    assert "simulate: 4/10 rows" in tty.getvalue()
    assert "simulate: 10 rows in " in tty.getvalue()  # the summary
    assert "ETA" in tty.getvalue()
    assert pipe.getvalue() == ""  # off a terminal: a line every few seconds, none for 10 rows
    silent = Tty()
    off = Progress("simulate", 10, enabled=False, stream=silent)
    off.update(5, force=True)
    off.finish(5)
    assert silent.getvalue() == ""


def test_the_embedder_knob_accepts_the_hash_family_only() -> None:
    data = zps.simulate(echo, tools=TOOLS, budget=3, advanced={"embedder": "hash-v2:64"},
                        **QUIET)
    assert data.search["embedder"] == "hash-v2:64"
    with pytest.raises(ConfigError, match="integer counts"):
        zps.simulate(echo, tools=TOOLS, budget=3,
                     advanced={"embedder": lambda texts: [[1.0] for _ in texts]}, **QUIET)
    with pytest.raises(ConfigError, match="unknown embedder"):
        zps.simulate(echo, tools=TOOLS, budget=3, advanced={"embedder": "bert"}, **QUIET)


def test_agent_output_json_cannot_hold_is_a_counted_drop(tmp_path: Path) -> None:
    count = {"n": 0}

    def odd(message: str) -> dict[str, Any]:
        count["n"] += 1
        result: object = object() if count["n"] == 2 else {"status": "ok"}
        return {"steps": [{"tool": "get_order", "arguments": {}, "result": result}],
                "final_text": "ok"}

    path = tmp_path / "rows.jsonl"
    data = zps.simulate(odd, tools=TOOLS, budget=4, output=path,
                        advanced={"concurrency": 1}, **QUIET)
    assert len(data) == 4
    assert data.search["agent_errors"] == 1
    assert "cannot be written as JSON" in data.search["first_agent_error"]
    assert len(path.read_text().splitlines()) == 4


def test_in_process_rollouts_run_on_the_calling_thread_unless_threads_are_asked_for() -> None:
    import threading

    seen: set[str] = set()

    def plain(message: str) -> dict[str, Any]:
        seen.add(threading.current_thread().name)
        return {"steps": [], "final_text": "ok"}

    seeded = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, budget=8, **QUIET)
    assert seeded.search["rollout_threads"] == 1  # seeded agent + mock world: all cpu_bound
    forced = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, budget=8,
                          advanced={"concurrency": 4}, **QUIET)
    assert forced.search["rollout_threads"] == 4
    # the same rows either way (threads may land them in another order)
    def canonical(rows: list[dict[str, Any]]) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True) for r in rows)

    assert canonical(forced.trajectories) == canonical(seeded.trajectories)
    own_world = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, budget=8,
                             execute=lambda tool, args: {"status": "ok"}, **QUIET)
    assert own_world.search["rollout_threads"] == 32  # the caller's execute may wait on I/O
    data = zps.simulate(plain, tools=TOOLS, budget=8, **QUIET)
    assert data.search["rollout_threads"] == 32
    assert threading.current_thread().name not in seen
    seen.clear()
    plain.cpu_bound = True  # type: ignore[attr-defined]
    data = zps.simulate(plain, tools=TOOLS, budget=8, **QUIET)
    assert data.search["rollout_threads"] == 1
    assert seen == {threading.current_thread().name}
