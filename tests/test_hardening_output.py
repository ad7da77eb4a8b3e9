"""``output=`` is append-only and resumable; duplicates are found and counted once (issue #26.2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from chat_server import Answer, completion, serve
from whileai.cli import main
from whileai.errors import ConfigError, QuotaError
from whileai.rows.jsonl_write import JsonlAppender

POLICY = "Help customers with their orders."
QUIET = {"simulator": False, "progress": False}
OTHER = {"scenario_id": "sc-from-another-process", "rollout_index": 0, "prompt": "hi",
         "scenario_dimensions": {"seed": 0}, "schema_version": "1"}


pytestmark = pytest.mark.usefixtures("no_model_roles")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class _Appending:
    """An agent that, on its 2nd call, appends a row to the output file as another process
    would, and from its 7th call on raises QuotaError (so groups are cut and stamped)."""

    def __init__(self, path: Path) -> None:
        self.path, self.calls = path, 0

    def run(self, situation: Any, *, world: Any, seed: int) -> dict[str, Any]:
        self.calls += 1
        if self.calls == 2:
            with JsonlAppender(self.path) as other:
                other.append(OTHER)
        if self.calls > 6:
            raise QuotaError("spent")
        return {"steps": [], "final_text": "ok"}


def test_a_cut_run_stamps_group_cut_without_rewriting_the_file(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    data = zps.simulate(_Appending(out), tools=TOOLS, system_prompt=POLICY, repeats=4,
                        budget=40, repeat_policy="fixed", output=str(out),
                        advanced={"concurrency": 1}, **QUIET)
    on_disk = _lines(out)
    assert OTHER in on_disk  # the other writer's row survived the group_cut stamping
    ours = [r for r in on_disk if r != OTHER]
    assert len(ours) == len(data) == 6
    assert [bool(r.get("group_cut")) for r in ours] == [
        bool(r.get("group_cut")) for r in data.trajectories]
    assert any(r.get("group_cut") for r in ours)


def test_llm_grade_appends_graded_rows_and_keeps_other_rows(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    calls = {"n": 0}

    def agent(message: str) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 2:
            with JsonlAppender(out) as other:
                other.append(OTHER)
        return {"steps": [], "final_text": "ok"}

    with serve(lambda p, b, i: Answer(completion('{"reward": 1, "reason": "ok"}'))) as server:
        monkeypatch.setenv("WHILEAI_JUDGE", f"vllm:judge@{server.url}")
        data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, budget=3, llm_grade=True,
                            output=str(out), **QUIET)
    on_disk = _lines(out)
    assert OTHER in on_disk
    assert [r["llm_reward"] for r in on_disk if r != OTHER] == [1.0, 1.0, 1.0]
    assert data.search["llm_grade"]["graded"] == 3


def _run(out: Path, budget: int, seed: int = 0) -> zps.SimulationData:
    return zps.simulate(zps.seeded_agent(TOOLS, seed=seed), tools=TOOLS, system_prompt=POLICY,
                        mode="rl", repeats=3, repeat_policy="fixed", budget=budget,
                        output=str(out), advanced={"seed": seed}, **QUIET)


def test_a_rerun_resumes_instead_of_appending_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    first = _run(out, 9)
    assert "resumed_rows" not in first.search
    second = _run(out, 18)
    assert second.search["resumed_rows"] == 9
    assert len(second) == 18
    third = _run(out, 18)
    assert third.search["resumed_rows"] == 18
    rows = _lines(out)
    keys = [(r["scenario_id"], r["rollout_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == 18
    fresh = _run(tmp_path / "fresh.jsonl", 18)  # resuming lands what one long run lands
    assert sorted(keys) == sorted((r["scenario_id"], r["rollout_index"]) for r in fresh.rows)


def test_a_file_of_another_run_is_refused_before_playing(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    _run(out, 3, seed=0)
    before = out.read_bytes()
    with pytest.raises(ConfigError, match=r"seed \(0 there, 5 now\).* differ from the rows"):
        _run(out, 3, seed=5)
    alien = tmp_path / "alien.jsonl"
    alien.write_text('{"prompt": "not a rollout"}\n')
    with pytest.raises(ConfigError, match="not a simulated rollout"):
        _run(alien, 3)
    assert out.read_bytes() == before


def test_a_torn_last_line_is_cut_before_the_run_appends(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    _run(out, 3)
    with out.open("a") as handle:
        handle.write('{"scenario_id": "torn')
    data = _run(out, 6)
    rows = zps.read_jsonl(out, strict=True)
    assert len(list(rows)) == 6
    assert data.search["output_torn_bytes_cut"] == len('{"scenario_id": "torn')


_WRITER = """
import sys
from whileai.rows.jsonl_write import JsonlAppender
with JsonlAppender(sys.argv[1]) as out:
    for i in range(60):
        out.append({"prompt": sys.argv[2] + str(i), "pad": "x" * 200000})
"""


def test_two_processes_append_whole_lines(tmp_path: Path) -> None:
    out = tmp_path / "shared.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(out), tag])
             for tag in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    rows = zps.load_rows(out)  # strict: any interleaved line would raise
    assert sorted(r["prompt"] for r in rows) == sorted(
        f"{t}{i}" for t in ("a", "b") for i in range(60))


def _graded(seed: int, sid: str, index: int, reward: float) -> dict[str, Any]:
    return {"scenario_id": sid, "rollout_index": index, "prompt": f"ask {sid}", "final_text": "ok",
            "reward": reward, "judge_status": "ok", "scenario_dimensions": {"seed": seed}}


ROWS = [_graded(0, f"sc-{t}", i, float((t + i) % 2)) for t in range(4) for i in range(2)]


def test_rows_check_flags_duplicate_rollouts(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "twice.jsonl"
    zps.write_jsonl(path, ROWS + ROWS)
    assert main(["rows", "check", str(path)]) == 1
    assert "duplicate rollouts: 8" in capsys.readouterr().out
    assert zps.check_rows(ROWS + ROWS)["duplicates"] == 8
    zps.write_jsonl(path, ROWS)
    assert main(["rows", "check", str(path)]) == 0


def test_report_counts_each_rollout_once(tmp_path: Path, capsys: Any) -> None:
    once, twice = tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    zps.write_jsonl(once, ROWS)
    zps.write_jsonl(twice, ROWS + ROWS)
    assert main(["report", str(once), "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert main(["report", str(twice), "--json"]) == 0
    captured = capsys.readouterr()
    doubled = json.loads(captured.out)
    assert doubled["pass_at"] == clean["pass_at"]  # k stays 2, not 4
    assert doubled["duplicates_dropped"] == 8
    assert captured.err.count("8 duplicate row(s)") == 1


def test_scan_and_export_say_how_many_duplicates_they_dropped(tmp_path: Path,
                                                              capsys: Any) -> None:
    twice = tmp_path / "twice.jsonl"
    zps.write_jsonl(twice, ROWS + ROWS)
    main(["scan", str(twice), "--n-perm", "5"])
    assert "8 duplicate row(s)" in capsys.readouterr().err
    assert main(["export", str(twice), "-o", str(tmp_path / "sft.jsonl")]) == 0
    captured = capsys.readouterr()
    assert "duplicate rows dropped: 8" in captured.out
    assert len(zps.load_rows(tmp_path / "sft.jsonl")) == 8
