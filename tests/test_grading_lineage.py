"""Curriculum, stage lineage and model-spec objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai.errors import ConfigError, SpecError
from whileai.simulations.judge.specs import load_spec, stamp_spec
from whileai.simulations.measure.curriculum import curriculum, format_curriculum, retire_solved
from whileai.simulations.selection.stage import STAGES, stage_of, stage_report, stamp_stage


def graded(rates: dict[str, list[int]]) -> list[dict[str, Any]]:
    return [{"task_id": t, "reward": r} for t, rs in rates.items() for r in rs]


def test_curriculum_splits_and_orders() -> None:
    rows = [
        *graded(
            {
                "solved": [1, 1, 1, 1],
                "easy": [1, 1, 1, 0],
                "mid": [1, 1, 0, 0],
                "hard": [1, 0, 0, 0],
                "dead": [0, 0, 0, 0],
            }
        ),
        {"task_id": "x", "reward": None},
    ]
    cur = curriculum(rows, tiers=2)
    assert cur["schedule"] == ["easy", "mid", "hard"]
    assert cur["tiers"] == [["easy", "mid"], ["hard"]]
    assert cur["retired"] == ["solved"]
    assert cur["not_ready"] == ["dead"]
    assert cur["in_band"] == 3  # 0.75, 0.5 and 0.25 all sit in [0.2, 0.8]
    assert cur["pass_rates"]["hard"] == 0.25
    assert any("unjudged" in n for n in cur["notes"])
    text = format_curriculum(cur)
    assert text.startswith("5 tasks: 3 trainable")
    assert "tier 1: 2 tasks, pass rate 0.75 -> 0.50" in text
    with pytest.raises(ConfigError):
        curriculum(rows, solved=0.1, floor=0.5)


def test_retire_solved_keeps_unjudged_tasks() -> None:
    rows = [*graded({"a": [1, 1], "b": [1, 0]}), {"task_id": "c", "reward": None}]
    kept = retire_solved(rows)
    assert [r["task_id"] for r in kept] == ["b", "b", "c"]
    assert len(retire_solved(rows, solved=0.5)) == 1


def test_stage_stamping_and_report() -> None:
    rows = [{"task_id": "t1"}, {"task_id": "t2"}]
    sft = stamp_stage(rows, "sft")
    assert stage_of(sft[0]) == "sft"
    assert stage_of(rows[0]) is None
    twice = stamp_stage(stamp_stage(sft, "rl"), "sft")
    assert twice[0]["lineage"]["stages"] == ["rl", "sft"]
    ev = stamp_stage([{"task_id": "t2"}, {"task_id": "t3"}], "eval")
    rep = stage_report([*sft, *ev, {"task_id": "t9"}])
    assert rep["counts"]["sft"] == 2
    assert rep["counts"]["eval"] == 2
    assert rep["unstaged"] == 1
    assert rep["eval_and_train"] == ["t2"]
    assert rep["ok"] is False
    assert stage_report(ev)["ok"] is True
    assert STAGES == ("sft", "rm", "rl", "eval", "mid")
    with pytest.raises(ConfigError, match="stage must be one of"):
        stamp_stage(rows, "pretrain")


def test_spec_version_tracks_content(tmp_path: Path) -> None:
    data = {
        "source": "model-spec",
        "traits": [
            {
                "id": "no_hedging",
                "name": "Direct",
                "principle": "Answer plainly.",
                "authority": "dev",
            },
            {"id": "honest", "principle": "Never invent facts."},
        ],
    }
    path = tmp_path / "constitution.json"
    path.write_text(json.dumps(data))
    spec = load_spec(path)
    assert spec.behaviors() == ["no_hedging", "honest"]
    assert spec == load_spec(data)
    edited = json.loads(json.dumps(data))
    edited["traits"][1]["principle"] = "Never invent facts or numbers."
    assert load_spec(edited).version != spec.version
    rows = stamp_spec([{"prompt": "p"}], spec)
    assert rows[0]["spec_version"] == spec.version
    assert rows[0]["lineage"]["spec"] == {"version": spec.version, "source": "model-spec"}
    assert str(spec) == f"Spec(model-spec @ {spec.version}, 2 traits)"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"traits": "x"}, "expected"),
        ({"traits": [{"name": "no id"}]}, r"traits\[0\] needs"),
        ({"traits": [{"id": "a"}, {"id": "a"}]}, "duplicate"),
    ],
)
def test_bad_specs_are_spec_errors(bad: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        load_spec(bad)


def test_unreadable_spec_file(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{not json")
    with pytest.raises(SpecError, match=r"c\.json"):
        load_spec(path)
