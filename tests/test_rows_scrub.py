"""Row helpers: scrub drops teacher-only data everywhere, conversation rebuilds the chat."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import whileai.simulations as zps
from whileai.errors import RowError


def _keys_anywhere(value: Any) -> set[str]:
    """Every dict key at any depth, JSON texts included."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys_anywhere(v)}
    if isinstance(value, (list, tuple)):
        return {k for v in value for k in _keys_anywhere(v)}
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return _keys_anywhere(json.loads(value))
        except ValueError:
            return set()
    return set()


def _leaky_row() -> dict[str, Any]:
    secret = {"principle": "never refund twice", "hidden_state": {"refunded": True},
              "reference": "deny", "rubric": ["cite policy"]}
    return {
        "schema_version": "1",
        "prompt": "Refund order 4412",
        "privileged": secret,
        "vector": [0.1, 0.2],
        "world_state": {"orders": [{"id": "4412", "vector": [1.0], "privileged": secret}]},
        "steps": [
            {"tool": "get_order", "arguments": {"order_id": "4412"}, "call_id": "c1",
             "result": {"status": "refunded", "privileged": secret}},
            {"tool": "lookup", "arguments": "{\"q\": \"4412\"}",
             "result": json.dumps({"hits": 1, "privileged": {"reference": "deny"}})},
            {"role": "assistant", "content": "Already refunded."},
        ],
        "messages": [{"role": "system", "content": "You are the refunds agent."},
                     {"role": "tool", "content": json.dumps({"privileged": secret})}],
        "final_text": "It was already refunded.",
        "info": {"carried": {"privileged": secret, "keep": 1}},
    }


def test_scrub_removes_privileged_and_vector_at_every_depth_including_json_texts() -> None:
    row = _leaky_row()
    original = copy.deepcopy(row)
    cleaned = zps.scrub(row)
    assert row == original, "scrub must not change its input"
    assert not {"privileged", "vector", "principle", "hidden_state", "rubric"} & _keys_anywhere(
        cleaned
    )
    assert "never refund twice" not in json.dumps(cleaned)
    assert cleaned["info"] == {"carried": {"keep": 1}}
    assert cleaned["steps"][0]["result"] == {"status": "refunded"}
    assert json.loads(cleaned["steps"][1]["result"]) == {"hits": 1}
    assert cleaned["world_state"] == {"orders": [{"id": "4412"}]}


def test_scrub_rebuilds_messages_from_the_cleaned_steps_keeping_the_system_prompt() -> None:
    cleaned = zps.scrub(_leaky_row())
    assert cleaned["messages"] == zps.conversation(
        cleaned, system_prompt="You are the refunds agent."
    )
    assert cleaned["messages"][0] == {"role": "system", "content": "You are the refunds agent."}
    assert "privileged" not in json.dumps(cleaned["messages"])


def test_scrub_leaves_a_clean_json_text_byte_for_byte() -> None:
    text = '{"a":1,  "b":"vector-free"}'
    row = {"prompt": "x", "steps": [{"tool": "t", "result": text}]}
    assert zps.scrub(row)["steps"][0]["result"] == text


def test_scrub_keeps_messages_when_the_row_has_no_steps() -> None:
    row = {"prompt": "x", "messages": [{"role": "user", "content": "x", "vector": [1]}]}
    assert zps.scrub(row) == {"prompt": "x", "messages": [{"role": "user", "content": "x"}]}


leaf = st.none() | st.integers() | st.text(max_size=5)
key = st.sampled_from(["privileged", "vector", "a", "b", "result", "reference"])
nested = st.recursive(
    leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(key, inner, max_size=3),
    max_leaves=12,
)


@settings(deadline=None, max_examples=200)
@given(st.dictionaries(key, nested, max_size=4))
def test_scrub_never_leaves_a_dropped_key(extra: dict[str, Any]) -> None:
    row = {"prompt": "x", **extra}
    cleaned = zps.scrub(row)
    assert not {"privileged", "vector"} & _keys_anywhere(cleaned)
    assert zps.scrub(cleaned) == cleaned


def test_conversation_groups_one_turns_tool_calls_and_answers_each() -> None:
    row = {
        "prompt": "Check 1 and 2",
        "steps": [
            {"role": "assistant", "content": "Checking both."},
            {"tool": "get_order", "arguments": {"id": "1"}, "result": {"ok": True}},
            {"tool": "get_order", "arguments": {"id": "2"}, "call_id": "abc", "result": "late"},
            {"role": "user", "content": "and the refund?"},
            {"tool": "refund", "arguments": None, "error": "denied"},
        ],
        "final_text": "Refund denied.",
    }
    assert zps.conversation(row) == [
        {"role": "user", "content": "Check 1 and 2"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": "get_order", "arguments": '{"id": "1"}'}},
            {"id": "abc", "type": "function",
             "function": {"name": "get_order", "arguments": '{"id": "2"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_0", "content": '{"ok": true}'},
        {"role": "tool", "tool_call_id": "abc", "content": "late"},
        {"role": "user", "content": "and the refund?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_2", "type": "function", "function": {"name": "refund",
                                                               "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"error": "denied"}'},
        {"role": "assistant", "content": "Refund denied."},
    ]


def test_conversation_splits_turns_by_the_turn_key() -> None:
    row = {"prompt": "p", "steps": [
        {"tool": "a", "turn": 0, "result": 1}, {"tool": "b", "turn": 1, "result": 2},
    ]}
    roles = [m["role"] for m in zps.conversation(row)]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]


def test_conversation_starts_a_turn_at_each_model_calls_fields_when_there_is_no_turn_key() -> None:
    row = {"prompt": "p", "steps": [
        {"tool": "a", "input_tokens": 10, "result": 1}, {"tool": "b", "result": 2},
        {"tool": "c", "output_tokens": 5, "result": 3},
    ]}
    calls = [[c["function"]["name"] for c in m["tool_calls"]]
             for m in zps.conversation(row) if "tool_calls" in m]
    assert calls == [["a", "b"], ["c"]]
    with_turns = {"prompt": "p", "steps": [{**s, "turn": 0} for s in row["steps"]]}
    assert [len(m["tool_calls"]) for m in zps.conversation(with_turns) if "tool_calls" in m] == [3]


def test_conversation_adds_the_system_prompt_and_does_not_repeat_the_final_text() -> None:
    row = {"prompt": "hi", "steps": [{"role": "assistant", "content": "bye"}], "final_text": "bye"}
    assert zps.conversation(row, system_prompt="S") == [
        {"role": "system", "content": "S"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "bye"},
    ]


def test_conversation_does_not_share_content_objects_with_the_row() -> None:
    parts = [{"type": "text", "text": "hi"}]
    row = {"prompt": "p", "steps": [{"role": "user", "content": parts}]}
    messages = zps.conversation(row)
    messages[1]["content"].append({"type": "text", "text": "x"})
    assert parts == [{"type": "text", "text": "hi"}]


def test_conversation_names_a_step_that_is_not_a_dict() -> None:
    with pytest.raises(RowError, match=r"steps\[1\]: expected an object"):
        zps.conversation({"prompt": "p", "steps": [{"tool": "a"}, "oops"]})


def test_task_key_prefers_scenario_then_task_then_prompt() -> None:
    assert zps.task_key({"scenario_id": "sc-1", "task_id": "t", "prompt": "p"}) == "sc-1"
    assert zps.task_key({"scenario_id": "", "task_id": "t", "prompt": "p"}) == "t"
    assert zps.task_key({"task_id": None, "prompt": "p"}) == "p"
    with pytest.raises(RowError, match=r"rows\[4\] has no task key.*final_text"):
        zps.task_key({"final_text": "x"}, where="rows[4]")
    with pytest.raises(RowError, match=r"rows\[5\]: expected a row dict, got list"):
        zps.task_key([], where="rows[5]")  # type: ignore[arg-type]


def test_export_row_scrubs_and_stamps_the_version() -> None:
    old = {"prompt": "hi", "privileged": {"reference": "x"}, "reward": 1.0}
    exported = zps.export_row(old)
    assert exported == {"prompt": "hi", "reward": 1.0, "schema_version": "1"}
    assert zps.row_problems(exported) == []
    assert "schema_version" not in old


def test_check_rows_counts_invalid_rows_per_field_and_versions() -> None:
    report = zps.check_rows([
        {"prompt": "a", "schema_version": "1"},
        {"prompt": "b", "reward": "x", "steps": [{"tool": "t", "call_id": 1}]},
        {"prompt": "c", "reward": "y"},
        [1],
    ], examples=1)
    assert (report["rows"], report["valid"], report["invalid"]) == (4, 1, 3)
    assert report["by_field"] == {"reward": 2, "steps": 1, "row": 1}
    assert report["versions"] == {"1": 1, "0": 2}
    assert [e["row"] for e in report["examples"]] == [1]
    text = zps.format_row_check(report)
    assert text.splitlines()[0] == "rows 4: 1 valid, 3 invalid (schema versions: 0=2, 1=1)"
    assert "row 1: field `steps[0].call_id`" in text
    assert json.loads(json.dumps(report)) == report


def test_cli_rows_check_and_export(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from whileai import cli
    from whileai.commands import rows as rows_command

    assert "rows" in cli.COMMAND_MODULES
    parser = argparse.ArgumentParser(prog="whileai")
    rows_command.register(parser.add_subparsers(dest="command"))

    def main(argv: list[str]) -> int:
        args = parser.parse_args(argv)
        code: int = args.func(args)
        return code

    source = tmp_path / "in.jsonl"
    zps.write_jsonl(source, [{"prompt": "a", "privileged": {"reference": "x"}}])
    assert main(["rows", "check", str(source)]) == 0
    target = tmp_path / "out.jsonl"
    assert main(["rows", "export", str(source), str(target)]) == 0
    assert zps.load_rows(target) == [{"prompt": "a", "schema_version": "1"}]
    source.write_text('{"prompt": "a", "reward": "high"}\nnot json\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["rows", "check", str(source)]) == 1
    out = capsys.readouterr().out
    assert "1 invalid" in out
    assert "in.jsonl:2: not valid JSON" in out


step_strategy = st.one_of(
    st.fixed_dictionaries(
        {"tool": st.sampled_from(["a", "b"])},
        optional={"result": leaf, "call_id": st.sampled_from(["x", "y", "z"]),
                  "turn": st.integers(0, 2), "input_tokens": st.integers(0, 9),
                  "arguments": st.dictionaries(st.sampled_from(["k"]), leaf)},
    ),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                           "content": st.text(max_size=4)}),
)


@settings(deadline=None, max_examples=300)
@given(st.lists(step_strategy, max_size=8), st.none() | st.text(max_size=4))
def test_conversation_answers_every_call_right_after_its_assistant_message(
    steps: list[dict[str, Any]], final: str | None
) -> None:
    row = {"prompt": "p", "steps": steps, "final_text": final}
    messages = zps.conversation(row)
    assert messages[0] == {"role": "user", "content": "p"}
    n_tool_steps = sum("tool" in s for s in steps)
    assert sum(m["role"] == "tool" for m in messages) == n_tool_steps
    assert sum(len(m.get("tool_calls", [])) for m in messages) == n_tool_steps
    i = 0
    while i < len(messages):
        calls = messages[i].get("tool_calls")
        if calls:
            answers = messages[i + 1 : i + 1 + len(calls)]
            assert [a["role"] for a in answers] == ["tool"] * len(calls)
            assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
            for call in calls:
                json.loads(call["function"]["arguments"])
            i += 1 + len(calls)
        else:
            assert messages[i]["role"] != "tool", "a tool message must answer a call"
            i += 1
    if final:
        assert messages[-1]["role"] == "assistant"
        assert messages[-1]["content"] == final


def test_a_new_reply_does_not_join_the_text_of_the_reply_before() -> None:
    text_then_call = [{"role": "assistant", "content": "Checking.", "input_tokens": 5},
                      {"tool": "a", "input_tokens": 7, "result": 1}]
    roles = [m["role"] for m in zps.conversation({"prompt": "p", "steps": text_then_call})]
    assert roles == ["user", "assistant", "assistant", "tool"]
    same_reply = [{"role": "assistant", "content": "Checking.", "input_tokens": 5},
                  {"tool": "a", "result": 1}]
    merged = zps.conversation({"prompt": "p", "steps": same_reply})
    assert [m["role"] for m in merged] == ["user", "assistant", "tool"]
    assert merged[1]["content"] == "Checking."
    turns = [{"role": "assistant", "content": "t0", "turn": 0}, {"tool": "a", "turn": 1},
             {"tool": "b", "turn": 1}]
    by_turn = zps.conversation({"prompt": "p", "steps": turns})
    assert [len(m.get("tool_calls", [])) for m in by_turn] == [0, 0, 2, 0, 0]
