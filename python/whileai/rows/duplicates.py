"""Duplicate rollouts: the same row appended twice (a re-run, two processes, ``cat``).

A rollout is identified by ``(scenario_dimensions.seed, scenario_id, rollout_index)``; rows
that lack a ``scenario_id`` or an integer ``rollout_index`` are not rollouts of a run and are
never counted as duplicates. Readers that compute statistics (``report``, ``scan``, exports)
keep the first copy of each rollout and say how many they dropped, so a file with every row
twice cannot report pass^16 for a k=8 run.

>>> rows = [{"scenario_id": "s", "rollout_index": 0}, {"scenario_id": "s", "rollout_index": 0},
...         {"scenario_id": "s", "rollout_index": 1}, {"prompt": "no id"}]
>>> kept, dropped = drop_duplicates(rows)
>>> len(kept), dropped
(3, 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["drop_duplicates", "duplicate_message", "rollout_key"]


def rollout_key(row: Any) -> tuple[object, str, int] | None:
    """``(seed, scenario_id, rollout_index)`` of a rollout row (seed may be None), else None.

    >>> rollout_key({"scenario_id": "s", "rollout_index": 2, "scenario_dimensions": {"seed": 7}})
    (7, 's', 2)
    >>> rollout_key({"prompt": "hi"}) is None
    True
    """
    if not isinstance(row, Mapping):
        return None
    sid, index = row.get("scenario_id"), row.get("rollout_index")
    if not (isinstance(sid, str) and sid) or isinstance(index, bool) or not isinstance(index, int):
        return None
    dims = row.get("scenario_dimensions")
    seed = dims.get("seed") if isinstance(dims, Mapping) else None
    return (seed if isinstance(seed, int) and not isinstance(seed, bool) else None), sid, index


def drop_duplicates(rows: Iterable[Any]) -> tuple[list[Any], int]:
    """``(rows with each rollout once, in first-seen order, number of copies dropped)``."""
    seen: set[tuple[object, str, int]] = set()
    kept: list[Any] = []
    dropped = 0
    for row in rows:
        key = rollout_key(row)
        if key is not None:
            if key in seen:
                dropped += 1
                continue
            seen.add(key)
        kept.append(row)
    return kept, dropped


def duplicate_message(dropped: int, where: str) -> str:
    """The one warning line readers print when they dropped duplicate rollouts.

    >>> duplicate_message(2, "rows.jsonl")  # doctest: +ELLIPSIS
    'rows.jsonl: 2 duplicate row(s) (same seed, scenario_id, rollout_index) counted once...'
    """
    return (f"{where}: {dropped} duplicate row(s) (same seed, scenario_id, rollout_index) "
            "counted once; the file was probably appended to twice (a re-run or `cat`)")
