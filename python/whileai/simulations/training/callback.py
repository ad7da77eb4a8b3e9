"""``TrainerCallback``: one line puts a Transformers or TRL trainer's metrics on a run.

It speaks the trainer callback API by name (``on_log``, ``on_step_end``, ``on_train_end`` ...), as
``transformers.TrainerCallback`` does, without importing transformers: the core stays free of it
and TRL's trainers call it the same way. Every ``on_log`` becomes a point at the trainer's global
step (loss, reward, KL, learning rate, completion length, grad norm, epoch: whatever the trainer
logs that is a number); ``on_train_end`` finishes the run, ``stopped`` when a monitor stopped it.
With a ``monitor=`` (a :class:`~whileai.simulations.training.monitor.HackMonitor`) the callback
forwards the trainer's events to it, so one ``add_callback`` wires both.
"""

from __future__ import annotations

from typing import Any

from whileai.simulations.training.monitor import HackMonitor
from whileai.simulations.training.run import TrainingRun, as_run, training_run

__all__ = ["TrainerCallback"]


class TrainerCallback:
    """Report a trainer's logs to a run (made from the trainer's ``run_name`` if not given).

    Args:
        run: a ``zps.training_run(...)``; ``None`` starts one at ``on_train_begin`` named after
            ``args.run_name`` (local folder, uploaded when a platform is configured).
        monitor: a ``HackMonitor`` to drive with the same events (optional).

    >>> import tempfile
    >>> run = training_run("demo", dir=tempfile.mkdtemp(), server=False)
    >>> callback = TrainerCallback(run)
    >>> class State: global_step = 3; epoch = 0.5
    >>> _ = callback.on_log(None, State(), None, logs={"loss": 1.25, "learning_rate": 1e-4})
    >>> run.series()[0]["loss"], run.series()[0]["epoch"]
    (1.25, 0.5)
    """

    def __init__(self, run: TrainingRun | None = None, monitor: HackMonitor | None = None) -> None:
        self.run = as_run(run)
        self.monitor = monitor
        if monitor is not None and monitor.run is None:
            monitor.run = self.run

    def _forward(self, event: str, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.monitor is not None:
            result = getattr(self.monitor, event)(args, state, control, **kwargs)
            return control if result is None else result
        return control

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.run is None:
            name = getattr(args, "run_name", None) or "trainer-run"
            self.run = training_run(str(name), total_steps=getattr(state, "max_steps", None),
                                    trainer="transformers")
            if self.monitor is not None and self.monitor.run is None:
                self.monitor.run = self.run
        return self._forward("on_train_begin", args, state, control, **kwargs)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> Any:
        metrics = {k: v for k, v in (logs or {}).items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        epoch = getattr(state, "epoch", None)
        if epoch is not None and "epoch" not in metrics:
            metrics["epoch"] = epoch
        if self.run is not None and metrics:
            self.run.log(int(getattr(state, "global_step", 0) or 0), **metrics)
        return self._forward("on_log", args, state, control, logs=logs, **kwargs)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        return self._forward("on_step_end", args, state, control, **kwargs)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        result = self._forward("on_train_end", args, state, control, **kwargs)
        if self.run is not None:
            stopped = self.monitor is not None and self.monitor.should_stop
            summary = {"global_step": getattr(state, "global_step", None)}
            if stopped and self.monitor is not None:
                summary["stop_reason"] = self.monitor.stop_reason
            self.run.finish("stopped" if stopped else "done", summary=summary)
        return result

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):  # the trainer's other events: forward or ignore
            return lambda args, state, control, **kw: self._forward(name, args, state, control,
                                                                    **kw)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
