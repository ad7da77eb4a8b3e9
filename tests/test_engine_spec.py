"""Reading the agent: tool shapes, odd schema types, policy clauses, spec folders, inspect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import whileai.simulations as zps
from whileai.errors import SpecError
from whileai.simulations.agent.spec import agent_spec, normalize_tools, policy_clauses

OPENAI = {"type": "function", "function": {"name": "get_order", "description": "Look up.",
          "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                         "required": ["order_id"]}}}


def test_openai_and_bare_function_shapes_normalise_alike() -> None:
    a = normalize_tools([OPENAI])
    b = normalize_tools([OPENAI["function"]])
    assert a == b
    assert a[0].params[0].required
    assert a[0].to_openai()["function"]["parameters"]["required"] == ["order_id"]


def test_odd_schema_types_are_read_with_a_note() -> None:
    notes: list[str] = []
    tools = normalize_tools([{"name": "t", "parameters": {"type": "object", "properties": {
        "a": {"type": "dict"}, "b": {"type": "float"}, "c": {"type": "tuple"},
        "d": {"type": "any"}, "e": {"type": ["integer", "null"]}, "f": "not a dict"}}}], notes)
    types = {p.name: p.type for p in tools[0].params}
    assert types == {"a": "object", "b": "number", "c": "array", "d": "string",
                     "e": "integer", "f": "string"}
    assert len(notes) == 5  # a, b, c, d and the non-dict property; the list type is standard


def test_tool_without_a_name_is_a_spec_error_naming_its_index() -> None:
    with pytest.raises(SpecError, match=r"tools\[1\] has no name"):
        normalize_tools([OPENAI, {"type": "function", "function": {"description": "x"}}])


def test_parameters_that_are_not_an_object_schema_are_refused() -> None:
    with pytest.raises(SpecError, match="parameters must be a JSON-schema object"):
        normalize_tools([{"name": "t", "parameters": ["order_id"]}])
    with pytest.raises(SpecError, match="must be an object schema"):
        normalize_tools([{"name": "t", "parameters": {"type": "string"}}])


def test_no_tools_and_no_prompt_is_refused() -> None:
    with pytest.raises(SpecError, match="no tools and no system prompt"):
        agent_spec(tools=[], system_prompt="  ")


def test_duplicate_tool_names_are_noted_not_silently_merged() -> None:
    notes: list[str] = []
    assert len(normalize_tools([OPENAI, OPENAI], notes)) == 1
    assert "duplicate tool name" in notes[0]


def test_policy_clauses_from_bullets_sentences_and_one_huge_line() -> None:
    clauses = policy_clauses("# Policy\n- Verify identity first.\n1. Never refund twice. "
                             "Always confirm changes.\nshort")
    assert clauses == ("Verify identity first.", "Never refund twice.", "Always confirm changes.")
    huge = " ".join(f"word{i}" for i in range(3000))  # one line, no sentence ends
    cut = policy_clauses(huge)
    assert len(cut) > 10
    assert all(len(c) <= 400 for c in cut)
    assert " ".join(cut) == huge


def test_spec_folder_with_rubric_and_seed_situations(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps({
        "tools": [OPENAI], "policy": "Help with orders.",
        "situations": ["Where is order 17?", {"prompt": "Cancel order 9"}]}))
    (tmp_path / "rubric.md").write_text("Good replies cite the order status.")
    spec = agent_spec(spec=tmp_path)
    assert spec.tool_names == ("get_order",)
    assert spec.policy == "Help with orders."
    assert spec.rubric.startswith("Good replies")
    assert spec.situations == ("Where is order 17?", "Cancel order 9")


def test_spec_file_errors_say_where(tmp_path: Path) -> None:
    bad = tmp_path / "spec.json"
    bad.write_text("{\n  \"tools\": [,]\n}")
    with pytest.raises(SpecError, match=r"spec.json:2"):
        agent_spec(spec=bad)
    with pytest.raises(SpecError, match="does not exist"):
        agent_spec(spec=tmp_path / "missing")
    with pytest.raises(SpecError, match=r"no spec\.json"):
        agent_spec(spec=_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_inspect_reads_tools_and_prompt_off_an_agent() -> None:
    class Bot:
        tools = (OPENAI["function"],)
        instructions = "Be brief."

    found = zps.inspect(Bot())
    assert found["tools"][0]["function"]["name"] == "get_order"
    assert found["system_prompt"] == "Be brief."
    assert zps.inspect({"system_prompt": "x"}) == {"tools": [], "system_prompt": "x",
                                                   "notes": []}
