"""SimulationData, recommend, the CLI and the demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from whileai.cli import main
from whileai.errors import ConfigError, JudgeError


def run(**knobs: Any) -> zps.SimulationData:
    return zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                        simulator=False, progress=False, **knobs)


def test_simulation_data_surface() -> None:
    data = run(budget=8)
    assert len(data) == 8
    assert list(data) == data.trajectories
    assert data[0] is data.trajectories[0]
    assert repr(data) == ("SimulationData(8 rows, 8 tasks, mode='explore', k=1, "
                          "stopped_because='budget')")
    assert data.rows() is data.rows
    assert all("privileged" not in r for r in data.rows)
    assert all(r["schema_version"] == "1" for r in data.rows)
    assert data.mode == "explore"
    assert data.rollouts_per_request == 1


def test_grade_judge_copies_grader_in_place() -> None:
    data = run(budget=6)
    scored = data.grade(judge=lambda r: {"reward": 1})
    assert all(r["reward"] == 1 for r in scored.rows)
    assert not any("reward" in r for r in data.trajectories)
    report = data.grade(grader=lambda r: {"reward": 0})
    assert report["rows"] == 6
    assert report["judge_status"]["ok"] == 6
    assert all(r["reward"] == 0 for r in data.trajectories)
    assert all(r["reward"] == 0 for r in data.rows)  # the export view follows
    assert data.pass_at.pass_at_1 == 0.0
    with pytest.raises(ConfigError, match="not both"):
        data.grade(judge=lambda r: {"reward": 1}, grader=lambda r: {"reward": 1})


def test_grade_without_a_judge_goes_to_the_llm_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.delenv("WHILEAI_JUDGE", raising=False)
    data = run(budget=2)
    try:
        importlib.import_module("whileai.simulations.judge.llm_judge")
    except ImportError:
        with pytest.raises(JudgeError, match="pass judge="):
            data.grade()
    else:  # no judge model configured: the LLM judge says how to configure one
        with pytest.raises(ConfigError, match="WHILEAI_JUDGE"):
            data.grade()
    assert not any("reward" in r for r in data.trajectories)


@pytest.mark.parametrize("mode", ["explore", "sft", "rl", "adaptive"])
def test_recommend_sizes_from_the_grid(mode: str) -> None:
    rec = zps.recommend(tools=TOOLS, system_prompt="Help.", mode=mode)
    assert rec["reasoning"][0] == f"covering grid: {rec['cells']} cells for this agent"
    assert rec["saturation_rows"] == 5 * rec["cells"]
    kwargs = rec["simulate_kwargs"]
    assert kwargs["mode"] == mode
    if mode in ("explore", "sft"):
        assert kwargs["budget"] == max(3 * 800, rec["saturation_rows"])
    if mode == "rl":
        assert kwargs["repeats"] == 8
        assert kwargs["situations"] == 200  # 100 mixed groups at a mixed rate of 0.5
        assert kwargs["budget"] == 100 * 8 + 100 * 2
        low = zps.recommend(tools=TOOLS, system_prompt="Help.", mode="rl", mixed_rate=0.25)
        assert low["simulate_kwargs"]["situations"] == 400
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                        simulator=False, progress=False, **{**kwargs, "budget": 4})
    assert len(data) == 4
    assert zps.format_recommendation(rec).splitlines() == rec["reasoning"]


def test_recommend_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="mode must be one of"):
        zps.recommend(tools=TOOLS, mode="big")
    with pytest.raises(ConfigError, match="mixed_rate"):
        zps.recommend(tools=TOOLS, mode="rl", mixed_rate=0)


def test_cli_simulate_with_tools_and_prompt(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Help customers with orders.")
    out = tmp_path / "rows.jsonl"
    code = main(["simulate", "--tools", str(tools), "--system-prompt", str(prompt),
                 "--budget", "7", "--mode", "rl", "--repeats", "2", "--output", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 7
    assert rows[0]["messages"][0] == {"role": "system", "content": "Help customers with orders."}
    assert "wrote 7 rows" in capsys.readouterr().out


def test_cli_simulate_with_a_spec_folder_and_errors(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "spec.json").write_text(json.dumps({"tools": TOOLS, "policy": "Help."}))
    out = tmp_path / "rows.jsonl"
    assert main(["simulate", "--spec", str(tmp_path), "--budget", "3", "--output",
                 str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3
    assert main(["simulate", "--tools", str(tmp_path / "nope.json"), "--output",
                 str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_demo_runs_the_offline_quick_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    printed = capsys.readouterr().out
    assert "SimulationData(60 rows" in printed
    assert "seeded mistakes:" in printed
    assert "pass@1" in printed
