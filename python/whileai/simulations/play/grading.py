"""The grading flags of ``simulate``: ``llm_grade=True`` and the legacy ``grade=True``.

``grade=True`` grades each row as it lands with the deterministic ``task_checklist`` (the
conduct gate times the cell's outcome checks), exactly as ``grader=`` would, and the run's
report warns that the flag is legacy. ``llm_grade=True`` asks a judge model for an
``llm_reward`` on every finished row: the configured judge (``whileai.configure(judge=...)`` or
``WHILEAI_JUDGE``), else with only ``OPENAI_API_KEY`` set the OpenAI model
``DEFAULT_OPENAI_JUDGE``; ``llm_grade="<judge spec>"`` names one explicitly. The judge is found
before the run starts.

>>> checklist_grader({"prompt": "hi", "steps": [], "final_text": "hello"})["reward"]
1.0
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.export.checklist import task_checklist
from whileai.simulations.judge.llm_judge import LLMJudge, llm_grade_rows, resolve_judge
from whileai.simulations.models.resolve import resolve_spec
from whileai.simulations.models.spec import ModelSpec

__all__ = [
    "DEFAULT_OPENAI_JUDGE",
    "GRADE_WARNING",
    "LLMGrader",
    "checklist_grader",
    "llm_grade",
    "llm_grader",
    "llm_judge_spec",
    "require_judge",
]

GRADE_WARNING = ("grade=True is legacy: rows got the deterministic task_checklist reward; pass "
                 "grader=zps.task_checklist (same result) or grade later with data.grade(...)")


def checklist_grader(row: Mapping[str, Any]) -> dict[str, Any]:
    """``grade=True``'s grader: ``task_checklist`` of the row (reward and markers)."""
    result = task_checklist(dict(row))
    return {"reward": result["reward"], "markers": result["markers"]}


checklist_grader.cpu_bound = True  # type: ignore[attr-defined]  # see run.engine.rollout_threads


DEFAULT_OPENAI_JUDGE = "gpt-4.1-mini"
_LOOKED_AT = ("llm_grade='<judge spec>', whileai.configure(judge=...), WHILEAI_JUDGE, "
              "OPENAI_API_KEY")


def llm_judge_spec(value: object = True) -> object:
    """The judge ``llm_grade=`` asks: an explicit spec, else the configured judge
    (``whileai.configure(judge=...)``, ``WHILEAI_JUDGE``), else, when ``OPENAI_API_KEY`` is set,
    ``openai:`` + ``DEFAULT_OPENAI_JUDGE``.

    Raises:
        ConfigError: none of them is set (the message lists every place looked at) or the
            value is neither ``True`` nor a judge spec.

    >>> llm_judge_spec("vllm:judge@http://127.0.0.1:9/v1")
    'vllm:judge@http://127.0.0.1:9/v1'
    """
    if value is not True:
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, LLMJudge | ModelSpec):
            return value
        raise ConfigError(f"llm_grade must be True or a judge spec such as "
                          f"'openai:{DEFAULT_OPENAI_JUDGE}', got {type(value).__name__}")
    if resolve_spec("judge", None) is not None:
        return None  # resolve_judge(None) finds the configured one
    if os.environ.get("OPENAI_API_KEY"):
        return f"openai:{DEFAULT_OPENAI_JUDGE}"
    raise ConfigError(
        "llm_grade=True needs a judge model and found none; looked at "
        f"{_LOOKED_AT} (all unset). Set one: WHILEAI_JUDGE='openai:{DEFAULT_OPENAI_JUDGE}' "
        "with OPENAI_API_KEY, a local OpenAI-compatible server as "
        "WHILEAI_JUDGE='vllm:<model>@http://127.0.0.1:8000/v1', or OPENAI_API_KEY alone "
        f"(judge {DEFAULT_OPENAI_JUDGE})"
    )


def require_judge(value: object = True) -> None:
    """Raise before the run when ``llm_grade=`` has no judge model to ask.

    Raises:
        ConfigError: no judge found (the message names every setting looked at).
    """
    llm_judge_spec(value)


def llm_grade(rows: list[dict[str, Any]], value: object = True) -> dict[str, Any]:
    """Add ``llm_reward`` to every row with the ``llm_grade=`` judge; return its counts."""
    report: dict[str, Any] = llm_grade_rows(rows, judge=llm_judge_spec(value))
    return report


class LLMGrader:
    """``llm_grade=True`` inside the run: each row gets ``llm_reward`` before it is written.

    Grading as rows land (instead of after the run) lets the output file stay append-only:
    a row is written once, already graded. ``report()`` gives the counts ``llm_grade`` gave.
    """

    def __init__(self, value: object = True) -> None:
        spec = llm_judge_spec(value)  # raises, naming every setting looked at
        self.owned = not isinstance(spec, LLMJudge)
        self.judge: Any = spec if isinstance(spec, LLMJudge) else resolve_judge(spec)
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
        """Close the judge's connection (unless the caller passed the judge in)."""
        if self.owned:
            self.judge.close()


def llm_grader(value: object = True) -> LLMGrader:
    """The in-run grader for ``llm_grade=`` (raises ``ConfigError`` with no judge)."""
    return LLMGrader(value)
