"""Into the engine: simulate(traces=...) aims the grid, keeps the sources out of the rows, and
the README loop (split_pseudo_production -> simulate(traces=prod) -> leakage_report) closes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import order_tools
from whileai.errors import SpecError

TOOLS = order_tools("get_order", "refund", "cancel_order")
POLICY = "Verify the order before any refund."
TIMEOUT = {"prompt": "where is my order 4412", "steps": [
    {"tool": "refund", "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}],
    "final_text": "Refunded!", "reward": 0}
RUN = {"simulator": False, "progress": False, "mode": "rl", "repeats": 2, "budget": 12}


def _agent() -> Any:
    return zps.seeded_agent(TOOLS)


def _graded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def failed(row: dict[str, Any]) -> bool:
        return bool(row.get("seeded")) or any(
            isinstance(s, dict) and s.get("fault") for s in row["steps"])
    return [dict(r, reward=0.0 if failed(r) else 1.0) for r in rows]


def test_simulate_with_traces_aims_the_grid() -> None:
    data = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY, traces=[TIMEOUT], **RUN)
    dims = [r["scenario_dimensions"] for r in data.trajectories]
    assert dims[0]["tool"] == "refund"
    assert dims[0]["condition"] == "timeout"
    assert data.search["traces"]["n_traces"] == 1
    assert data.search["traces"]["leakage"]["dropped"] == 0


def test_source_copies_and_near_copies_are_dropped_and_counted(tmp_path: Path) -> None:
    first = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY, traces=[TIMEOUT], **RUN)
    exact = first.trajectories[0]["prompt"]
    near = first.trajectories[-1]["prompt"] + " thanks"
    # prompt-only traces do not move the grid, so the same run comes back
    sources = [TIMEOUT, {"prompt": exact}, {"prompt": near}]
    out = tmp_path / "rows.jsonl"
    data = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY, traces=sources,
                        output=str(out), **RUN)
    leakage = data.search["traces"]["leakage"]
    assert leakage["n_exact"] >= 1
    assert leakage["n_near"] >= 1
    assert len(data) == RUN["budget"] - leakage["dropped"]
    prompts = {r["prompt"] for r in data.trajectories}
    assert exact not in prompts
    assert first.trajectories[-1]["prompt"] not in prompts
    on_disk = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["prompt"] for r in on_disk] == [r["prompt"] for r in data.trajectories]
    report = zps.leakage_report(data.trajectories, sources)
    assert report["n_leaky"] == 0


def test_readme_loop_split_simulate_leakage() -> None:
    split = zps.split_pseudo_production
    leakage_report = zps.leakage_report
    drop_leaky_rows = zps.drop_leaky_rows
    base = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY,
                        **{**RUN, "budget": 30})
    scored = _graded(list(base.trajectories))
    prod, train = split(scored, fraction=0.2)
    assert prod
    assert train
    data = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY, traces=prod, **RUN)
    assert leakage_report(data.trajectories, prod)["n_leaky"] == 0
    rows, report = drop_leaky_rows(data.trajectories, prod)
    assert len(rows) == len(data.trajectories)
    assert report["dropped"] == 0
    # the held-out flaws aimed the run: its first cell is one of the observed failures
    aimed = zps.trace_report(prod, tools=TOOLS, policy=POLICY)["emphasis"]
    first = data.trajectories[0]["scenario_dimensions"]
    assert first["tool"] == aimed["tool"][0]


def test_failed_traces_feed_straight_back() -> None:
    evaluate = zps.evaluate
    base = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY, **RUN)

    def judge(row: dict[str, Any]) -> float:
        return 0.0 if row.get("seeded") or any(
            isinstance(s, dict) and s.get("fault") for s in row["steps"]) else 1.0

    failed = evaluate(base.trajectories, judge).failed_traces()
    assert failed
    assert len(zps.flaw_rows(failed)) == len(failed)
    data = zps.simulate(_agent(), tools=TOOLS, system_prompt=POLICY, traces=failed, **RUN)
    assert data.search["traces"]["n_traces"] == len(failed)


def test_simulate_from_traces_reads_the_tool_surface() -> None:
    simulate_from_traces = zps.simulate_from_traces
    traces = [TIMEOUT, {"prompt": "cancel 9", "steps": [
        {"tool": "cancel_order", "arguments": {"order_id": "9"}, "result": {"ok": True}}],
        "reward": 1}]
    data = simulate_from_traces(traces, _agent(), simulator=False, progress=False, budget=6,
                                repeats=2)
    assert data.tools is not None
    assert sorted(t["function"]["name"] for t in data.tools) == ["cancel_order", "refund"]
    assert data.trajectories[0]["scenario_dimensions"]["tool"] == "refund"
    with pytest.raises(SpecError, match="no tool calls"):
        simulate_from_traces([{"prompt": "just chat"}])
    with pytest.raises(TypeError):
        simulate_from_traces(traces, _agent(), not_a_knob=1)
