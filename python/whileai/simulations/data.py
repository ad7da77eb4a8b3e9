"""``SimulationData``: what ``simulate`` returns.

``trajectories`` keeps every row whole (the teacher-only ``privileged`` block included, for
judges); ``rows`` is the same list scrubbed for export (also callable: ``data.rows()``).

>>> data = SimulationData(trajectories=[{"prompt": "hi", "privileged": {"reference": "x"}}],
...                       search={}, stopped_because="budget", mode="explore")
>>> len(data), "privileged" in data.rows[0], data.rows() == data.rows
(1, False, True)
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError, JudgeError
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.outbound import export_row
from whileai.simulations.generate.agents import is_model_spec
from whileai.simulations.judge.scored import status_counts
from whileai.simulations.measure.passat import pass_at
from whileai.simulations.models import RetryPolicy
from whileai.simulations.pushable import Pushable

__all__ = ["ExportRows", "SimulationData"]


def _is_model_spec(value: object) -> bool:

    return is_model_spec(value)


class ExportRows(list[dict[str, Any]]):
    """The exported rows: a list that can also be called (``data.rows()``)."""

    def __call__(self) -> ExportRows:
        return self


class SimulationData(Pushable):
    """The result of ``simulate``: rows, the run's report, and why it stopped.

    ``stopped_because`` is a :data:`~whileai.simulations.play.stop.StopReason`; a sharded run
    (``whileai.scale``) joins its shards' different reasons with commas, or says ``no_tasks``.
    """

    def __init__(
        self,
        *,
        trajectories: list[dict[str, Any]],
        search: dict[str, Any],
        stopped_because: str,
        mode: str,
        rollouts_per_request: int = 1,
        system_prompt: str = "",
        tools: list[dict[str, Any]] | None = None,
        rubric: str = "",
    ) -> None:
        self.trajectories = trajectories
        self.search = search
        self.stopped_because = stopped_because
        self.mode = mode
        self.rollouts_per_request = rollouts_per_request
        self.system_prompt = system_prompt
        self.tools = tools or []
        self.rubric = rubric
        self._rows: ExportRows | None = None
        self._rows_of: int = -1

    @property
    def rows(self) -> ExportRows:
        """The rows as they leave the run: scrubbed (no ``privileged`` or ``vector``)."""
        if self._rows is None or self._rows_of != id(self.trajectories) or len(
            self._rows
        ) != len(self.trajectories):
            self._rows = ExportRows(export_row(r) for r in self.trajectories)
            self._rows_of = id(self.trajectories)
        return self._rows

    def __len__(self) -> int:
        return len(self.trajectories)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.trajectories)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.trajectories[index]

    def __repr__(self) -> str:
        tasks = len({r.get("scenario_id") or r.get("prompt") for r in self.trajectories})
        return (
            f"SimulationData({len(self)} rows, {tasks} tasks, mode={self.mode!r}, "
            f"k={self.rollouts_per_request}, stopped_because={self.stopped_because!r})"
        )

    def save(self, path: str | Path, *, keep_privileged: bool = False) -> Path:
        """Write the exported rows to a JSONL file (atomically); return the path.

        ``keep_privileged=True`` keeps the teacher-only block, for a private file only.
        """
        target = Path(path)
        rows = (ExportRows(export_row(r, keep_privileged=True) for r in self.trajectories)
                if keep_privileged else self.rows)
        write_jsonl(target, rows, keep_privileged=keep_privileged)
        return target

    @property
    def pass_at(self) -> Any:
        """pass@1, pass^k and pass@k of the graded trajectories (``measure.passat.pass_at``)."""

        return pass_at(self.trajectories)

    def grade(
        self,
        judge: Any = None,
        grader: Callable[[Any], Any] | None = None,
        rubric: str | None = None,
        *,
        workers: int | None = None,
        timeout: float | None = 300.0,
        progress: bool = True,
        spec: object = None,
        use_privileged: bool = False,
        temperature: float = 0.0,
        policy: RetryPolicy | None = None,
        name: str | None = None,
        version: str | None = None,
        scale: tuple[float, float] | None = None,
        source: str = "grade",
        give_up_after: int | None = 5,
    ) -> Any:
        """Grade the run.

        - ``judge=`` a model spec (``"openai:<model>"``, ``zps.local_model(...)``): the LLM
          judge grades this run's rows in place (``judge.llm_judge.grade``); returns its report.
        - ``judge=`` a callable: grade copies with ``judge.judging.run_judge``; returns a
          ``ScoredData`` and leaves this run untouched.
        - ``grader=``: grade this run's rows in place; returns the judge report.
        - neither: the LLM judge (``judge.llm_judge.grade``) with ``rubric`` (or the spec's).

        Args:
            judge: a judge model spec or a judge callable (see above).
            grader: a judge callable whose verdicts are written into this run's rows.
            rubric: the LLM judge's rubric (text or path); default: the run's spec's.
            workers: parallel judge calls; None: 8 for a judge model, 1 for a callable.
            timeout: seconds per judge call; None waits.
            progress: the ``grade: done/total`` line on stderr on a terminal.
            spec: the LLM judge's spec folder (judge models only).
            use_privileged: let the LLM judge read the privileged block (judge models only).
            temperature: the judge model's sampling temperature (judge models only).
            policy: the judge model's retry policy (judge models only).
            name: the callable judge's name on each row (callables only).
            version: the callable judge's version on each row (callables only).
            scale: a callable judge's rating scale ``(low, high)``, mapped to [0, 1].
            source: the ``judge_source`` stamped on each row (callables only).
            give_up_after: stop calling a callable judge after this many failures in a row.

        Raises:
            ConfigError: both ``judge`` and ``grader``, or an option of the other kind of judge.
            JudgeError: no judge given and no LLM judge is available.
        """
        if judge is not None and grader is not None:
            raise ConfigError("pass judge= (graded copies) or grader= (in place), not both")
        common: dict[str, Any] = {"timeout": timeout, "progress": progress}
        if workers is not None:
            common["workers"] = workers
        for_model = {"spec": spec, "use_privileged": use_privileged,
                     "temperature": temperature, "policy": policy}
        for_callable = {"name": name, "version": version, "scale": scale, "source": source,
                        "give_up_after": give_up_after}
        callable_judge = judge if judge is not None and not _is_model_spec(judge) else grader
        if callable_judge is None:  # a judge model: given, configured, or the spec's
            _refuse_options(for_callable, "a callable judge (judge=callable or grader=)")
            try:
                llm = importlib.import_module("whileai.simulations.judge.llm_judge")
            except ImportError as exc:
                raise JudgeError(
                    "no judge given and the LLM judge is unavailable: pass judge=callable "
                    "(row -> {'reward': 0 or 1}) or grader=callable"
                ) from exc
            chosen = rubric if rubric is not None else self.rubric
            report = llm.grade(self, judge=judge, rubric=chosen or None, **common, **for_model)
            self._rows = None  # graded in place: rebuild the export view
            return report
        _refuse_options(for_model, "a judge model (judge='openai:...' or a configured judge)")
        judging = importlib.import_module("whileai.simulations.judge.judging")
        scored = judging.run_judge(self.trajectories, callable_judge, **common, **for_callable)
        if judge is not None:
            return scored
        for row, graded in zip(self.trajectories, scored.rows, strict=True):
            row.update(graded)
        self._rows = None

        return {"rows": len(self.trajectories), "judge_name": scored.judge_name,
                "judge_status": status_counts(self.trajectories)}


def _refuse_options(given: dict[str, Any], whose: str) -> None:
    """Raise when an option of the other kind of judge was set (it would be silently ignored)."""
    defaults = {n: p.default for n, p in inspect.signature(SimulationData.grade).parameters.items()}
    changed = sorted(n for n, value in given.items() if value != defaults[n])
    if changed:
        raise ConfigError(f"grade(): {', '.join(f'{n}=' for n in changed)} only applies to {whose}")
