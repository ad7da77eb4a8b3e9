"""Training runs kept in local folders: log, note, holdout, delta, finish, read back, CLI."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.cli import main
from whileai.errors import ConfigError
from whileai.simulations.training.record import RunFolder
from whileai.simulations.training.sender import RunSender, upload_folder


def graded(rate: float, n: int = 20) -> list[dict[str, Any]]:
    passes = round(rate * n)
    return [{"scenario_id": f"t{i}", "prompt": f"q{i}", "reward": float(i < passes)}
            for i in range(n)]


def test_run_folder_holds_points_events_and_header(tmp_path: Path) -> None:
    with zps.training_run("sft-v3", dataset="ds_1", base_model="m", total_steps=3,
                          config={"lr": 1e-4}, dir=tmp_path, server=False) as run:
        for step in range(3):
            run.log(step, loss=2.0 - step, lr=1e-4)
        run.note("lowered the learning rate")
    assert run.status == "done"
    found = zps.get_run(run.id, dir=tmp_path)
    assert [p["step"] for p in found["series"]] == [0, 1, 2]
    assert [p["loss"] for p in found["series"]] == [2.0, 1.0, 0.0]
    assert [p["seq"] for p in found["series"]] == [0, 1, 2]
    assert found["config"] == {"lr": 1e-4}
    assert found["dataset"] == "ds_1"
    kinds = [e["kind"] for e in found["events"]]
    assert kinds == ["note", "finish"]
    assert found["events"][0]["text"] == "lowered the learning rate"
    assert (tmp_path / run.id / "points.jsonl").is_file()


def test_an_exception_finishes_the_run_failed_and_is_not_swallowed(tmp_path: Path) -> None:
    run = zps.training_run("r", dir=tmp_path, server=False)

    def crash() -> None:
        with run:
            run.log(1, loss=1.0)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        crash()
    header = zps.get_run(run.id, dir=tmp_path)
    assert header["status"] == "failed"
    assert "RuntimeError: boom" in header["summary"]["error"]


def test_bad_metrics_are_refused_with_the_step_named(tmp_path: Path) -> None:
    run = zps.training_run("r", dir=tmp_path, server=False)
    with pytest.raises(ConfigError, match=r"step 4: metric 'loss' is a str"):
        run.log(4, loss="high")
    with pytest.raises(ConfigError, match="step must be an int"):
        run.log("4", loss=1.0)  # type: ignore[arg-type]
    run.log(5, loss=float("nan"), reward=0.5)  # non-finite values are left out, not written
    assert run.series() == [{"seq": 0, "time": run.series()[0]["time"], "step": 5, "reward": 0.5}]
    with pytest.raises(ConfigError, match="done, failed or stopped"):
        run.finish("running")
    with pytest.raises(ConfigError, match="needs a name"):
        zps.training_run(" ", dir=tmp_path, server=False)


def test_holdout_verdicts_from_numbers_and_rows(tmp_path: Path) -> None:
    run = zps.training_run("r", dir=tmp_path, server=False)
    assert run.holdout(before=0.42, after=0.58) == "Better"
    assert run.holdout(graded(0.6), graded(0.3)) == "Worse"
    assert run.holdout(1.20, 1.21, metric="loss") == "About the same"
    assert run.holdout(1.2, 0.9, metric="loss") == "Better"
    run.finish("done")
    header = zps.get_run(run.id, dir=tmp_path)
    assert header["holdout_result"]["verdict"] == "Better"  # the last one said
    assert [e["verdict"] for e in header["events"] if e["kind"] == "holdout"] == [
        "Better", "Worse", "About the same", "Better"]


def test_attach_holdout_and_delta_after_the_run_finished(tmp_path: Path) -> None:
    with zps.training_run("r", dir=tmp_path, server=False) as run:
        run.log(0, loss=1.0)
    assert zps.attach_holdout(run.id, 0.5, 0.51, dir=tmp_path) == "About the same"
    report = zps.attach_delta(run.id, graded(0.2, 40), graded(0.8, 40), dir=tmp_path,
                              n_resamples=200)
    assert report["headline"] == "moved_up"
    found = zps.get_run(run.id, dir=tmp_path)
    assert found["holdout_result"]["verdict"] == "Better"
    assert any(e["kind"] == "delta" for e in found["events"])
    assert "holdout: Better" in zps.format_run(found)
    with pytest.raises(ConfigError, match="no local run folder"):
        zps.get_run("run_missing", dir=tmp_path)


def test_hosted_calls_point_to_the_trainer_path() -> None:
    assert callable(zps.train)
    assert not isinstance(zps.train, type(zps))
    for call in (lambda: zps.train("ds_1", method="sft"), lambda: zps.serve("m", None),
                 zps.models):
        with pytest.raises(ConfigError, match=r"TrainerCallback.*docs/training.md"):
            call()


def test_a_torn_last_line_is_skipped_and_numbering_goes_on(tmp_path: Path) -> None:
    run = zps.training_run("r", dir=tmp_path, server=False)
    run.log(0, loss=1.0)
    with open(run.folder.path / "points.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"seq": 1, "step": 1, "lo')  # the trainer was killed mid-line
    reopened = RunFolder(run.folder.path)
    assert [p["step"] for p in reopened.points()] == [0]
    reopened.add_point({"step": 2, "loss": 0.5})
    assert [(p["seq"], p["step"]) for p in reopened.points()] == [(0, 0), (1, 2)]


class FlakyServer:
    """A runs transport that refuses the first ``fail`` calls and stores by seq."""

    def __init__(self, fail: int) -> None:
        self.fail = fail
        self.points: dict[int, dict[str, Any]] = {}
        self.events: dict[int, dict[str, Any]] = {}
        self.finished: dict[str, Any] | None = None
        self.created = 0
        self.lock = threading.Lock()

    def _gate(self) -> None:
        with self.lock:
            if self.fail > 0:
                self.fail -= 1
                raise ConnectionError("server down")

    def create_run(self, header: Any) -> None:
        self._gate()
        self.created += 1

    def log_points(self, run_id: str, points: Any) -> None:
        self._gate()
        self.points.update({p["seq"]: p for p in points})

    def log_events(self, run_id: str, events: Any) -> None:
        self._gate()
        self.events.update({e["seq"]: e for e in events})

    def finish_run(self, run_id: str, header: Any) -> None:
        self._gate()
        self.finished = dict(header)


def test_sender_delivers_everything_once_after_failures(tmp_path: Path) -> None:
    server = FlakyServer(fail=3)
    run = zps.training_run("r", dir=tmp_path, server=server)  # type: ignore[arg-type]
    assert run.sender is not None
    run.sender.interval = run.sender.max_backoff = 0.01
    for step in range(1200):  # more than two batches of 500
        run.log(step, loss=1.0 / (step + 1))
    run.note("half way")
    run.finish("done", flush_timeout=20.0)
    assert server.created == 1
    assert sorted(server.points) == list(range(1200))
    assert [e["kind"] for e in server.events.values()] == ["note", "finish"]
    assert server.finished is not None
    assert server.finished["status"] == "done"
    assert run.sender.failures >= 3
    # nothing is left to send: a second upload is empty
    assert upload_folder(run.folder, server) == {"points": 0, "events": 0}


def test_sender_close_is_bounded_when_the_server_never_answers(tmp_path: Path) -> None:
    server = FlakyServer(fail=10**9)
    run = zps.training_run("r", dir=tmp_path, server=server)  # type: ignore[arg-type]
    run.log(0, loss=1.0)
    run.finish("done", flush_timeout=0.2)  # returns; the folder keeps everything
    assert run.status == "done"
    assert server.points == {}
    later = FlakyServer(fail=0)
    assert upload_folder(RunFolder(run.folder.path), later) == {"points": 1, "events": 1}
    assert later.finished is not None


def test_sender_thread_is_a_daemon(tmp_path: Path) -> None:
    folder = RunFolder.create(tmp_path, {"name": "r"})
    sender = RunSender(folder, FlakyServer(fail=0), interval=0.01)
    assert sender._thread.daemon
    assert sender.close(5.0)


def test_runs_cli_lists_and_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with zps.training_run("cli-run", dir=tmp_path, server=False) as run:
        run.log(7, loss=0.25)
    assert main(["runs", "list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert run.id in out
    assert "cli-run" in out
    assert "1 points" in out
    assert main(["runs", "show", run.id, "--dir", str(tmp_path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["series"][0]["loss"] == 0.25
    assert main(["runs", "show", "run_nope", "--dir", str(tmp_path)]) == 2
    assert "no local run folder" in capsys.readouterr().err


def test_reward_model_judges_with_the_model_a_run_served(tmp_path: Path) -> None:
    from chat_server import completion, serve

    with zps.training_run("rm", dir=tmp_path, server=False) as run:
        run.log(0, loss=1.0)
    with pytest.raises(ConfigError, match="records no served model"):
        zps.reward_model(run.id, dir=tmp_path)
    reply = completion('{"reward": 1, "reason": "grounded in the lookup"}')
    with serve([reply]) as server:
        with zps.training_run("rm2", dir=tmp_path, server=False) as served:
            served.finish(summary={"served": {"url": server.url, "model": "my-rm"}})
        judge = zps.reward_model(served.id, dir=tmp_path, threshold=0.5)
        verdict = judge({"prompt": "where is my order?", "final_text": "It shipped."})
        body = server.chat_bodies()[0]
    assert verdict["reward"] == 1.0
    assert verdict["rm_score"] == 1.0
    assert body["model"] == "my-rm"
    assert judge.version == f"reward_model:{served.id}"  # type: ignore[attr-defined]


def test_read_from_returns_only_whole_new_lines(tmp_path: Path) -> None:
    folder = RunFolder.create(tmp_path, {"name": "r"})
    for step in range(3):
        folder.add_point({"step": step, "loss": 1.0})
    lines, end = folder.read_from("points", 0, 10)
    assert [p["step"] for p in lines] == [0, 1, 2]
    assert folder.read_from("points", end, 10) == ([], end)  # nothing new: nothing read
    with open(folder.path / "points.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"seq": 3, "step": 3')  # a line still being written
    assert folder.read_from("points", end, 10) == ([], end)
    with open(folder.path / "points.jsonl", "a", encoding="utf-8") as handle:
        handle.write(', "loss": 0.5}\nnot json\n{"seq": 4, "step": 4}\n')
    lines, later = folder.read_from("points", end, 10)
    assert [p["step"] for p in lines] == [3, 4]  # the line that is not JSON is passed over
    assert later == (folder.path / "points.jsonl").stat().st_size
    two, _ = folder.read_from("points", 0, 2)
    assert [p["step"] for p in two] == [0, 1]
