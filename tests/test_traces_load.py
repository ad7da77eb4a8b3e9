"""load_traces: every supported trace shape normalises to canonical rows; bad input is counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import whileai.simulations as zps
from whileai.errors import RowError
from whileai.simulations.ingest.traces import normalize_traces

TIMEOUT_TRACE = {
    "prompt": "where is my order 4412",
    "steps": [
        {"tool": "get_order", "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}
    ],
    "final_text": "Your order shipped yesterday.",
    "reward": 0,
}


def test_canonical_row_passes_through_with_float_reward() -> None:
    (row,) = zps.load_traces([TIMEOUT_TRACE])
    assert row["prompt"] == TIMEOUT_TRACE["prompt"]
    assert row["steps"] == TIMEOUT_TRACE["steps"]
    assert row["final_text"] == "Your order shipped yesterday."
    assert row["reward"] == 0.0
    assert row["lineage"]["stages"] == ["load_traces"]


@pytest.mark.parametrize("step_key", ["tool_trace", "trace"])
@pytest.mark.parametrize("final_key", ["final", "output", "response"])
def test_aliases_for_steps_and_final(step_key: str, final_key: str) -> None:
    raw = {"prompt": "p", step_key: [{"tool": "t", "arguments": {}, "result": 1}], final_key: "ok"}
    (row,) = zps.load_traces([raw])
    assert row["steps"][0]["tool"] == "t"
    assert row["final_text"] == "ok"
    assert step_key not in row
    assert final_key not in row


def test_openai_messages_pair_calls_and_results_by_id() -> None:
    messages = [
        {"role": "system", "content": "be kind"},
        {"role": "user", "content": "refund order 7 and check order 8"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function",
                 "function": {"name": "refund", "arguments": '{"order_id": "7"}'}},
                {"id": "b", "type": "function",
                 "function": {"name": "get_order", "arguments": '{"order_id": "8"}'}},
            ],
        },
        # results arrive out of order: pairing must follow the id, not the position
        {"role": "tool", "tool_call_id": "b", "content": '{"status": "shipped"}'},
        {"role": "tool", "tool_call_id": "a", "content": "refund denied"},
        {"role": "user", "content": [{"type": "text", "text": "thanks, and the refund?"}]},
        {"role": "assistant", "content": "The refund was denied."},
    ]
    (row,) = zps.load_traces([{"messages": messages, "reward": True}])
    assert row["prompt"] == "refund order 7 and check order 8"
    tools = [s for s in row["steps"] if "tool" in s]
    assert [(s["tool"], s["call_id"], s["result"]) for s in tools] == [
        ("refund", "a", "refund denied"),
        ("get_order", "b", {"status": "shipped"}),
    ]
    assert row["steps"][-1] == {"role": "user", "content": "thanks, and the refund?"}
    assert row["final_text"] == "The refund was denied."
    assert row["messages"] == messages  # the raw conversation stays for opening_share
    assert row["reward"] == 1.0


def test_calls_without_results_are_kept_and_counted() -> None:
    messages = [
        {"role": "user", "content": "check 9"},
        {"role": "assistant", "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}
        ]},
    ]
    load = normalize_traces([{"messages": messages}])
    (row,) = load.rows
    assert row["steps"] == [{"tool": "get_order", "arguments": {}, "result": None, "call_id": "x"}]
    assert load.steps.unpaired_calls == 1
    report = zps.trace_report([{"messages": messages}])
    assert report["unanswered_calls"] == 1
    assert any("no result" in w for w in report["warnings"])


def test_other_stack_step_shapes() -> None:
    raw = {
        "input": "ping the server",
        "trace": [
            {"name": "ping", "args": '{"host": "a"}', "output": "pong"},
            {"tool_name": "ping", "input": {"host": "b"}, "observation": "Error: timed out"},
            {"function": {"name": "ping", "arguments": "not json"}, "id": "z"},
            "garbage",
        ],
    }
    load = normalize_traces([raw])
    (row,) = load.rows
    assert row["prompt"] == "ping the server"
    args = [s["arguments"] for s in row["steps"]]
    assert args == [{"host": "a"}, {"host": "b"}, {"_raw": "not json"}]
    assert load.steps.dropped == 1
    assert load.steps.bad_arguments == 1


@pytest.mark.parametrize(
    ("value", "kept"),
    [(1, 1.0), (0, 0.0), (1.0, 1.0), ("0", 0.0), ("pass", 1.0), (False, 0.0), (0.5, None),
     ("great", None), (2, None)],
)
def test_reward_kept_only_when_clean(value: object, kept: float | None) -> None:
    load = normalize_traces([{"prompt": "p", "reward": value}])
    (row,) = load.rows
    assert row.get("reward") == kept
    if kept is None:
        assert row["raw_reward"] == value
        assert load.rewards_rejected == 1


def test_score_is_read_as_the_reward_unless_a_reward_is_there() -> None:
    load = normalize_traces([{"prompt": "p", "score": 1}, {"prompt": "q", "score": 0.4},
                             {"prompt": "r", "reward": 0, "score": 1}])
    legacy, partial, both = load.rows
    assert legacy["reward"] == 1.0
    assert "score" not in legacy
    assert (partial.get("reward"), partial["raw_reward"]) == (None, 0.4)
    assert (both["reward"], both["score"]) == (0.0, 1)
    assert load.rewards_rejected == 1


def test_rows_without_ask_or_steps_are_dropped_and_counted() -> None:
    load = normalize_traces([{"final_text": "orphan answer"}, None, "x", {"prompt": "  "},
                             {"steps": [{"tool": "t"}]}])
    assert len(load.rows) == 1
    assert load.dropped == 4
    assert load.drop_reasons == {"no_ask_or_steps": 2, "not_a_dict": 2}


def test_jsonl_with_broken_line_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "prod.jsonl"
    lines = [json.dumps(TIMEOUT_TRACE), '{"prompt": "cut off', json.dumps({"prompt": "second"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = zps.load_traces(path)
    assert [r["prompt"] for r in rows] == [TIMEOUT_TRACE["prompt"], "second"]
    report = zps.trace_report(str(path))
    assert report["n_in"] == 3
    assert report["skipped_lines"] == 1
    assert report["dropped"] == 1
    assert ":2:" in report["problems"][0]


def test_bad_sources_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RowError, match="no such file"):
        zps.load_traces(tmp_path / "missing.jsonl")
    with pytest.raises(RowError, match="iterable of row dicts"):
        zps.load_traces(42)


def test_load_is_idempotent_on_its_own_output() -> None:
    once = zps.load_traces([TIMEOUT_TRACE, {"messages": [{"role": "user", "content": "hi"}]}])
    twice = zps.load_traces(once)
    assert [(r["prompt"], r["steps"], r["final_text"]) for r in twice] == [
        (r["prompt"], r["steps"], r["final_text"]) for r in once
    ]


def test_nested_inputs_and_outputs_from_other_stacks() -> None:
    rows = zps.load_traces([
        {"inputs": {"question": "cancel order 5"}, "outputs": {"answer": "Cancelled."}},
        {"inputs": {"messages": [{"role": "user", "content": "hi"},
                                 {"role": "assistant", "content": "hello"}]}},
    ])
    assert [(r["prompt"], r["final_text"]) for r in rows] == [
        ("cancel order 5", "Cancelled."), ("hi", "hello")]
    assert "inputs" not in rows[0]
    assert rows[1]["messages"][0]["content"] == "hi"


def test_content_block_and_responses_api_shapes() -> None:
    anthropic = [
        {"role": "user", "content": "where is 4412"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "tu1", "name": "get_order", "input": {"order_id": "4412"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": '{"status": "late"}'}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is late."}]},
    ]
    responses = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ping"}]},
        {"type": "function_call", "call_id": "fc1", "name": "ping", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "fc1", "output": "pong"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "pong!"}]},
    ]
    a, r = zps.load_traces([{"messages": anthropic}, {"messages": responses}])
    assert a["steps"] == [
        {"role": "assistant", "content": "Checking."},
        {"tool": "get_order", "arguments": {"order_id": "4412"}, "result": {"status": "late"},
         "call_id": "tu1"},
    ]
    assert a["final_text"] == "It is late."
    assert (r["prompt"], r["final_text"]) == ("ping", "pong!")
    assert r["steps"] == [{"tool": "ping", "arguments": {}, "result": "pong", "call_id": "fc1"}]


def test_result_objects_are_sources() -> None:
    class Held:
        def __init__(self, rows: list[dict[str, object]]) -> None:
            self.rows = rows

    assert zps.load_traces(Held([TIMEOUT_TRACE]))[0]["prompt"] == TIMEOUT_TRACE["prompt"]
