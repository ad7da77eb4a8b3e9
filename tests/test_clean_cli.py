"""The clean/select commands: decontaminate, scan and optimize on files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from _files import write_jsonl
from whileai.cli import main


def test_decontaminate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    question = "my blue kettle arrived with a cracked lid and I need a replacement before friday"
    train = write_jsonl(tmp_path / "train.jsonl",
                   [{"prompt": question}, {"prompt": "cancel my subscription please"}])
    evals = write_jsonl(tmp_path / "eval.jsonl", [{"prompt": question.upper()}])
    out = tmp_path / "clean.jsonl"
    other = write_jsonl(tmp_path / "eval2.jsonl", [{"prompt": "unrelated"}])
    code = main(["decontaminate", str(train), "--against", str(evals), str(other),
                 "--output", str(out)])
    assert code == 0
    assert "1 dropped" in capsys.readouterr().out
    kept = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert kept == [{"prompt": "cancel my subscription please"}]


def test_scan_and_optimize_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(2)
    rows = []
    for ask in range(25):
        for r in range(8):
            called = rng.random() < 0.5
            steps = [{"tool": "lookup_order", "arguments": {}, "result": {}}] if called else []
            words = [rng.choice(["ok", "sure", "done", "noted"]) for _ in range(5)]
            rows.append({
                "scenario_id": f"sc-{ask:010x}", "prompt": f"ask {ask}", "rollout_index": r,
                "steps": steps, "final_text": " ".join(words), "reward": float(called),
            })
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    assert main(["scan", str(path), "--endorsed", "tool:lookup_order", "--n-perm", "20"]) == 0
    assert "hack_scan: train" in capsys.readouterr().out
    out = tmp_path / "rl.jsonl"
    assert main(["optimize", str(path), "--mode", "rl", "--output", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows_out"] == len(out.read_text(encoding="utf-8").splitlines())
    assert report["mode"] == "rl"
