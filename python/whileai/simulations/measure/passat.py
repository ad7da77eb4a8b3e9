"""pass@1, pass^k and pass@k over graded rows, with bootstrap intervals.

Rows are grouped into tasks by ``task_key`` (``scenario_id``, else ``task_id``, else ``prompt``).
A rollout passes when its reward is at least ``threshold`` (0.5: partial credit splits there).
pass@1 is the mean over tasks of each task's pass rate; pass^k and pass@k are the means over
tasks of the unbiased per-task estimates ``C(c, k) / C(n, k)`` and ``1 - C(n - c, k) / C(n, k)``
where ``n`` is the task's judged rollouts, ``c`` its passes, and ``k`` the smallest group.

>>> rows = [{"task_id": "a", "reward": r} for r in (1, 1, 0, 0)]
>>> pass_at(rows, n_resamples=50).pass_at_1
0.5
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.kwcheck import valid_kwargs
from whileai.simulations.measure.stats import DEFAULT_RESAMPLES, bootstrap_ci, mean
from whileai.simulations.rowsource import as_rows, read_reward, task_key

__all__ = [
    "MIN_K",
    "PassAt",
    "group_outcomes",
    "pass_at",
    "pass_at_k_estimate",
    "pass_pow_k_estimate",
]

MIN_K = 4  # below this many repeats the k-way numbers are too noisy to print
MIN_GROUPS_FOR_CI = 3


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: the chance that k of its n rollouts include a pass.

    >>> round(pass_at_k_estimate(10, 3, 5), 7)
    0.9166667
    """
    _check_nck(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_pow_k_estimate(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: the chance that k of its n rollouts all pass.

    >>> pass_pow_k_estimate(8, 6, 4) == 15 / 70
    True
    """
    _check_nck(n, c, k)
    return comb(c, k) / comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ConfigError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


@dataclass(frozen=True, slots=True, kw_only=True)
class PassAt:
    """pass@1 / pass^k / pass@k off the same groups; prints as one line."""

    pass_at_1: float | None
    pass_pow_k: float | None
    pass_at_k: float | None
    k: int | None
    headroom: float | None
    ci95: tuple[float, float] | None
    pass_pow_k_ci95: tuple[float, float] | None
    pass_at_k_ci95: tuple[float, float] | None
    per_task: dict[str, float] = field(default_factory=dict)
    n_groups: int = 0
    n_rows: int = 0
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        """The one-line summary, for example ``pass@1 0.61 | pass^8 0.32 | ...``."""

        def fmt(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.2f}"

        kk = "k" if self.k is None or self.pass_at_k is None else str(self.k)
        line = (
            f"pass@1 {fmt(self.pass_at_1)} | pass^{kk} {fmt(self.pass_pow_k)} | "
            f"pass@{kk} {fmt(self.pass_at_k)} | headroom {fmt(self.headroom)} "
            f"({self.n_groups} groups, k={self.k if self.k is not None else 0})"
        )
        return line

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"PassAt({self.summary()})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of every field."""
        return {
            "pass_at_1": self.pass_at_1,
            "pass_pow_k": self.pass_pow_k,
            "pass_at_k": self.pass_at_k,
            "k": self.k,
            "headroom": self.headroom,
            "ci95": self.ci95,
            "pass_pow_k_ci95": self.pass_pow_k_ci95,
            "pass_at_k_ci95": self.pass_at_k_ci95,
            "per_task": dict(self.per_task),
            "n_groups": self.n_groups,
            "n_rows": self.n_rows,
            "notes": list(self.notes),
        }


def group_outcomes(
    rows: list[dict[str, Any]], *, threshold: float = 0.5
) -> tuple[dict[str, list[int]], dict[str, str], dict[str, int]]:
    """Group judged rows by task; return (task -> 0/1 outcomes, task -> prompt, skipped counts).

    >>> groups, _, skipped = group_outcomes([{"prompt": "p", "reward": 1}, {"prompt": "p"}])
    >>> groups, skipped["unjudged"]
    ({'p': [1]}, 1)
    """
    groups: dict[str, list[int]] = {}
    prompts: dict[str, str] = {}
    skipped = {"unjudged": 0, "invalid": 0, "bool": 0, "no_task": 0}
    for row in rows:
        reward, how = read_reward(row)
        if reward is None:
            skipped[how] += 1
            continue
        if how == "bool":
            skipped["bool"] += 1
        key = task_key(row)
        if key is None:
            skipped["no_task"] += 1
            continue
        groups.setdefault(key, []).append(1 if reward >= threshold else 0)
        prompt = row.get("prompt")
        prompts.setdefault(key, prompt if isinstance(prompt, str) and prompt else key)
    return groups, prompts, skipped


def _skip_notes(skipped: dict[str, int]) -> list[str]:
    notes = []
    if skipped["unjudged"]:
        notes.append(f"{skipped['unjudged']} unjudged rows (reward None) excluded")
    if skipped["invalid"]:
        notes.append(
            f"{skipped['invalid']} rows with an invalid reward (NaN, non-number or outside "
            "[0, 1]) excluded; re-run the judge or pass scale= to run_judge"
        )
    if skipped["bool"]:
        notes.append(f"{skipped['bool']} rows had a bool reward, read as 0/1")
    if skipped["no_task"]:
        notes.append(
            f"{skipped['no_task']} rows have no scenario_id, task_id or prompt and were excluded"
        )
    return notes


@valid_kwargs
def pass_at(
    rows: Any,
    *,
    threshold: float = 0.5,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PassAt:
    """Return pass@1, pass^k and pass@k (with intervals) for graded rows.

    Args:
        rows: graded rows, a run object, or a JSONL path.
        threshold: reward at or above which a rollout passes.
        n_resamples: bootstrap replicates for the intervals (``resample`` kernel).
        seed: the bootstrap's seed.

    Unjudged, invalid and task-less rows are excluded and counted in ``notes``; an empty input
    gives a ``PassAt`` of ``None`` numbers with a note, not an error.

    >>> rows = [{"task_id": t, "reward": r} for t in "abc" for r in (1, 0, 1, 1)]
    >>> print(pass_at(rows, n_resamples=100))
    pass@1 0.75 | pass^4 0.00 | pass@4 1.00 | headroom 0.25 (3 groups, k=4)
    """
    row_list = as_rows(rows)
    groups, prompts, skipped = group_outcomes(row_list, threshold=threshold)
    notes = _skip_notes(skipped)
    n_rows = sum(len(v) for v in groups.values())
    if not groups:
        notes.append("no judged rows: nothing to measure")
        return PassAt(
            pass_at_1=None, pass_pow_k=None, pass_at_k=None, k=None, headroom=None, ci95=None,
            pass_pow_k_ci95=None, pass_at_k_ci95=None, per_task={}, n_groups=0, n_rows=0,
            notes=tuple(notes),
        )
    keys = list(groups)
    rates = [sum(groups[key]) / len(groups[key]) for key in keys]
    per_task: dict[str, float] = {}
    for key, rate in zip(keys, rates, strict=True):
        label = prompts[key]
        if label in per_task:
            label = f"{label} [{key}]"
        per_task[label] = rate
    p1 = mean(rates)
    ci = bootstrap_ci(rates, n_resamples=n_resamples, seed=seed)
    if ci is None:
        notes.append("one task only: no interval on pass@1")
    k = min(len(v) for v in groups.values())
    pow_k = at_k = headroom = None
    pow_ci = at_ci = None
    if k < MIN_K:
        notes.append(
            f"smallest group has {k} repeats: pass^k and pass@k need {MIN_K}+ repeats per task"
        )
    else:
        pows = [pass_pow_k_estimate(len(groups[t]), sum(groups[t]), k) for t in keys]
        ats = [pass_at_k_estimate(len(groups[t]), sum(groups[t]), k) for t in keys]
        pow_k, at_k = mean(pows), mean(ats)
        headroom = at_k - p1
        if len(keys) >= MIN_GROUPS_FOR_CI:
            pow_ci = bootstrap_ci(pows, n_resamples=n_resamples, seed=seed + 1)
            at_ci = bootstrap_ci(ats, n_resamples=n_resamples, seed=seed + 2)
        else:
            notes.append(f"{len(keys)} groups: k-way intervals need {MIN_GROUPS_FOR_CI}+")
    return PassAt(
        pass_at_1=p1, pass_pow_k=pow_k, pass_at_k=at_k, k=k, headroom=headroom, ci95=ci,
        pass_pow_k_ci95=pow_ci, pass_at_k_ci95=at_ci, per_task=per_task, n_groups=len(keys),
        n_rows=n_rows, notes=tuple(notes),
    )
