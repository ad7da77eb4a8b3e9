"""The grading flags of ``simulate``: ``llm_grade=True`` and the legacy ``grade=True``.

``grade=True`` grades each row as it lands with the deterministic ``task_checklist`` (the
conduct gate times the cell's outcome checks), exactly as ``grader=`` would, and the run's
report warns that the flag is legacy. ``llm_grade=True`` asks the configured judge model
(``whileai.configure(judge=...)`` or ``WHILEAI_JUDGE``) for an ``llm_reward`` on every finished
row; the judge is checked before the run starts.

>>> checklist_grader({"prompt": "hi", "steps": [], "final_text": "hello"})["reward"]
1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.export.checklist import task_checklist
from whileai.simulations.judge.llm_judge import llm_grade_rows
from whileai.simulations.models.resolve import resolve_spec

__all__ = ["GRADE_WARNING", "checklist_grader", "llm_grade", "llm_grader", "require_judge"]

GRADE_WARNING = ("grade=True is legacy: rows got the deterministic task_checklist reward; pass "
                 "grader=zps.task_checklist (same result) or grade later with data.grade(...)")


def checklist_grader(row: Mapping[str, Any]) -> dict[str, Any]:
    """``grade=True``'s grader: ``task_checklist`` of the row (reward and markers)."""
    result = task_checklist(dict(row))
    return {"reward": result["reward"], "markers": result["markers"]}


checklist_grader.cpu_bound = True  # type: ignore[attr-defined]  # see run.engine.rollout_threads


def require_judge() -> None:
    """Raise before the run when ``llm_grade=True`` has no judge model to ask.

    Raises:
        ConfigError: no judge configured (the message names ``WHILEAI_JUDGE``).
    """
    if resolve_spec("judge", None) is None:
        raise ConfigError(
            "llm_grade=True needs a judge model and none is configured: set WHILEAI_JUDGE "
            "(e.g. 'openai:gpt-4.1-mini') or call whileai.configure(judge=...)"
        )


def llm_grade(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Add ``llm_reward`` to every row with the configured judge; return its counts."""
    report: dict[str, Any] = llm_grade_rows(rows, judge=None)
    return report


class LLMGrader:
    """``llm_grade=True`` inside the run: each row gets ``llm_reward`` before it is written.

    Grading as rows land (instead of after the run) lets the output file stay append-only:
    a row is written once, already graded. ``report()`` gives the counts ``llm_grade`` gave.
    """

    def __init__(self) -> None:
        from whileai.simulations.judge.llm_judge import resolve_judge

        self.judge: Any = resolve_judge(None)
        if self.judge is None:
            raise ConfigError("llm_grade=True needs a judge model: set WHILEAI_JUDGE or "
                              "whileai.configure(judge=...)")

    def __call__(self, row: dict[str, Any]) -> None:
        llm_grade_rows([row], judge=self.judge)

    def report(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """``{"judge", "version", "graded", "failed"}`` over the rows the run kept."""
        failed = sum(1 for r in rows if "llm_reward" in r and r["llm_reward"] is None)
        graded = sum(1 for r in rows if r.get("llm_reward") is not None)
        return {"judge": self.judge.model, "version": self.judge.version, "graded": graded,
                "failed": failed}

    def close(self) -> None:
        """Close the judge's connection."""
        self.judge.close()


def llm_grader() -> LLMGrader:
    """The in-run grader for ``llm_grade=True`` (raises ``ConfigError`` with no judge)."""
    return LLMGrader()
