"""``training_run``: report a training run (your own trainer, any hardware) as it goes.

A run writes every point and event to a local folder first (``record.RunFolder``); when a
platform is configured (``WHILEAI_API_KEY`` or ``whileai login``), a background sender uploads
the folder as it grows. Logging never blocks the trainer and never raises a platform error into
it: a server that is down only delays the upload (``whileai runs import`` sends a folder later).

>>> import tempfile
>>> with training_run("sft-v3", dir=tempfile.mkdtemp(), server=False) as run:
...     for step in range(3):
...         run.log(step, loss=2.0 - step)
>>> run.status, [p["loss"] for p in run.series()]
('done', [2.0, 1.0, 0.0])
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from whileai.errors import ConfigError
from whileai.simulations.measure.delta import delta_report
from whileai.simulations.measure.passat import pass_at
from whileai.simulations.measure.stats import DEFAULT_RESAMPLES
from whileai.simulations.training.record import RUN_STATUSES, RunFolder, default_runs_dir
from whileai.simulations.training.sender import RunSender, RunsTransport
from whileai.simulations.training.transport import configured_runs_transport

__all__ = ["HOLDOUT_TOLERANCE", "TrainingRun", "holdout_verdict", "training_run"]

HOLDOUT_TOLERANCE = 0.02  # |after - before| below this reads "About the same"

Verdict = Literal["Better", "Worse", "About the same"]


def holdout_verdict(before: float, after: float, *, metric: str = "pass_rate",
                    tolerance: float = HOLDOUT_TOLERANCE) -> Verdict:
    """One word for a before/after on the holdout (``metric="loss"``: lower is better).

    >>> holdout_verdict(0.42, 0.58), holdout_verdict(1.2, 1.3, metric="loss")
    ('Better', 'Worse')
    """
    gain = (before - after) if metric == "loss" else (after - before)
    if abs(gain) < tolerance:
        return "About the same"
    return "Better" if gain > 0 else "Worse"


def _rate(value: Any, side: str) -> float:
    """A pass rate from a number, or pass@1 of graded rows."""
    if isinstance(value, bool):
        raise ConfigError(f"holdout {side}= must be a number or graded rows, not a bool")
    if isinstance(value, (int, float)):
        return float(value)

    rate = pass_at(value).pass_at_1
    if rate is None:
        raise ConfigError(f"holdout {side}=: the rows hold no graded task to read a pass rate from")
    return float(rate)


class TrainingRun:
    """One run: ``log``, ``note``, ``holdout``, ``delta``, ``finish`` (see :func:`training_run`)."""

    def __init__(self, folder: RunFolder, sender: RunSender | None = None) -> None:
        self.folder = folder
        self.sender = sender
        self._last_step: int | None = None

    @property
    def id(self) -> str:
        return self.folder.run_id

    @property
    def name(self) -> str:
        return str(self.folder.header.get("name"))

    @property
    def status(self) -> str:
        return str(self.folder.header.get("status", "running"))

    @property
    def last_step(self) -> int | None:
        """The newest step logged by this process (None before the first)."""
        return self._last_step

    def _sent(self) -> None:
        if self.sender is None:
            return
        if self.status == "running":
            self.sender.notify()
        elif not self.sender.send_now():  # finished: the sender's thread has stopped
            warnings.warn(f"run {self.id}: saved in {self.folder.path} but not sent to the "
                          f"platform ({self.sender.last_error}); `whileai runs import "
                          f"{self.folder.path}` sends it later", RuntimeWarning, stacklevel=3)

    def log(self, step: int, **metrics: Any) -> None:
        """Record metrics at ``step`` (numbers; torch/numpy scalars are read with ``.item()``)."""
        self.folder.add_point({"step": step, **metrics})
        self._last_step = step
        self._sent()

    def note(self, text: str, **fields: Any) -> None:
        """Put a line on the run's summary (what changed, what you saw)."""
        self.folder.add_event("note", text=str(text), step=self._last_step, **fields)
        self._sent()

    def alarm(self, name: str, *, step: int | None, message: str,
              evidence: Mapping[str, Any], stop: bool) -> None:
        """Record a monitor alarm (``divergence``, ``length``, ``drift``, ``feature``)."""
        self.folder.add_event("alarm", name=name, step=step, message=message,
                              evidence=dict(evidence), stop=stop)
        self._sent()

    def holdout(self, before: Any, after: Any, *, metric: str = "pass_rate") -> Verdict:
        """Say whether it worked: held-out pass rate (or ``metric="loss"``) before and after.

        ``before`` / ``after`` are numbers (0 to 1 for pass rates) or graded rows (pass@1 is
        read off them). Returns the verdict word the run page opens with.
        """
        b, a = _rate(before, "before"), _rate(after, "after")
        verdict = holdout_verdict(b, a, metric=metric)
        self.folder.add_event("holdout", before=b, after=a, metric=metric, verdict=verdict)
        self.folder.set_header(holdout_result={"before": b, "after": a, "metric": metric,
                                               "verdict": verdict})
        self._sent()
        return verdict

    def delta(self, before: Any, after: Any, *, target: str = "pass_at_1",
              must_not_regress: Iterable[str] = (), by: Any = None, run_std: float | None = None,
              proxy: str | None = None, n_resamples: int = DEFAULT_RESAMPLES,
              seed: int = 0) -> dict[str, Any]:
        """``delta_report`` kept on the run (and its pass rates as the holdout verdict)."""

        report = delta_report(before, after, target=target, must_not_regress=must_not_regress,
                              by=by, run_std=run_std, proxy=proxy, n_resamples=n_resamples,
                              seed=seed)
        self.folder.add_event("delta", report=report)
        entry = report["metrics"].get(report["target"], {})
        if isinstance(entry.get("before"), (int, float)) and isinstance(entry.get("after"),
                                                                         (int, float)):
            self.holdout(entry["before"], entry["after"])
        self._sent()
        return report

    def finish(self, status: str = "done", *, summary: Mapping[str, Any] | None = None,
               adapter: str | None = None, flush_timeout: float = 10.0) -> None:
        """End the run (``done``, ``failed`` or ``stopped``); a second call is ignored."""
        if status not in RUN_STATUSES or status == "running":
            raise ConfigError(f"finish status must be done, failed or stopped, got {status!r}")
        if self.status != "running":
            return
        self.folder.add_event("finish", status=status, summary=dict(summary or {}),
                              adapter=adapter)
        self.folder.set_header(status=status, summary=dict(summary or {}), adapter=adapter)
        if self.sender is not None:
            self.sender.close(flush_timeout)

    def series(self) -> list[dict[str, Any]]:
        """The points logged so far, oldest first."""
        return list(self.folder.points())

    def __enter__(self) -> TrainingRun:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.finish("done")
        else:
            self.finish("failed", summary={"error": f"{type(exc).__name__}: {exc}"})

    def __repr__(self) -> str:
        return f"TrainingRun({self.id}, {self.name!r}, {self.status}, {self.folder.path})"


def training_run(
    name: str,
    *,
    dataset: str | None = None,
    holdout: str | None = None,
    config: Mapping[str, Any] | None = None,
    base_model: str | None = None,
    total_steps: int | None = None,
    trainer: str | None = None,
    dir: str | os.PathLike[str] | None = None,
    server: RunsTransport | bool | None = None,
) -> TrainingRun:
    """Start a training run that your own trainer reports into.

    Args:
        name: the run's name (``"sft-v3"``).
        dataset: the dataset id (or name) trained on.
        holdout: the dataset id (or name) held out.
        config: the knobs the run is compared by (learning rate, beta, seed ...).
        base_model: the model trained from (shown on the run page).
        total_steps: how many steps the run will take (drives progress on the page).
        trainer: what trains it (``"trl"``, ``"transformers"``, your own loop).
        dir: where the local run folder goes (default ``WHILEAI_HOME/runs``).
        server: ``None`` uploads to the configured platform if there is one; ``False`` keeps the
            run local; or a transport object (the platform client's runs API).

    Returns:
        A :class:`TrainingRun`; use it as a context manager (an exception finishes it
        ``failed``) or call ``finish``.

    Raises:
        ConfigError: ``name`` is empty.
    """
    if not name or not str(name).strip():
        raise ConfigError("training_run needs a name, for example training_run('sft-v3')")
    header = {"name": str(name), "dataset": dataset, "holdout": holdout,
              "config": dict(config or {}), "base_model": base_model,
              "total_steps": total_steps, "trainer": trainer}
    folder = RunFolder.create(Path(dir) if dir is not None else default_runs_dir(), header)
    transport: RunsTransport | None
    if server is False:
        transport = None
    elif server is None or server is True:
        transport = _configured_transport(required=server is True)
    else:
        transport = server
    sender = RunSender(folder, transport) if transport is not None else None
    return TrainingRun(folder, sender)


def _configured_transport(*, required: bool) -> RunsTransport | None:
    """The platform's runs API when a key is configured, else None (or an error if required)."""
    return configured_runs_transport(required=required)


def as_run(run: Any) -> TrainingRun | None:
    """Accept a run object or None (what ``TrainerCallback`` and ``HackMonitor`` take)."""
    if run is None or isinstance(run, TrainingRun):
        return run
    raise ConfigError(f"expected a zps.training_run(...) object, got {type(run).__name__}")


def runs_in(directory: str | os.PathLike[str] | None = None) -> Sequence[RunFolder]:
    """The run folders under ``directory`` (default ``WHILEAI_HOME/runs``), newest first."""
    root = Path(directory) if directory is not None else default_runs_dir()
    if not root.is_dir():
        return []
    folders = [RunFolder(p) for p in root.iterdir() if (p / "run.json").is_file()]
    return sorted(folders, key=lambda f: f.header.get("created", 0), reverse=True)
