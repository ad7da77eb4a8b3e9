"""Aiming the grid with traces: mining, flaw rows, dimensions_from_traces, trace_report,
tools_from_traces / infer_harness and opening_share."""

from __future__ import annotations

from typing import Any

import pytest

import whileai.simulations as zps
from _tools import order_tools
from whileai.errors import ConfigError
from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.grid import build_grid, default_axes

TOOLS = order_tools("list_orders", "refund", "get_order", "cancel")


def _trace(tool: str, result: Any, reward: Any = None, prompt: str = "where is 4412") -> dict:
    row: dict[str, Any] = {"prompt": prompt, "steps": [
        {"tool": tool, "arguments": {"order_id": "4412"}, "result": result}]}
    if reward is not None:
        row["reward"] = reward
    return row


TIMEOUT = _trace("get_order", {"error": "timeout"}, reward=0)


def _base() -> dict[str, tuple[str, ...]]:
    return default_axes(agent_spec(tools=TOOLS, system_prompt="Be kind."))


def test_timeout_on_get_order_raises_that_tool_and_that_fault() -> None:
    dims = zps.dimensions_from_traces([TIMEOUT], TOOLS, "Be kind.")
    base = _base()
    assert dims["tool"][0] == "get_order"
    assert dims["condition"][0] == "timeout"
    assert dims["condition"][1] == "success"  # the clean value stays, right behind
    assert sorted(dims["condition"]) == sorted(base["condition"])  # same values, reordered
    # axes the traces say nothing about are left exactly as they were
    for axis in ("clause", "state", "history", "intent", "stance", "persona", "tone", "typing"):
        assert dims[axis] == list(base[axis]), axis
    # the dimensions drive the engine's grid: the first ordinary cell is the flaw
    grid = build_grid(agent_spec(tools=TOOLS, system_prompt="Be kind."), dims)
    ordinary = [c for c in grid.cells if c.block == "ordinary"]
    assert (ordinary[0].value("tool"), ordinary[0].value("condition")) == ("get_order", "timeout")


def test_broaden_false_drops_untouched_tools_but_keeps_specials() -> None:
    rows = [TIMEOUT, _trace("refund", {"ok": True}, reward=1)]
    wide = zps.dimensions_from_traces(rows, TOOLS)
    narrow = zps.dimensions_from_traces(rows, TOOLS, broaden=False)
    assert wide["tool"][:2] == ["get_order", "refund"]
    assert set(wide["tool"]) == set(_base()["tool"])
    assert narrow["tool"] == ["get_order", "refund", "unrelated", "multi_tool"]


def test_failing_tools_order_by_fault_count_then_failed_rows() -> None:
    rows = [
        _trace("cancel", "Error: permission denied"),
        _trace("refund", {"error": "timeout"}),
        _trace("refund", {"error": {"type": "TimeoutError", "message": "timed out"}}),
        _trace("list_orders", {"orders": []}, reward=0),
    ]
    mined = zps.mine_traces(rows)
    assert mined["failing_tools"] == ["refund", "cancel", "list_orders"]
    assert mined["faults"] == {"timeout": 2, "permission_denied": 1}
    dims = zps.dimensions_from_traces(rows, TOOLS)
    assert dims["tool"][:3] == ["refund", "cancel", "list_orders"]
    assert dims["condition"][:3] == ["timeout", "permission_denied", "success"]


def test_clean_traces_move_tools_only() -> None:
    dims = zps.dimensions_from_traces([_trace("cancel", {"ok": True}, reward=1)], TOOLS)
    assert dims["tool"][0] == "cancel"
    assert dims["condition"] == list(_base()["condition"])


def test_fault_to_axis_override_and_validation() -> None:
    rows = [_trace("refund", {"error": "timeout"})]
    dims = zps.dimensions_from_traces(rows, TOOLS, fault_to_axis={"timeout": ("state", "missing")})
    assert dims["state"][:2] == ["missing", "exists"]
    assert dims["condition"] == list(_base()["condition"])
    with pytest.raises(ConfigError, match="fault_to_axis"):
        zps.dimensions_from_traces(rows, TOOLS, fault_to_axis={"timeout": "condition"})  # type: ignore[dict-item]


def test_step_fault_field_wins_over_result_text() -> None:
    row = {"prompt": "p", "steps": [{"tool": "refund", "arguments": {}, "result": {"ok": True},
                                     "fault": "stale"}]}
    assert zps.mine_traces([row])["faults"] == {"stale": 1}


def test_flaw_rows_and_labels() -> None:
    rows = [
        _trace("get_order", {"status": "shipped"}, reward=1, prompt="ok one"),
        _trace("get_order", {"status": "shipped"}, reward=0, prompt="bad label"),
        _trace("get_order", {"error": "timeout"}, reward=1, prompt="fault but passed"),
        dict(_trace("get_order", {"status": "shipped"}, prompt="advisory fail"), qwen_reward=0),
        _trace("get_order", {"status": "shipped"}, prompt="ungraded"),
    ]
    assert [r["prompt"] for r in zps.flaw_rows(rows)] == ["bad label", "fault but passed",
                                                         "advisory fail"]
    mined = zps.mine_traces(rows)
    assert (mined["graded"], mined["advisory_labels"], mined["ungraded"]) == (3, 1, 1)


def test_trace_report_counts_and_emphasis() -> None:
    traces = [TIMEOUT, {"prompt": "hello", "reward": 0.3}, {"final": "no ask"}, "junk",
              dict(_trace("get_order", {"ok": True}), qwen_reward="1"),
              _trace("ship_it", {"error": "boom"})]
    report = zps.trace_report(traces, tools=TOOLS, policy="Be kind.")
    assert (report["n_in"], report["n_rows"], report["dropped"]) == (6, 4, 2)
    assert report["drop_reasons"] == {"no_ask_or_steps": 1, "not_a_dict": 1}
    assert report["rewards_rejected"] == 1
    assert (report["graded"], report["ungraded"], report["advisory_labels"]) == (1, 2, 1)
    assert report["tools_observed"] == {"get_order": 2, "ship_it": 1}
    assert report["faults_observed"] == {"error": 1, "timeout": 1}
    assert report["emphasis"] == {"tool": ["get_order"], "condition": ["timeout"]}
    assert report["unknown_tools"] == ["ship_it"]
    assert report["unmapped_faults"] == ["error"]
    assert report["tools_source"] == "given"
    text = zps.format_trace_report(report)
    assert "6 in, 4 kept, 2 dropped" in text
    assert "tool -> get_order; condition -> timeout" in text
    assert "ship_it" in text


def test_trace_report_without_tools_reads_them_off_the_traces() -> None:
    report = zps.trace_report([TIMEOUT])
    assert report["tools_source"] == "traces"
    assert report["emphasis"]["tool"] == ["get_order"]


def test_tools_from_traces_unions_arguments_and_infer_harness_types() -> None:
    rows = [
        {"prompt": "a", "steps": [
            {"tool": "refund", "arguments": {"order_id": "1", "amount": 5}},
            {"tool": "refund", "arguments": {"order_id": "2", "amount": 5.5, "note": None}},
            {"tool": "lookup", "arguments": {"q": "x", "filters": {"a": 1}, "tags": ["t"]}},
        ]},
        {"prompt": "b", "steps": [{"tool": "refund", "arguments": {"order_id": 3,
                                                                     "reason": "late"}}]},
    ]
    tools = zps.tools_from_traces(rows)
    assert [t["function"]["name"] for t in tools] == ["refund", "lookup"]
    refund = tools[0]["function"]["parameters"]
    assert set(refund["properties"]) == {"order_id", "amount", "note", "reason"}
    assert refund["properties"]["amount"] == {"type": "number"}
    assert refund["required"] == ["order_id"]
    lookup = tools[1]["function"]["parameters"]["properties"]
    assert lookup == {"q": {"type": "string"}, "filters": {"type": "object"},
                      "tags": {"type": "array"}}
    harness = zps.infer_harness(rows)
    assert harness["policy"] == ""
    assert harness["calls"] == {"refund": 3, "lookup": 1}
    assert any("refund.order_id" in n for n in harness["notes"])  # string and integer seen
    # the drafted tools are a valid spec for the engine
    assert agent_spec(tools=harness["tools"]).tool_names == ("refund", "lookup")


def test_opening_share() -> None:
    rows = zps.load_traces([
        {"messages": [{"role": "system", "content": "s"},
                      {"role": "assistant", "content": "Hi! How can I help?"},
                      {"role": "user", "content": "refund please"}]},
        {"messages": [{"role": "user", "content": "hi"}]},
        {"prompt": "no messages at all"},
        {"prompt": "x", "messages": [{"role": "assistant", "content": "Welcome back"}]},
    ])
    assert rows[0]["prompt"] == "refund please"
    assert zps.opening_share(rows) == 0.5
    assert zps.opening_share([]) == 0.0


@pytest.mark.parametrize("kind", ["timeout", "permission_denied", "malformed", "stale",
                                  "not_found"])
def test_mock_world_fault_results_read_back_as_their_condition(kind: str) -> None:
    from whileai.simulations.world.mock import fault_result

    # a trace exported without the `fault` stamp: only the tool result says what went wrong
    row = _trace("refund", fault_result(kind, "refund", {"status": "shipped"}))
    assert zps.mine_traces([row])["faults"] == {kind: 1}
    dims = zps.dimensions_from_traces([row], TOOLS)
    assert dims["condition"][0] == kind
