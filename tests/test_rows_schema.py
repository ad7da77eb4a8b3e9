"""Row schema v1: typed views round-trip, checks name the field, the JSON Schema agrees."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import whileai.simulations as zps
from whileai.errors import RowError
from whileai.rows import schema
from whileai.rows.fields import FIELD_KINDS

# ---- a generator of valid rows (every known key optional, nulls allowed, unknown keys kept) ----

text = st.text(max_size=12)
name = st.text(alphabet="abcdefghij_", min_size=1, max_size=8)
finite = st.floats(allow_nan=False, allow_infinity=False, width=32)
count = st.integers(min_value=0, max_value=10_000)
json_leaf = st.none() | st.booleans() | st.integers(-5, 5) | finite | text
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(name, inner, max_size=3),
    max_leaves=6,
)
json_object = st.dictionaries(name, json_value, max_size=3)
tool_step = st.fixed_dictionaries(
    {"tool": name},
    optional={"arguments": json_object, "result": json_value, "call_id": name,
              "fault": name, "input_tokens": count, "logprob": finite},
)
chat_step = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": text})
calibration = st.fixed_dictionaries(
    {},
    optional={"pass_rate": st.floats(0, 1), "k": count, "policy": text, "mean_kl": finite,
              "ci95": st.tuples(finite, finite).map(list), "gate": text,
              "n_pass": st.none()},
)
values: dict[str, Any] = {
    "scenario_id": name.map(lambda s: "sc-" + s), "task_id": name, "prompt": text,
    "scenario_dimensions": json_object, "world_state": json_object,
    "faults": st.lists(st.fixed_dictionaries({"tool": name, "kind": name, "call": count}),
                       max_size=2),
    "privileged": json_object, "rollout_index": count,
    "steps": st.lists(tool_step | chat_step, max_size=4), "final_text": text,
    "messages": st.lists(chat_step, max_size=3), "seeded": st.lists(text, max_size=2),
    "usage": st.fixed_dictionaries({"input_tokens": count, "output_tokens": count}),
    "logprob": finite, "n_tokens": count, "model_version": text, "sampling": json_object,
    "truncated": st.booleans(), "finish_reason": text, "reward": finite, "reason": text,
    "judge_name": text, "judge_status": st.sampled_from(["ok", "error", "timeout"]),
    "judge_meta": json_object, "lineage": st.fixed_dictionaries({"source": text}),
    "run_fingerprint": st.fixed_dictionaries({"id": name}, optional={"mode": name}),
    "label_source": text, "gold_reward": finite,
    "markers": st.dictionaries(name, st.none() | finite, max_size=3), "calibration": calibration,
}
assert set(values) == set(FIELD_KINDS), "the generator must cover every known field"
optional = {key: strategy | st.none() for key, strategy in values.items() if key != "prompt"}
unknown = st.dictionaries(name.map(lambda s: "x_" + s), json_value, max_size=2)


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    row: dict[str, Any] = draw(st.fixed_dictionaries({"prompt": name}, optional=optional))
    row.update(draw(unknown))
    if draw(st.booleans()):
        row["schema_version"] = "1"
    return row


@settings(deadline=None, max_examples=150)
@given(rows())
def test_to_row_inverts_from_row_on_every_valid_row(row: dict[str, Any]) -> None:
    assert zps.row_problems(row) == []
    parts = zps.from_row(row)
    assert zps.to_row(parts) == row
    assert zps.to_row(*parts) == row
    assert json.loads(json.dumps(zps.to_row(parts))) == row


@functools.lru_cache(maxsize=1)
def _schema_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(zps.row_schema())


@settings(deadline=None, max_examples=100)
@given(rows())
def test_the_packaged_json_schema_accepts_every_generated_row(row: dict[str, Any]) -> None:
    _schema_validator().validate(row)


def test_from_row_fills_the_four_objects() -> None:
    row = {
        "schema_version": "1", "scenario_id": "sc-0123456789", "prompt": "Where is 4412?",
        "scenario_dimensions": {"tone": "polite"}, "privileged": {"reference": "shipped"},
        "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"}, "result": {"ok": 1}}],
        "final_text": "It shipped.", "reward": 1.0, "judge_status": "ok",
        "markers": {"honest_claims": 1.0, "no_hedging": 0.0, "refund_ok": None},
        "calibration": {"pass_rate": 0.5, "k": 4, "ci95": [0.1, 0.9], "policy": "p"},
        "quality": 0.7,
    }
    task, rollout, judgment, markers = zps.from_row(row)
    assert task.dimensions == {"tone": "polite"}
    assert task.privileged == {"reference": "shipped"}
    assert rollout.steps is not None
    assert rollout.steps[0]["tool"] == "get_order"
    assert rollout.schema_version == "1"
    assert rollout.extra["quality"] == 0.7
    assert rollout.extra["calibration"] == zps.Calibration(
        pass_rate=0.5, k=4, ci95=(0.1, 0.9), policy="p"
    )
    assert judgment == zps.Judgment(reward=1.0, judge_status="ok")
    assert [(m.name, m.family) for m in markers] == [
        ("honest_claims", "trace"), ("no_hedging", "style"), ("refund_ok", "judge")
    ]


def test_from_row_copies_so_the_row_cannot_change_behind_the_objects() -> None:
    row = {"prompt": "hi", "world_state": {"orders": [1]}}
    task = zps.from_row(row).task
    row["world_state"]["orders"].append(2)
    assert task.world_state == {"orders": [1]}


def test_unjudged_row_has_no_judgment_and_keeps_its_null_reward() -> None:
    row = {"prompt": "hi", "reward": None}
    parts = zps.from_row(row)
    assert parts.judgment is None
    assert zps.to_row(parts) == row


def test_to_row_from_new_objects_stamps_the_current_version() -> None:
    row = zps.to_row(zps.Task(prompt="hi", faults=({"tool": "t", "kind": "timeout", "call": 0},)),
                     zps.Rollout(seeded=("skip",)),
                     zps.Judgment(reward=0.0),
                     [zps.Marker(name="answered", value=1.0)])
    assert row == {"schema_version": "1", "prompt": "hi", "faults": [
        {"tool": "t", "kind": "timeout", "call": 0}], "seeded": ["skip"], "reward": 0.0,
        "markers": {"answered": 1.0}}
    assert zps.to_row(zps.Task(prompt="hi"))["schema_version"] == zps.SCHEMA_VERSION == "1"


def test_typed_fields_win_over_extra_and_calibration_is_written_as_a_dict() -> None:
    parts = zps.from_row({"prompt": "hi", "reward": None})
    judged = parts._replace(judgment=zps.Judgment(reward=1.0))
    rollout = dataclasses.replace(parts.rollout, extra={
        **parts.rollout.extra, "calibration": zps.Calibration(pass_rate=0.25, k=4)})
    row = zps.to_row(judged.task, rollout, judged.judgment)
    assert row["reward"] == 1.0
    assert row["calibration"] == {"pass_rate": 0.25, "k": 4}


def test_to_row_refuses_a_repeated_marker_and_extra_arguments_with_parts() -> None:
    with pytest.raises(RowError, match="'answered' is given twice"):
        zps.to_row(zps.Task(prompt="x"), None, None,
                   [zps.Marker(name="answered", value=1.0), zps.Marker(name="answered", value=0.0)])
    with pytest.raises(TypeError, match="takes no other arguments"):
        zps.to_row(zps.from_row({"prompt": "x"}), zps.Rollout())


def test_calibration_of_reads_the_stamp_typed() -> None:
    assert zps.calibration_of({"prompt": "x"}) is None
    stamp = zps.calibration_of({"calibration": {"pass_rate": 1.0, "k": 8, "ci95": [0.6, 1.0]}})
    assert stamp is not None
    assert stamp.k == 8
    assert stamp.ci95 == (0.6, 1.0)
    with pytest.raises(RowError, match=r"calibration\.pass_rate.*\[0, 1\]"):
        zps.calibration_of({"calibration": {"pass_rate": 1.5}})


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"prompt": "x", "reward": "high"}, "`reward`"),
        ({"prompt": "x", "reward": True}, "`reward`"),
        ({"prompt": "x", "reward": float("nan")}, "`reward`: nan is not a finite number"),
        ({"prompt": 3, "task_id": "t1"}, "`prompt`"),
        ({"prompt": "x", "rollout_index": -1}, "`rollout_index`"),
        ({"prompt": "x", "steps": {"tool": "t"}}, "`steps`: expected a list"),
        ({"prompt": "x", "steps": [{"tool": "t", "call_id": 5}]}, "`steps[0].call_id`"),
        ({"prompt": "x", "steps": [{"tool": "t"}, {"note": 1}]}, "`steps[1]`: a step needs"),
        ({"prompt": "x", "steps": [{"tool": "t", "arguments": [1]}]}, "`steps[0].arguments`"),
        ({"prompt": "x", "messages": [{"content": "hi"}]}, "`messages[0].role`"),
        ({"prompt": "x", "faults": [{"tool": "t", "call": "1"}]}, "`faults[0].call`"),
        ({"prompt": "x", "seeded": ["a", 2]}, "`seeded[1]`"),
        ({"prompt": "x", "markers": {"answered": "yes"}}, "`markers.answered`"),
        ({"prompt": "x", "markers": [1.0]}, "`markers`"),
        ({"prompt": "x", "calibration": {"k": 2.5}}, "`calibration.k`"),
        ({"prompt": "x", "calibration": {"ci95": [0.1]}}, "`calibration.ci95`"),
        ({"prompt": "x", "usage": {"input_tokens": "10"}}, "`usage.input_tokens`"),
        ({"prompt": "x", "lineage": {"source": 1}}, "`lineage.source`"),
        ({"prompt": "x", "truncated": "no"}, "`truncated`"),
        ({"prompt": "x", "world_state": []}, "`world_state`"),
        ({"prompt": "x", "schema_version": 1}, "`schema_version`"),
        ({"prompt": "x", "schema_version": "2"}, "`schema_version`"),
        ({"final_text": "x"}, "no task key"),
        ({"prompt": ""}, "no task key"),
    ],
)
def test_each_broken_field_is_named(row: dict[str, Any], field: str) -> None:
    problems = zps.row_problems(row)
    assert len(problems) == 1
    assert field in problems[0]
    with pytest.raises(RowError, match="rows\\[7\\] breaks row schema v1") as caught:
        zps.validate(row, where="rows[7]")
    assert field in str(caught.value)
    with pytest.raises(RowError):
        zps.from_row(row)
    jsonschema = pytest.importorskip("jsonschema")
    if "nan" not in field:  # the JSON Schema cannot see a NaN: JSON has none
        assert not jsonschema.Draft202012Validator(zps.row_schema()).is_valid(row)


def test_a_non_dict_row_is_one_problem() -> None:
    assert zps.row_problems([1, 2]) == ["a row must be an object (dict), got list [1, 2]"]
    with pytest.raises(RowError, match="must be an object"):
        zps.validate("prompt")


def test_all_problems_are_reported_together() -> None:
    problems = zps.row_problems({"prompt": "x", "reward": "a", "reason": 1, "n_tokens": -2})
    assert len(problems) == 3


def test_schema_version_of_reads_stamps_and_treats_missing_as_zero() -> None:
    assert zps.schema_version_of({"prompt": "x"}) == "0"
    assert zps.schema_version_of({"schema_version": "1"}) == "1"
    with pytest.raises(RowError, match="upgrade whileai"):
        zps.schema_version_of({"schema_version": "9"})


def test_version_zero_rows_load_by_shape_and_round_trip_unstamped() -> None:
    old = {"prompt": "hi", "steps": [], "final_text": "ok", "reward": 1}
    parts = zps.from_row(old)
    assert parts.rollout.schema_version is None
    assert parts.rollout.final_text == "ok"
    assert parts.judgment == zps.Judgment(reward=1)
    assert zps.to_row(parts) == old
    assert "schema_version" not in zps.to_row(parts)


def test_the_json_schema_lists_every_checked_field_and_allows_extra_keys() -> None:
    loaded = zps.row_schema()
    assert loaded["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert loaded["additionalProperties"] is True
    assert set(FIELD_KINDS) | {"schema_version"} == set(loaded["properties"])
    loaded["properties"].clear()
    assert zps.row_schema()["properties"], "row_schema() must hand out a fresh copy"


def test_the_json_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(zps.row_schema())


def test_docs_rows_md_mentions_every_field() -> None:
    docs = (Path(schema.__file__).resolve().parents[3] / "docs" / "rows.md").read_text("utf-8")
    missing = [key for key in FIELD_KINDS if f"`{key}`" not in docs]
    assert missing == []


@settings(deadline=None, max_examples=200)
@given(rows(), st.sampled_from(sorted(FIELD_KINDS)), st.one_of(
    json_value, json_object, st.integers(-2, 3).map(float),
    st.lists(st.one_of(json_object, tool_step, chat_step, json_value,
                       st.fixed_dictionaries({"tool": json_value, "role": json_value})),
             max_size=3),
    st.dictionaries(name, st.one_of(json_value, st.lists(json_value, max_size=3)), max_size=3),
))
def test_the_json_schema_and_row_problems_agree_on_broken_fields(
    row: dict[str, Any], key: str, value: Any
) -> None:
    row[key] = value
    valid_by_schema = _schema_validator().is_valid(row)
    assert valid_by_schema == (zps.row_problems(row) == []), zps.row_problems(row)


@pytest.mark.parametrize("module", ["schema", "outbound", "jsonl", "fields", "__init__"])
def test_docstring_examples_of_the_row_modules_hold(
    module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import doctest
    import importlib
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # io examples write temp files
    result = doctest.testmod(importlib.import_module(
        "whileai.rows" if module == "__init__" else f"whileai.rows.{module}"))
    assert result.attempted > 0
    assert result.failed == 0
