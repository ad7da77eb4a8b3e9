"""Hugging Face folders (loaded back with `datasets`), preference pairs, to_trl and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.cli import main

ROWS = [
    {"scenario_id": "sc-0000000001", "prompt": "Where is 4412?", "reward": 1.0,
     "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"},
                "result": {"status": "ok", "privileged": {"reference": "HIDDEN-1"}}}],
     "final_text": "It is late.", "privileged": {"reference": "HIDDEN-2"}},
    {"scenario_id": "sc-0000000001", "prompt": "Where is 4412?", "reward": 0,
     "final_text": "No idea."},
    {"scenario_id": "sc-0000000002", "prompt": "Refund 9", "final_text": "Done."},
]


@pytest.mark.parametrize("engine", ["jsonl", "parquet"])
def test_hf_folder_loads_with_datasets(offline: Path, engine: str) -> None:
    datasets = pytest.importorskip("datasets")
    if engine == "parquet":
        pytest.importorskip("pyarrow")
    folder = offline / "ds"
    report = zps.to_hf_folder({"train": ROWS[:2], "test": ROWS[2:]}, folder, engine=engine)
    assert report["rows"] == {"train": 2, "test": 1}
    card = (folder / "README.md").read_text()
    assert "| train | 2 |" in card
    assert "| test | 1 |" in card
    loaded = datasets.load_dataset(str(folder), cache_dir=str(offline / "cache"))
    assert loaded["train"].num_rows == 2
    assert loaded["test"].num_rows == 1
    assert loaded["train"][0]["prompt"] == "Where is 4412?"
    assert loaded["train"]["reward"] == [1.0, 0.0]
    text = json.dumps(loaded["train"].to_list(), default=str)
    assert "HIDDEN" not in text
    assert "privileged" not in text
    steps = loaded["train"][0]["steps"]
    steps = json.loads(steps) if isinstance(steps, str) else steps
    assert steps[0]["arguments"]["order_id"] == "4412"


def test_hf_folder_single_split_and_bad_engine(tmp_path: Path) -> None:
    report = zps.to_hf_folder(ROWS, tmp_path / "one", split="eval", engine="jsonl")
    assert report["files"] == {"eval": "data/eval.jsonl"}
    assert len(zps.load_rows(tmp_path / "one" / "data" / "eval.jsonl")) == 3
    with pytest.raises(ValueError, match="engine"):
        zps.to_hf_folder(ROWS, tmp_path / "x", engine="csv")


def test_preference_openai_and_trl_shapes(tmp_path: Path) -> None:
    pairs = zps.build_preference_pairs(ROWS)
    report = zps.export_preference(pairs, tmp_path / "dpo.jsonl", format="trl")
    assert report["pairs_in"] == report["pairs_out"] == 1
    [row] = zps.load_rows(tmp_path / "dpo.jsonl")
    assert row["prompt"] == [{"role": "user", "content": "Where is 4412?"}]
    assert row["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"order_id": "4412"}
    assert row["rejected"] == [{"role": "assistant", "content": "No idea."}]
    assert row["chosen_reward"] == 1.0
    assert "HIDDEN" not in (tmp_path / "dpo.jsonl").read_text()
    openai, _ = zps.export.preference.preference_rows(pairs)
    assert openai[0]["prompt"] == "Where is 4412?"
    assert isinstance(openai[0]["chosen"][1]["tool_calls"][0]["function"]["arguments"], str)


def test_preference_counts_mismatched_prompts() -> None:
    pair = {"chosen": {"prompt": "a", "final_text": "x"},
            "rejected": {"prompt": "b", "final_text": "y"}}
    rows, report = zps.export.preference.preference_rows([pair], format="trl")
    assert rows == []
    assert report["skipped"]["prompt_mismatch"] == 1
    with pytest.raises(ValueError, match="kind"):
        zps.to_trl([pair], "dpo")


def test_to_trl_matches_direct_trl_export() -> None:
    rows = zps.training_rows(ROWS, tools=[{"name": "get_order", "parameters": {}}])
    direct = zps.training_rows(ROWS, tools=[{"name": "get_order", "parameters": {}}],
                               format="trl")
    assert zps.to_trl(rows, "training") == direct
    assert zps.to_trl(ROWS, "training") == zps.training_rows(ROWS, format="trl")


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main(args)
    return code, capsys.readouterr().out


def test_cli_export_trl_final_unroll(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "rows.jsonl"
    zps.write_jsonl(src, ROWS)
    out = tmp_path / "sft.jsonl"
    code, text = _cli(["export", str(src), "--format", "trl", "--output", str(out),
                       "--mask", "final", "--unroll"], capsys)
    assert code == 0
    assert "rows in" in text
    rows = zps.load_rows(out)
    assert len(rows) == 4  # 2 agent turns in the first row, 1 in each other
    assert all("prompt" not in r and r["loss_mask"][-1] == 1 for r in rows)
    code, text = _cli(["export", str(src), "--kind", "preference", "--format", "trl",
                       "--output", str(tmp_path / "dpo.jsonl"), "--json"], capsys)
    assert code == 0
    assert json.loads(text)["pairs_out"] == 1
    code, text = _cli(["export", str(src), "--kind", "hf", "--output", str(tmp_path / "hf")],
                      capsys)
    assert code == 0
    assert (tmp_path / "hf" / "README.md").exists()


@pytest.mark.parametrize("engine", ["jsonl", "parquet"])
def test_hf_folder_round_trips_through_map_columns(offline: Path, engine: str) -> None:
    """What import_hf reads back from a to_hf_folder folder is the exported rows, nested
    fields included (Parquet stores them as JSON text; map_columns decodes them)."""
    datasets = pytest.importorskip("datasets")
    if engine == "parquet":
        pytest.importorskip("pyarrow")
    from whileai.platform.hub import map_columns

    rows = [zps.export_row(r) for r in ROWS]
    rows[1]["world_state"] = {"records": {"4412": {"status": "late"}}}
    rows[2]["reason"] = '["text that looks like JSON stays text"]'
    zps.to_hf_folder({"train": rows}, offline / "ds", engine=engine)
    loaded = datasets.load_dataset(str(offline / "ds"), cache_dir=str(offline / "cache"))
    back = [map_columns(r) for r in loaded["train"]]
    for written, read in zip(rows, back, strict=True):
        assert {k: v for k, v in read.items() if v is not None} == written
    assert map_columns({"steps": "[not json"})["steps"] == "[not json"
    assert map_columns({"world_state": "[1]"})["world_state"] == "[1]"  # not an object: kept
