"""Curriculum: order graded tasks easy to hard, retire the solved, hold back the not-ready.

A task's difficulty is its pass rate over its rollouts. ``solved`` and above is *retired* (an
all-pass task carries no gradient), ``floor`` and below is *not ready* (no signal until the policy
improves), everything between is *trainable*, ordered easy to hard and cut into ``tiers``.

>>> rows = [{"task_id": t, "reward": r} for t, rs in {"a": [1, 1], "b": [1, 0], "c": [0, 0]}.items()
...         for r in rs]
>>> cur = curriculum(rows)
>>> cur["schedule"], cur["retired"], cur["not_ready"]
(['b'], ['a'], ['c'])
"""

from __future__ import annotations

from typing import Any

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows, task_key
from whileai.simulations.measure.passat import group_outcomes

__all__ = ["curriculum", "format_curriculum", "retire_solved"]


def _check(solved: float, floor: float, tiers: int) -> None:
    if not 0.0 <= floor < solved <= 1.0:
        raise ConfigError(f"need 0 <= floor < solved <= 1, got floor={floor}, solved={solved}")
    if isinstance(tiers, bool) or not isinstance(tiers, int) or tiers < 1:
        raise ConfigError(f"tiers must be an int >= 1, got {tiers!r}")


@valid_kwargs
def curriculum(
    rows: Any,
    *,
    solved: float = 0.9,
    floor: float = 0.0,
    tiers: int = 3,
    band: tuple[float, float] = (0.2, 0.8),
    threshold: float = 0.5,
) -> dict[str, Any]:
    """Split graded tasks into trainable (easy -> hard, in tiers), retired and not ready.

    Returns a dict with ``schedule`` (trainable task ids, easy to hard), ``tiers`` (lists of
    ids), ``retired``, ``not_ready``, ``pass_rates``, ``in_band`` (trainable tasks inside
    ``band``) and ``notes`` (unjudged or task-less rows).
    """
    _check(solved, floor, tiers)
    groups, _, skipped = group_outcomes(as_rows(rows), threshold=threshold)
    rates = {key: sum(v) / len(v) for key, v in groups.items()}
    retired = sorted(k for k, r in rates.items() if r >= solved)
    not_ready = sorted(k for k, r in rates.items() if r <= floor)
    trainable = sorted(
        (k for k, r in rates.items() if floor < r < solved), key=lambda k: (-rates[k], k)
    )
    size = -(-len(trainable) // tiers) if trainable else 0
    cut = [trainable[i : i + size] for i in range(0, len(trainable), size)] if size else []
    notes = [f"{n} {why} rows left out" for why, n in skipped.items() if n and why != "bool"]
    return {
        "schedule": trainable,
        "tiers": cut,
        "retired": retired,
        "not_ready": not_ready,
        "pass_rates": rates,
        "in_band": sum(1 for k in trainable if band[0] <= rates[k] <= band[1]),
        "n_tasks": len(rates),
        "solved": solved,
        "floor": floor,
        "notes": notes,
    }


def format_curriculum(report: dict[str, Any]) -> str:
    """A few lines: counts, then each tier's pass-rate range.

    >>> print(format_curriculum(curriculum([{"task_id": "a", "reward": 1}])).splitlines()[0])
    1 tasks: 0 trainable (0 in band), 1 retired (>= 0.9), 0 not ready (<= 0.0)
    """
    lines = [
        f"{report['n_tasks']} tasks: {len(report['schedule'])} trainable "
        f"({report['in_band']} in band), {len(report['retired'])} retired "
        f"(>= {report['solved']}), {len(report['not_ready'])} not ready (<= {report['floor']})"
    ]
    rates = report["pass_rates"]
    for i, tier in enumerate(report["tiers"], 1):
        hi, lo = rates[tier[0]], rates[tier[-1]]
        lines.append(f"  tier {i}: {len(tier)} tasks, pass rate {hi:.2f} -> {lo:.2f}")
    lines += [f"  note: {n}" for n in report["notes"]]
    return "\n".join(lines)


@valid_kwargs
def retire_solved(
    rows: Any, *, solved: float = 0.9, threshold: float = 0.5
) -> list[dict[str, Any]]:
    """The rows of every task not yet solved (rows of unjudged tasks are kept).

    >>> len(retire_solved([{"task_id": "a", "reward": 1}, {"task_id": "b", "reward": 0}]))
    1
    """
    if not 0.0 < solved <= 1.0:
        raise ConfigError(f"solved must be in (0, 1], got {solved!r}")
    row_list = as_rows(rows)
    groups, _, _ = group_outcomes(row_list, threshold=threshold)
    done = {k for k, v in groups.items() if sum(v) / len(v) >= solved}
    return [row for row in row_list if task_key(row) not in done]
