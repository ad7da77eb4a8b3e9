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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError, JudgeError
from whileai.simulations.io import write_jsonl
from whileai.simulations.rows import export_row

__all__ = ["ExportRows", "SimulationData"]


def _is_model_spec(value: object) -> bool:
    from whileai.simulations.generate.agents import is_model_spec

    return is_model_spec(value)


class ExportRows(list[dict[str, Any]]):
    """The exported rows: a list that can also be called (``data.rows()``)."""

    def __call__(self) -> ExportRows:
        return self


class SimulationData:
    """The result of ``simulate``: rows, the run's report, and why it stopped."""

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

    def save(self, path: str | Path) -> Path:
        """Write the exported rows to a JSONL file (atomically); return the path."""
        target = Path(path)
        write_jsonl(target, self.rows)
        return target

    def push(
        self, name: str, *, parent: str | None = None, holdout: float | None = None,
        purpose: str | None = None, agent: str | None = None, publish: bool | str = False,
        gate: bool = True, endorsed: Sequence[str] = (), strict_hacks: bool = False,
        description: str | None = None, api_key: str | None = None,
    ) -> dict[str, Any]:
        """Gate and push the exported rows to the platform; return the dataset entry.

        ``parent`` records lineage; ``holdout`` splits off that fraction of tasks and pushes it
        as a linked holdout set; ``publish`` (True, or an agent name) publishes the train set;
        the gate is on by default and a refusal raises ``PublishGateError`` with nothing sent.
        See ``whileai.platform.push.push_run``.
        """
        from whileai.platform.push import push_run

        return push_run(self, name, parent=parent, holdout=holdout, purpose=purpose, agent=agent,
                        publish=publish, gate=gate, endorsed=endorsed, strict_hacks=strict_hacks,
                        description=description, api_key=api_key)

    @property
    def pass_at(self) -> Any:
        """pass@1, pass^k and pass@k of the graded trajectories (``measure.passat.pass_at``)."""
        from whileai.simulations.measure.passat import pass_at

        return pass_at(self.trajectories)

    def grade(
        self,
        judge: Any = None,
        grader: Callable[[Any], Any] | None = None,
        rubric: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Grade the run.

        - ``judge=`` a model spec (``"openai:<model>"``, ``zps.local_model(...)``): the LLM
          judge grades this run's rows in place (``judge.llm_judge.grade``); returns its report.
        - ``judge=`` a callable: grade copies with ``judge.judging.run_judge``; returns a
          ``ScoredData`` and leaves this run untouched.
        - ``grader=``: grade this run's rows in place; returns the judge report.
        - neither: the LLM judge (``judge.llm_judge.grade``) with ``rubric`` (or the spec's).

        Raises:
            ConfigError: both ``judge`` and ``grader``.
            JudgeError: no judge given and no LLM judge is available.
        """
        if judge is not None and grader is not None:
            raise ConfigError("pass judge= (graded copies) or grader= (in place), not both")
        judging = importlib.import_module("whileai.simulations.judge.judging")
        if judge is not None and _is_model_spec(judge):  # a judge model: grade in place
            llm = importlib.import_module("whileai.simulations.judge.llm_judge")
            chosen = rubric if rubric is not None else self.rubric
            report = llm.grade(self, judge=judge, rubric=chosen or None,
                               use_privileged=bool(kwargs.pop("use_privileged", False)),
                               **kwargs)
            self._rows = None  # graded in place: rebuild the export view
            return report
        if judge is not None:
            return judging.run_judge(self.trajectories, judge, **kwargs)
        if grader is not None:
            scored = judging.run_judge(self.trajectories, grader, **kwargs)
            for row, graded in zip(self.trajectories, scored.rows, strict=True):
                row.update(graded)
            self._rows = None
            from whileai.simulations.judge.scored import status_counts

            return {"rows": len(self.trajectories), "judge_name": scored.judge_name,
                    "judge_status": status_counts(self.trajectories)}
        try:
            llm = importlib.import_module("whileai.simulations.judge.llm_judge")
        except ImportError as exc:
            raise JudgeError(
                "no judge given and the LLM judge is unavailable: pass judge=callable "
                "(row -> {'reward': 0 or 1}) or grader=callable"
            ) from exc
        chosen = rubric if rubric is not None else self.rubric
        if chosen:
            kwargs["rubric"] = chosen
        report = llm.grade(self, **kwargs)
        self._rows = None  # graded in place: rebuild the export view
        return report
