"""TrainerCallback and HackMonitor driven by transformers' own CallbackHandler, step by step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps

transformers = pytest.importorskip("transformers")
from transformers import TrainerControl, TrainerState, TrainingArguments  # noqa: E402
from transformers.trainer_callback import CallbackHandler  # noqa: E402


def handler(tmp_path: Path, *callbacks: Any) -> tuple[CallbackHandler, Any, Any, Any]:
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to=[], run_name="grpo-demo")
    state = TrainerState(max_steps=6)
    control = TrainerControl()
    return CallbackHandler(list(callbacks), None, None, None, None), args, state, control


def train(cb: CallbackHandler, args: Any, state: Any, control: Any, steps: int,
          logs: Any, work: Any = None) -> int:
    """What a Trainer does with its callbacks, minus the model; returns the last step run.

    ``work(step)`` is the step itself (where a GRPO trainer calls its reward functions).
    """
    control = cb.on_init_end(args, state, control)
    control = cb.on_train_begin(args, state, control)
    step = 0
    for step in range(1, steps + 1):
        control = cb.on_step_begin(args, state, control)
        if work is not None:
            work(step)
        state.global_step = step
        state.epoch = step / steps
        control = cb.on_step_end(args, state, control)
        control = cb.on_log(args, state, control, logs=logs(step))
        if control.should_training_stop:
            break
    cb.on_train_end(args, state, control)
    return step


def test_callback_logs_every_metric_at_the_global_step(tmp_path: Path) -> None:
    run = zps.training_run("sft", dir=tmp_path, server=False)
    cb, args, state, control = handler(tmp_path, zps.TrainerCallback(run))
    last = train(cb, args, state, control, 6, lambda s: {
        "loss": 2.0 / s, "learning_rate": 1e-4, "grad_norm": 0.5, "note": "text is skipped"})
    assert last == 6
    found = zps.get_run(run.id, dir=tmp_path)
    assert [p["step"] for p in found["series"]] == [1, 2, 3, 4, 5, 6]
    assert found["series"][1]["loss"] == 1.0
    assert found["series"][1]["epoch"] == pytest.approx(1 / 3)
    assert "note" not in found["series"][0]
    assert found["status"] == "done"
    assert found["summary"]["global_step"] == 6


def test_a_monitor_stop_ends_training_and_the_run_says_stopped(tmp_path: Path) -> None:
    run = zps.training_run("grpo", dir=tmp_path, server=False)
    monitor = zps.HackMonitor(every=1, stop_on="drift", kl_budget=0.2, min_obs=2)
    reward = monitor.wrap(lambda prompts, completions, **kw: [1.0] * len(completions))
    cb, args, state, control = handler(tmp_path, zps.TrainerCallback(run, monitor=monitor))

    def work(step: int) -> None:
        reward(prompts=["p", "p"], completions=["a", "b"])  # the trainer scores its batch

    last = train(cb, args, state, control, 6, lambda s: {"loss": 1.0, "kl": 0.1 * s}, work)
    # KL passes 0.2 when step 3 logs; step 4's check fires, and training stops at its end
    assert last == 4
    assert monitor.should_stop
    assert monitor.alarms[0]["name"] == "drift"
    found = zps.get_run(run.id, dir=tmp_path)
    assert found["status"] == "stopped"
    assert found["summary"]["stop_reason"].startswith("drift")
    assert [e["name"] for e in found["events"] if e["kind"] == "alarm"] == ["drift"]


def test_monitor_added_as_its_own_callback_stops_training(tmp_path: Path) -> None:
    monitor = zps.HackMonitor(every=1, stop_on="drift", kl_budget=0.0, min_obs=2)
    reward = monitor.wrap(lambda prompts, completions, **kw: [0.0, 1.0])
    cb, args, state, control = handler(tmp_path, monitor)

    def work(step: int) -> None:
        reward(prompts=["p", "p"], completions=["a", "b"])

    assert train(cb, args, state, control, 6, lambda s: {"kl": 0.5}, work) == 2
    assert monitor.step == 2


def test_callback_without_a_run_starts_one_named_after_the_trainer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    callback = zps.TrainerCallback()
    cb, args, state, control = handler(tmp_path, callback)
    train(cb, args, state, control, 2, lambda s: {"loss": 1.0})
    assert callback.run is not None
    assert callback.run.name == "grpo-demo"
    (listed,) = zps.list_runs()
    assert listed["id"] == callback.run.id
    assert listed["points"] == 2
