"""Stage lineage: which pipeline stage a row fed (``sft``, ``rm``, ``rl``, ``eval``, ``mid``).

``stamp_stage(rows, "sft")`` records it in ``row["lineage"]["stages"]``; ``stage_report(rows)``
counts rows per stage and flags any task used both in ``eval`` and in a training stage.

>>> rows = stamp_stage([{"task_id": "t1"}], "sft") + stamp_stage([{"task_id": "t1"}], "eval")
>>> stage_report(rows)["eval_and_train"]
['t1']
"""

from __future__ import annotations

from typing import Any

from whileai.errors import ConfigError
from whileai.rows.source import as_rows, task_key

__all__ = ["STAGES", "TRAINING_STAGES", "stage_of", "stage_report", "stamp_stage"]

STAGES = ("sft", "rm", "rl", "eval", "mid")
TRAINING_STAGES = ("sft", "rm", "rl", "mid")


def stamp_stage(rows: Any, stage: str) -> list[dict[str, Any]]:
    """Copies of ``rows`` with ``stage`` appended to ``lineage.stages`` (once).

    Raises:
        ConfigError: ``stage`` is not one of ``STAGES``.
    """
    if stage not in STAGES:
        raise ConfigError(f"stage must be one of {list(STAGES)}, got {stage!r}")
    out = []
    for row in as_rows(rows):
        copy = dict(row)
        lineage = dict(copy.get("lineage") or {})
        stages = [s for s in lineage.get("stages") or [] if s != stage]
        lineage["stages"] = [*stages, stage]
        copy["lineage"] = lineage
        out.append(copy)
    return out


def stage_of(row: dict[str, Any]) -> str | None:
    """The latest stage a row was stamped with, or None.

    >>> stage_of({"lineage": {"stages": ["sft", "rl"]}}), stage_of({})
    ('rl', None)
    """
    stages = (row.get("lineage") or {}).get("stages") or []
    return str(stages[-1]) if stages else None


def stage_report(rows: Any) -> dict[str, Any]:
    """Rows per stage, unstamped rows, and tasks used both in eval and in training."""
    counts = dict.fromkeys(STAGES, 0)
    unstaged = unknown = 0
    eval_tasks: set[str] = set()
    train_tasks: set[str] = set()
    for row in as_rows(rows):
        stages = (row.get("lineage") or {}).get("stages") or []
        if not stages:
            unstaged += 1
            continue
        key = task_key(row)
        for stage in set(stages):
            if stage not in counts:
                unknown += 1
                continue
            counts[stage] += 1
            if key is not None:
                (eval_tasks if stage == "eval" else train_tasks).add(key)
    both = sorted(eval_tasks & train_tasks)
    warnings = []
    if both:
        warnings.append(
            f"{len(both)} tasks are in eval and in a training stage: the eval measures "
            "memorisation of them; drop them from one side"
        )
    return {
        "counts": counts,
        "unstaged": unstaged,
        "unknown_stage": unknown,
        "eval_and_train": both,
        "ok": not both,
        "warnings": warnings,
    }
