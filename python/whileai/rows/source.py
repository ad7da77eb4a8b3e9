"""Reading graded rows for the scoring reports: where rows come from, their task, their reward.

Every report accepts a list of row dicts, a ``SimulationData`` / ``ScoredData`` (anything with
``trajectories`` or ``rows``), or a JSONL path. Rewards are read strictly: a number in [0, 1] is
used; ``None`` is unjudged; a bool is read as 0/1 and counted; NaN, strings and values outside
[0, 1] are invalid and counted, never scored.

>>> read_reward({"reward": 1})
(1.0, 'ok')
>>> read_reward({"reward": float("nan")})
(None, 'invalid')
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Real
from os import PathLike
from typing import Any

from whileai.errors import RowError
from whileai.rows.jsonl import load_rows
from whileai.rows.outbound import task_key as shared_task_key

__all__ = ["as_rows", "read_reward", "task_key"]


def task_key(row: dict[str, Any]) -> str | None:
    """Return the row's task: ``scenario_id``, else ``task_id``, else ``prompt`` (or None).

    >>> task_key({"task_id": "t1", "prompt": "hi"})
    't1'
    """
    try:
        return shared_task_key(row)
    except RowError:
        return None


def as_rows(source: Any, *, what: str = "rows") -> list[dict[str, Any]]:
    """Return the row dicts behind ``source`` (a list, a run object, or a JSONL path).

    Raises:
        RowError: an item is not a dict (the index is named).
        TypeError: ``source`` is none of the accepted shapes.

    >>> as_rows([{"prompt": "a"}])
    [{'prompt': 'a'}]
    """
    if isinstance(source, (str, PathLike)):
        return list(load_rows(source))
    for attr in ("trajectories", "rows"):
        inner = getattr(source, attr, None)
        if inner is not None and not isinstance(source, dict):
            if callable(inner):
                inner = inner()
            return as_rows(inner, what=what)
    if isinstance(source, dict) or not isinstance(source, Iterable):
        raise TypeError(
            f"{what} must be a list of row dicts, a run (SimulationData/ScoredData) or a JSONL "
            f"path, got {type(source).__name__}"
        )
    rows = list(source)
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise RowError(f"{what}[{i}] is a {type(row).__name__}, not a row dict")
    return rows


def read_reward(row: dict[str, Any], field: str = "reward") -> tuple[float | None, str]:
    """Return ``(reward, how)``: how is ``ok``, ``bool``, ``unjudged`` or ``invalid``.

    >>> read_reward({"reward": True})
    (1.0, 'bool')
    >>> read_reward({"reward": 3})
    (None, 'invalid')
    """
    value = row.get(field)
    if value is None:
        return None, "unjudged"
    if isinstance(value, bool):
        return float(value), "bool"
    if not isinstance(value, Real):
        return None, "invalid"
    reward = float(value)
    if not math.isfinite(reward) or not 0.0 <= reward <= 1.0:
        return None, "invalid"
    return reward, "ok"
