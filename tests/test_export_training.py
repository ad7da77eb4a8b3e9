"""Training rows: loss masks, unroll, tool-output cap, wire shapes, scrubbing, the call gate."""

from __future__ import annotations

import json

import pytest

import whileai.simulations as zps
from _tools import TOOLS

TWO_TURNS = {
    "scenario_id": "sc-0000000001", "prompt": "Where is 4412?",
    "steps": [
        {"tool": "get_order", "arguments": {"order_id": "4412"}, "result": {"status": "late"},
         "turn": 0},
        {"role": "assistant", "content": "Checking the other one too.", "turn": 1},
        {"tool": "get_order", "arguments": {"order_id": "9"}, "result": {"status": "ok"},
         "turn": 1},
    ],
    "final_text": "4412 is late, 9 is fine.",
    "privileged": {"reference": "deny"},
}


def test_same_function_object_and_loss_mask_per_message() -> None:
    assert zps.export_dataset is zps.export_training
    [row] = zps.training_rows([TWO_TURNS], system_prompt="Be brief.", tools=TOOLS)
    roles = [m["role"] for m in row["messages"]]
    assert len(row["loss_mask"]) == len(roles)
    assert row["loss_mask"] == [int(r == "assistant") for r in roles]
    assert roles[0] == "system"
    assert row["prompt"] == "Where is 4412?"


def test_final_mask_and_unroll() -> None:
    [final] = zps.training_rows([TWO_TURNS], mask_mode="final")
    assert sum(final["loss_mask"]) == 1
    assert final["loss_mask"][-1] == 1
    unrolled = zps.training_rows([TWO_TURNS], unroll=True)
    n_agent = sum(m["role"] == "assistant" for m in final["messages"])
    assert len(unrolled) == n_agent == 3
    for k, sample in enumerate(unrolled):
        assert sample["messages"][-1]["role"] == "assistant"
        assert sample["loss_mask"] == [0] * (len(sample["messages"]) - 1) + [1]
        assert sample["unroll_index"] == k
    assert unrolled[-1]["messages"] == final["messages"]


def test_report_counts_and_tool_output_cap(tmp_path: object) -> None:
    long = dict(TWO_TURNS, steps=[dict(TWO_TURNS["steps"][0], result="x" * 500)])
    out = tmp_path / "sft.jsonl"  # type: ignore[operator]
    report = zps.export_dataset([long, {"prompt": "no reply"}], out, max_tool_output_chars=100)
    assert report["rows_in"] == 2
    assert report["rows_out"] == 1
    assert report["skipped"] == {"no_user_turn": 0, "no_agent_turn": 1}
    assert report["truncated_tool_messages"] == 1
    assert report["truncated_chars"] == 400
    [row] = zps.load_rows(out)
    tool = next(m for m in row["messages"] if m["role"] == "tool")
    assert tool["content"] == "x" * 100 + "[... 400 chars of tool output truncated]"
    assert row["truncated_tool_outputs"] == 1
    assert report["trained_messages"] + report["masked_messages"] == len(row["loss_mask"])
    assert "400 chars cut" in zps.format_export_report(report)


def test_openai_and_trl_wire_shapes() -> None:
    [openai] = zps.training_rows([TWO_TURNS], tools=TOOLS)
    [trl] = zps.training_rows([TWO_TURNS], tools=TOOLS, format="trl")
    call_o = openai["messages"][1]["tool_calls"][0]
    call_t = trl["messages"][1]["tool_calls"][0]
    assert json.loads(call_o["function"]["arguments"]) == {"order_id": "4412"}
    assert call_t["function"]["arguments"] == {"order_id": "4412"}
    assert openai["messages"][2]["tool_call_id"] == call_o["id"]
    assert "prompt" not in trl
    assert trl["prompt_text"] == "Where is 4412?"
    assert trl["tools"] == TOOLS


@pytest.mark.parametrize("fmt", ["openai", "trl"])
def test_roundtrip_gate_names_encoding_and_catches_bad_arguments(fmt: str) -> None:
    bad = {"prompt": "p", "steps": [{"tool": "get_order", "arguments": "{not json"}],
           "final_text": "done"}
    _, report = zps.export.training._build([TWO_TURNS, bad], format=fmt)
    gate = report["tool_call_roundtrip"]
    assert gate["encoding"] == ("json_string" if fmt == "openai" else "dict")
    assert gate["checked"] == 3
    assert gate["invalid"] == 1
    assert gate["examples"][0]["row"] == 1


@pytest.mark.parametrize("fmt", ["openai", "trl"])
def test_privileged_never_reaches_the_file(tmp_path: object, fmt: str) -> None:
    secret = "HIDDEN-ANSWER-7781"
    deep = {"data": [{"meta": {"privileged": {"reference": secret}}, "ok": True}]}
    row = dict(TWO_TURNS, privileged={"reference": secret},
               steps=[{"tool": "get_order", "arguments": {"order_id": "1"},
                       "result": json.dumps({"privileged": secret, "wrap": deep})},
                      {"tool": "get_order", "arguments": {"order_id": "2"}, "result": deep}],
               messages=[{"role": "system", "content": "s"},
                         {"role": "tool", "content": json.dumps({"privileged": secret})}])
    out = tmp_path / "sft.jsonl"  # type: ignore[operator]
    zps.export_dataset([row], out, format=fmt, unroll=True)
    text = out.read_text()
    assert secret not in text
    assert "privileged" not in text
    tools = [m["content"] for r in zps.load_rows(out) for m in r["messages"] if m["role"] == "tool"]
    assert any('"ok": true' in content for content in tools)  # the rest of the result survives


def test_unknown_keyword_and_bad_choice() -> None:
    with pytest.raises(TypeError, match="valid keywords: rows, system_prompt"):
        zps.training_rows([TWO_TURNS], mask="final")
    with pytest.raises(ValueError, match="'openai', 'trl'"):
        zps.training_rows([TWO_TURNS], format="sharegpt")
    with pytest.raises(ValueError, match="max_tool_output_chars"):
        zps.training_rows([TWO_TURNS], max_tool_output_chars=-1)


def test_engine_rows_and_run_defaults() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                        simulator=False, budget=8, progress=False)
    rows = zps.training_rows(data, format="trl")
    assert rows
    assert all(r["messages"][0] == {"role": "system", "content": "Help."} for r in rows)
    assert all(r["tools"][0]["function"]["name"] == "get_order" for r in rows)
    assert all("privileged" not in json.dumps(r) for r in rows)
