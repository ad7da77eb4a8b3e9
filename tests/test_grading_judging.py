"""The judge contract: statuses, markers, scale, timeouts, lineage, ScoredData views."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest

from whileai.errors import ConfigError, JudgeError
from whileai.simulations.judge.judging import evaluate, judge_row, run_judge
from whileai.simulations.judge.scored import ScoredData

ROW = {"scenario_id": "sc-0000000001", "prompt": "where is 4412?", "final_text": "It shipped."}


@pytest.mark.parametrize(
    ("result", "status", "reward"),
    [
        (1, "ok", 1.0),
        (0.7, "ok", 0.7),
        ({"reward": 0}, "ok", 0.0),
        (True, "ok", 1.0),
        (None, "missing_reward", None),
        ({"reason": "no reward key"}, "missing_reward", None),
        ({"reward": None}, "missing_reward", None),
        ("1", "invalid_result", None),
        ([1], "invalid_result", None),
        (math.nan, "invalid_result", None),
        (math.inf, "invalid_result", None),
        (3, "invalid_result", None),
        (-0.5, "invalid_result", None),
        ({"reward": "pass"}, "invalid_result", None),
    ],
)
def test_every_result_shape_maps_to_a_status(result: Any, status: str, reward: Any) -> None:
    out = judge_row(ROW, lambda row: result)
    assert out["judge_status"] == status
    assert out["reward"] == reward
    if status != "ok":
        assert out["reason"]  # says why


def test_bool_rewards_are_noted() -> None:
    assert judge_row(ROW, lambda row: False)["judge_meta"]["coerced"] == "bool"


def test_a_raising_judge_is_an_error_row_not_a_crash() -> None:
    def judge(row: dict) -> float:
        raise KeyError("final_text")

    out = judge_row(ROW, judge)
    assert out["judge_status"] == "error"
    assert out["reward"] is None
    assert "KeyError" in out["reason"]


def test_a_hung_judge_times_out_and_is_abandoned() -> None:
    release = threading.Event()

    def judge(row: dict) -> int:
        release.wait(30)
        return 1

    try:
        scored = run_judge([ROW, dict(ROW, prompt="b")], judge, timeout=0.05)
    finally:
        release.set()
    assert [r["judge_status"] for r in scored.rows] == ["timeout", "timeout"]
    assert all(r["reward"] is None for r in scored.rows)
    assert len(scored.unjudged()) == 2


def test_a_judge_that_keeps_timing_out_is_given_up_on() -> None:
    release = threading.Event()
    calls = []

    def judge(row: dict) -> int:
        calls.append(row["prompt"])
        release.wait(30)
        return 1

    rows = [dict(ROW, prompt=str(i)) for i in range(6)]
    try:
        scored = run_judge(rows, judge, timeout=0.02, give_up_after=2, version="j9")
    finally:
        release.set()
    assert len(calls) == 2
    assert [r["judge_status"] for r in scored.rows] == ["timeout"] * 6
    assert "2 rows in a row" in scored.rows[-1]["reason"]
    assert scored.rows[-1]["judge_meta"]["version"] == "j9"


def test_dict_fields_land_where_the_contract_says() -> None:
    row = dict(ROW, markers={"old": 0.0})
    out = judge_row(
        row,
        lambda r: {
            "reward": 0.5,
            "reason": "half right",
            "markers": {"grounded": 1, "bad": "x"},
            "failure_class": "wrong_tool",
            "model": "judge-7b",
        },
        version="v3",
        name="my-judge",
    )
    assert out["reason"] == "half right"
    assert out["markers"] == {"old": 0.0, "grounded": 1.0}
    assert out["judge_meta"]["dropped_markers"] == ["bad"]
    assert out["failure_class"] == "wrong_tool"
    assert out["judge_meta"]["model"] == "judge-7b"
    assert out["judge_meta"]["version"] == "v3"
    assert out["judge_name"] == "my-judge"
    assert out["lineage"]["source"] == "grade"
    assert row["markers"] == {"old": 0.0}  # input untouched


def test_likert_scale_keeps_rating_and_maps_reward() -> None:
    ratings = {"a": 1, "b": 5, "c": 3}
    rows = [dict(ROW, prompt=p) for p in "abc"]
    scored = run_judge(rows, lambda r: ratings[r["prompt"]], scale=(1, 5))
    assert [r["reward"] for r in scored.rows] == [0.0, 1.0, 0.5]
    assert [r["rating"] for r in scored.rows] == [1.0, 5.0, 3.0]
    assert judge_row(ROW, lambda r: 6, scale=(1, 5))["judge_status"] == "invalid_result"
    with pytest.raises(ConfigError, match="low < high"):
        run_judge([ROW], lambda r: 1, scale=(5, 1))


def test_run_judge_leaves_input_rows_untouched_and_counts_views() -> None:
    rows = [dict(ROW, prompt=str(i), final_text="x" * i) for i in range(6)]
    rewards = [1, 0, 0.5, None, "bad", 1]
    scored = run_judge(rows, lambda r: rewards[int(r["prompt"])], version="v1")
    assert all("reward" not in r for r in rows)
    assert len(scored.passes()) == 2
    assert len(scored.failures()) == 1
    assert len(scored.partials()) == 1
    assert len(scored.unjudged()) == 2
    assert len(scored.failed_traces()) == 2
    assert scored.statuses()["invalid_result"] == 1
    assert scored.statuses()["missing_reward"] == 1
    assert repr(scored) == (
        "ScoredData(6 rows: 2 pass, 1 fail, 1 partial, 2 unjudged; judge=<lambda>)"
    )
    assert scored.pass_at.n_rows == 4  # one scenario_id; the two unjudged rows excluded
    assert "2 unjudged" in scored.pass_at.notes[0]


def test_workers_give_the_same_rows_in_order() -> None:
    rows = [dict(ROW, prompt=str(i)) for i in range(20)]
    one = run_judge(rows, lambda r: int(r["prompt"]) % 2)
    many = run_judge(rows, lambda r: int(r["prompt"]) % 2, workers=4)
    assert one.rows == many.rows


def test_evaluate_marks_eval_lineage_and_model() -> None:
    out = evaluate([ROW], lambda r: 1, model="tuned-v1", version="j1")
    row = out.rows[0]
    assert row["lineage"]["source"] == "eval"
    assert row["lineage"]["model"] == "tuned-v1"
    assert row["model_version"] == "tuned-v1"
    with pytest.raises(TypeError, match="valid keywords: rollouts, judge, model"):
        evaluate([ROW], lambda r: 1, modle="x")


def test_not_callable_judge_is_a_judge_error() -> None:
    with pytest.raises(JudgeError, match="must be a callable"):
        run_judge([ROW], "exact")  # type: ignore[arg-type]


def test_bad_rows_are_named() -> None:
    with pytest.raises(ValueError, match=r"rows\[1\]"):
        run_judge([ROW, "not a row"], lambda r: 1)


def test_save_writes_jsonl(tmp_path: Any) -> None:
    from whileai.rows.jsonl import load_rows
    scored = run_judge([ROW], lambda r: 1)
    path = scored.save(tmp_path / "graded.jsonl")
    back = load_rows(path)
    assert back[0]["reward"] == 1.0
    assert back[0]["judge_status"] == "ok"
    assert isinstance(ScoredData(rows=list(back)).pass_at.pass_at_1, float)


def test_unknown_keywords_list_the_valid_ones() -> None:
    import whileai.simulations as zps

    with pytest.raises(TypeError, match=r"valid keywords: .*timeout"):
        run_judge([ROW], lambda r: 1, timout=3)  # type: ignore[call-arg]
    for fn in (zps.pass_at, zps.judge_agreement, zps.curriculum, zps.refusal_report):
        with pytest.raises(TypeError, match="valid keywords"):
            fn([ROW], not_a_keyword=1)


def test_scored_report_counts_what_was_not_scored() -> None:
    outcomes = {"a": True, "b": None, "c": "x", "d": {"reward": 1, "markers": {"m": "bad"}}}
    rows = [dict(ROW, prompt=p) for p in outcomes]
    report = run_judge(rows, lambda r: outcomes[r["prompt"]]).report()
    assert report["judge_status"]["ok"] == 2
    assert report["bool_rewards"] == 1
    assert report["dropped_markers"] == 1
    assert report["notes"] == [
        "1 rows returned no reward: reward None",
        "1 rows returned an unusable reward: reward None",
        "1 bool rewards read as 0/1",
        "1 non-numeric marker values dropped",
    ]


def test_numpy_scalars_are_numbers() -> None:
    np = pytest.importorskip("numpy")
    out = judge_row(ROW, lambda r: {"reward": np.int64(1), "markers": {"m": np.float32(0.5)}})
    assert out["judge_status"] == "ok"
    assert out["reward"] == 1.0
    assert out["markers"] == {"m": 0.5}


def test_simulated_run_graded_by_judge_and_by_grader() -> None:
    import whileai.simulations as zps
    from whileai.simulations.verify import Includes

    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "description": "Look up an order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        }
    ]

    def agent(message: str) -> dict:
        return {
            "steps": [
                {
                    "tool": "get_order",
                    "arguments": {"order_id": "4412"},
                    "result": {"status": "shipped"},
                }
            ],
            "final_text": "Order 4412 shipped yesterday.",
        }

    data = zps.simulate(
        agent,
        tools=tools,
        system_prompt="Help customers with orders.",
        simulator=False,
        budget=12,
        progress=False,
    )
    scored = data.grade(judge=Includes("4412"))
    assert isinstance(scored, ScoredData)
    assert len(scored.passes()) == len(data.trajectories)
    assert all("reward" not in r for r in data.trajectories)  # the run is untouched
    assert data.pass_at.pass_at_1 is None
    assert scored.pass_at.pass_at_1 == 1.0
    evald = zps.evaluate(data, Includes("nope"), model="m")
    assert {r["lineage"]["source"] for r in evald.rows} == {"eval"}
    assert len(evald.failed_traces()) == len(data.trajectories)
